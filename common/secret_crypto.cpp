// AES-256-GCM through OpenSSL EVP; see secret_crypto.hpp.
#include "common/secret_crypto.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "proto/errors.hpp"
#include "proto/hex.hpp"
#include "proto/private_file.hpp"
#include "proto/invariant.hpp"

namespace aisched::secret_crypto {

namespace {

constexpr unsigned char format_version = 1;
constexpr size_t nonce_size = 12;
constexpr size_t tag_size = 16;

using ctx_ptr = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

ctx_ptr new_ctx() {
  ctx_ptr c(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  AISCHED_INVARIANT(c, "EVP_CIPHER_CTX_new: out of memory");
  return c;
}

const unsigned char* bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

/// The aad of a wrapped data key: length-prefixed parts, so ("ab","c") and
/// ("a","bc") differ.
std::string wrap_aad(std::string_view tenant, std::string_view key_id) {
  std::string out = "aisched data key v1";
  for (auto part : {tenant, key_id}) {
    out += std::to_string(part.size()) + ":";
    out += part;
  }
  return out;
}

}  // namespace

key random_key() {
  key k;
  AISCHED_INVARIANT(RAND_bytes(k.data(), static_cast<int>(k.size())) == 1,
                    "OpenSSL's random generator failed; cannot make a key");
  return k;
}

caf::expected<key> load_key_file(const std::string& path, std::string_view flag) {
  auto file = proto::read_private_file(path, flag);
  if (!file) return file.error();
  auto fail = [&](const std::string& why) { return proto::private_file_error(path, flag, why); };
  auto& data = *file;
  key k;
  if (data.size() == k.size()) {
    std::memcpy(k.data(), data.data(), k.size());
    return k;
  }
  while (!data.empty() && (data.back() == '\n' || data.back() == '\r')) data.pop_back();
  if (data.size() != 2 * k.size())
    return fail("must hold 64 hex digits (openssl rand -hex 32) or 32 raw bytes, not " +
                std::to_string(data.size()) + " bytes");
  for (size_t i = 0; i < k.size(); ++i) {
    int hi = proto::hex_digit(data[2 * i]), lo = proto::hex_digit(data[2 * i + 1]);
    if (hi < 0 || lo < 0) return fail("not hex at offset " + std::to_string(2 * i));
    k[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return k;
}

std::string key_check(const key& k) {
  static const char label[] = "aisched secrets key check v1";
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), k.data(), static_cast<int>(k.size()),
       reinterpret_cast<const unsigned char*>(label), sizeof label - 1, mac, &n);
  return proto::to_hex(mac, 8);  // the first 8 bytes of the MAC
}

std::string seal(const key& k, std::string_view plain, std::string_view aad) {
  std::string out(1 + nonce_size + plain.size() + tag_size, '\0');
  auto* p = reinterpret_cast<unsigned char*>(out.data());
  p[0] = format_version;
  unsigned char* nonce = p + 1;
  AISCHED_INVARIANT(RAND_bytes(nonce, nonce_size) == 1,
                    "OpenSSL's random generator failed; a reused nonce would break GCM");
  unsigned char* body = nonce + nonce_size;
  auto c = new_ctx();
  int n = 0, total = 0;
  bool ok = EVP_EncryptInit_ex(c.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_SET_IVLEN, nonce_size, nullptr) == 1 &&
            EVP_EncryptInit_ex(c.get(), nullptr, nullptr, k.data(), nonce) == 1 &&
            EVP_EncryptUpdate(c.get(), nullptr, &n, bytes(aad), static_cast<int>(aad.size())) == 1 &&
            EVP_EncryptUpdate(c.get(), body, &n, bytes(plain), static_cast<int>(plain.size())) == 1;
  total = n;
  ok = ok && EVP_EncryptFinal_ex(c.get(), body + total, &n) == 1;
  total += n;
  ok = ok && EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_GET_TAG, tag_size, body + total) == 1;
  // AES-GCM encryption cannot fail on valid arguments; if OpenSSL says it did,
  // nothing sane can be stored.
  AISCHED_INVARIANT(ok && static_cast<size_t>(total) == plain.size(), "AES-GCM encryption failed");
  return out;
}

caf::expected<std::string> open(const key& k, std::string_view sealed, std::string_view aad) {
  auto bad = [](const char* why) { return make_error(errc::invalid_argument, "secret", why); };
  if (sealed.size() < 1 + nonce_size + tag_size) return bad("sealed value too short");
  if (static_cast<unsigned char>(sealed[0]) != format_version)
    return bad("unknown sealed value format");
  auto* nonce = bytes(sealed) + 1;
  auto* body = nonce + nonce_size;
  size_t body_size = sealed.size() - 1 - nonce_size - tag_size;
  std::string out(body_size, '\0');
  auto* dst = reinterpret_cast<unsigned char*>(out.data());
  auto c = new_ctx();
  int n = 0;
  unsigned char tag[tag_size];
  std::memcpy(tag, body + body_size, tag_size);
  bool ok = EVP_DecryptInit_ex(c.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_SET_IVLEN, nonce_size, nullptr) == 1 &&
            EVP_DecryptInit_ex(c.get(), nullptr, nullptr, k.data(), nonce) == 1 &&
            EVP_DecryptUpdate(c.get(), nullptr, &n, bytes(aad), static_cast<int>(aad.size())) == 1 &&
            EVP_DecryptUpdate(c.get(), dst, &n, body, static_cast<int>(body_size)) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_SET_TAG, tag_size, tag) == 1;
  int last = 0;
  if (!ok || EVP_DecryptFinal_ex(c.get(), dst + n, &last) != 1) {
    OPENSSL_cleanse(dst, out.size());
    return bad("does not decrypt: wrong key or altered bytes");
  }
  return out;
}

std::string wrap(const key& kek, const key& data_key, std::string_view tenant,
                 std::string_view key_id) {
  return seal(kek,
              std::string_view(reinterpret_cast<const char*>(data_key.data()), data_key.size()),
              wrap_aad(tenant, key_id));
}

caf::expected<key> unwrap(const key& kek, std::string_view wrapped, std::string_view tenant,
                          std::string_view key_id) {
  auto plain = open(kek, wrapped, wrap_aad(tenant, key_id));
  if (!plain) return plain.error();
  key k;
  if (plain->size() != k.size())
    return make_error(errc::corrupted, "secret", "a wrapped data key has the wrong size");
  std::memcpy(k.data(), plain->data(), k.size());
  OPENSSL_cleanse(plain->data(), plain->size());
  return k;
}

}  // namespace aisched::secret_crypto
