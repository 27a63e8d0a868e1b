// Cluster admission, the pure part: the challenge-response by which two nodes
// prove to each other that they hold the cluster secret (--cluster-secret-file)
// before either exposes an actor. No sockets, no actors, no clocks of its own;
// the gatekeeper actor (actors/endpoint) and the dialer (common/cluster_link.cpp)
// drive it. HMAC-SHA256 and the random nonces come from OpenSSL's libcrypto.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include <caf/expected.hpp>

namespace aisched::proto::cluster_auth {

/// Shortest accepted secret, in bytes (`openssl rand -hex 32` writes 64).
constexpr size_t min_secret_bytes = 32;
/// Random bytes of each side's nonce; nonces travel as lowercase hex.
constexpr size_t nonce_bytes = 32;

/// Reads the cluster secret from `path`: the file's content without trailing
/// whitespace. Errors (field "cluster-secret-file", the message names the
/// path): the file is missing or unreadable, empty, shorter than
/// min_secret_bytes, or accessible by group or others (it must be chmod 600).
caf::expected<std::string> read_secret_file(const std::string& path);

/// `nonce_bytes` fresh random bytes from OpenSSL's CSPRNG, as hex. Aborts if
/// the generator fails: a predictable nonce would make proofs replayable.
std::string fresh_nonce();

/// Which side of one exchange a proof speaks for. The label is part of the
/// MAC, so a proof made by a server is never accepted as a client's (and the
/// other way round): a peer cannot reflect our own proof back at us.
enum class side : uint8_t { server, client };

/// Everything both proofs of one exchange are computed over. The nonces make
/// each exchange fresh (an old proof does not match a new nonce); the node ids
/// (CAF node ids, as to_string prints them) bind it to the two processes
/// talking; `role` is what the connecting side claims to be ("member:n2",
/// "worker:w1", "inspect").
struct transcript {
  std::string role;
  std::string client_nonce;
  std::string server_nonce;
  std::string client_node;
  std::string server_node;
};

/// HMAC-SHA256(secret, label(who) || length-prefixed fields of `t`), as hex.
std::string proof(const std::string& secret, side who, const transcript& t);

/// Whether `claimed` is proof(secret, who, t); compares in constant time
/// (CRYPTO_memcmp), so timing does not tell how much of a guess was right.
bool verify(const std::string& secret, side who, const transcript& t, const std::string& claimed);

/// Whether `s` is a well-formed nonce (2 * nonce_bytes lowercase hex digits).
bool is_nonce(const std::string& s);

/// The accepting side's half: one pending challenge per connecting actor
/// (`client` names it: node id and actor id), each answerable once and only
/// within `ttl`. Not thread-safe; the gatekeeper actor owns one.
class gate {
 public:
  using clock = std::chrono::steady_clock;

  struct challenge {
    std::string server_nonce;
    std::string server_proof;
  };

  /// `secret` must not be empty. At most `max_pending` challenges wait for
  /// their proof; past that, the oldest is dropped (a flood of challenges
  /// costs memory bounded by it).
  explicit gate(std::string secret, size_t max_pending = 1024,
                std::chrono::milliseconds ttl = std::chrono::seconds(10));

  /// Answers the challenge of `client` (replacing one it left unanswered):
  /// a fresh server nonce and this side's proof. Errors: `client_nonce` is not
  /// a nonce, `role` empty or longer than 128 bytes.
  caf::expected<challenge> issue(const std::string& client, std::string role,
                                 std::string client_nonce, std::string client_node,
                                 std::string server_node, clock::time_point now);

  /// Checks `client`'s proof against its pending challenge and forgets the
  /// challenge either way (a second try, or a replay, finds none). The role
  /// it claimed on success; `unauthenticated` otherwise.
  caf::expected<std::string> accept(const std::string& client, const std::string& client_proof,
                                    clock::time_point now);

  size_t pending() const { return pending_.size(); }

 private:
  struct entry {
    transcript t;
    clock::time_point issued;
    uint64_t seq;
  };
  void evict(clock::time_point now);

  std::string secret_;
  size_t max_pending_;
  std::chrono::milliseconds ttl_;
  uint64_t seq_ = 0;
  std::map<std::string, entry> pending_;
};

}  // namespace aisched::proto::cluster_auth
