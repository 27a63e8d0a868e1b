// Challenge-response of cluster admission; see cluster_link_auth.hpp.
#include "proto/cluster_link_auth.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include "proto/errors.hpp"
#include "proto/hex.hpp"
#include "proto/private_file.hpp"
#include "proto/invariant.hpp"

namespace aisched::proto::cluster_auth {

namespace {

// A version in the MAC: a later protocol can never accept this one's proofs.
constexpr const char* domain = "aisched cluster admission v1";

/// Appends `s` with its length first, so that no two different transcripts
/// serialize to the same bytes ("ab"+"c" vs "a"+"bc").
void put(std::string& out, const std::string& s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((n >> shift) & 0xff));
  out += s;
}

}  // namespace

caf::expected<std::string> read_secret_file(const std::string& path) {
  auto secret = read_private_file(path, "--cluster-secret-file");
  if (!secret) return secret.error();
  auto fail = [&](const std::string& why) {
    return private_file_error(path, "--cluster-secret-file", why);
  };
  while (!secret->empty() && std::strchr(" \t\r\n", secret->back()) != nullptr) secret->pop_back();
  if (secret->empty())
    return fail("is empty; create it with: openssl rand -hex 32 > '" + path + "' && chmod 600 '" +
                path + "'");
  if (secret->size() < min_secret_bytes)
    return fail("holds " + std::to_string(secret->size()) + " bytes, at least " +
                std::to_string(min_secret_bytes) + " are needed (openssl rand -hex 32)");
  return secret;
}

std::string fresh_nonce() {
  unsigned char buf[nonce_bytes];
  AISCHED_INVARIANT(RAND_bytes(buf, sizeof buf) == 1,
                    "OpenSSL's random generator failed; cannot make a nonce");
  return to_hex(buf, sizeof buf);
}

bool is_nonce(const std::string& s) {
  if (s.size() != 2 * nonce_bytes) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string proof(const std::string& secret, side who, const transcript& t) {
  std::string msg;
  put(msg, domain);
  put(msg, who == side::server ? "server" : "client");
  for (auto* f : {&t.role, &t.client_nonce, &t.server_nonce, &t.client_node, &t.server_node})
    put(msg, *f);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  auto* ok = HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
                  reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), mac, &len);
  AISCHED_INVARIANT(ok != nullptr, "HMAC-SHA256 failed");
  return to_hex(mac, len);
}

bool verify(const std::string& secret, side who, const transcript& t, const std::string& claimed) {
  auto expected = proof(secret, who, t);
  // The length is public (64 hex digits); only the content is compared in constant time.
  return claimed.size() == expected.size() &&
         CRYPTO_memcmp(claimed.data(), expected.data(), expected.size()) == 0;
}

// -- gate ---------------------------------------------------------------------

gate::gate(std::string secret, size_t max_pending, std::chrono::milliseconds ttl)
    : secret_(std::move(secret)), max_pending_(max_pending == 0 ? 1 : max_pending), ttl_(ttl) {
  AISCHED_INVARIANT(!secret_.empty(), "cluster_auth::gate needs a secret");
}

void gate::evict(clock::time_point now) {
  for (auto it = pending_.begin(); it != pending_.end();)
    it = now - it->second.issued > ttl_ ? pending_.erase(it) : std::next(it);
  while (pending_.size() >= max_pending_) {
    auto oldest = pending_.begin();
    for (auto it = pending_.begin(); it != pending_.end(); ++it)
      if (it->second.seq < oldest->second.seq) oldest = it;
    pending_.erase(oldest);
  }
}

caf::expected<gate::challenge> gate::issue(const std::string& client, std::string role,
                                           std::string client_nonce, std::string client_node,
                                           std::string server_node, clock::time_point now) {
  if (!is_nonce(client_nonce))
    return make_error(errc::invalid_argument, "nonce",
                      "the challenge's nonce must be " + std::to_string(2 * nonce_bytes) +
                          " lowercase hex digits");
  if (role.empty() || role.size() > 128)
    return make_error(errc::invalid_argument, "role", "the role must be 1 to 128 bytes");
  pending_.erase(client);
  evict(now);
  entry e{{std::move(role), std::move(client_nonce), fresh_nonce(), std::move(client_node),
           std::move(server_node)},
          now,
          ++seq_};
  challenge out{e.t.server_nonce, proof(secret_, side::server, e.t)};
  pending_.emplace(client, std::move(e));
  return out;
}

caf::expected<std::string> gate::accept(const std::string& client, const std::string& client_proof,
                                        clock::time_point now) {
  auto it = pending_.find(client);
  if (it == pending_.end() || now - it->second.issued > ttl_) {
    if (it != pending_.end()) pending_.erase(it);
    return make_error(errc::unauthenticated, "cluster-secret-file",
                      "no pending cluster challenge for this connection (expired or used)");
  }
  auto e = std::move(it->second);
  pending_.erase(it);  // single use: a replayed or second proof finds nothing
  if (!verify(secret_, side::client, e.t, client_proof))
    return make_error(errc::unauthenticated, "cluster-secret-file",
                      "wrong cluster secret: the proof does not match (is --cluster-secret-file "
                      "the same file on every node?)");
  return e.t.role;
}

}  // namespace aisched::proto::cluster_auth
