// Throttling of failed logins. failure_limiter is the pure part: a bounded
// table of recent failures per key (a user name or a source address) with a
// lockout that grows on each repeat; time is a parameter, no locks, no I/O
// (tests/gateway/auth_limiter_test.cpp). login_guard is what the login route
// (gateway/auth_routes.cpp) holds: one limiter per user and one per source
// behind a mutex, and the dummy hash unknown users are verified against.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

namespace aisched::gateway {

/// The limits of a failure_limiter.
struct limiter_options {
  /// Failures allowed within `window`; the attempt after them is refused.
  uint32_t max_failures = 10;
  std::chrono::seconds window{60};
  /// The n-th lockout of a key lasts window * 2^(n-1), at most this long.
  std::chrono::seconds max_lockout{15 * 60};
  /// Keys kept at most: beyond, the one whose protection ends first goes.
  size_t max_keys = 10'000;
};

class failure_limiter {
 public:
  using clock = std::chrono::steady_clock;

  struct verdict {
    bool allowed = true;
    /// When refused: how long until an attempt may go ahead (at least 1 s).
    std::chrono::seconds retry_after{0};
  };

  explicit failure_limiter(limiter_options o = {}) : opts_(o) {}

  /// Whether an attempt under `key` may go ahead at `now`. Refused while the
  /// key is locked out; an attempt that finds `max_failures` within the window
  /// locks the key (for longer each time). Does not count the attempt: see record().
  verdict check(const std::string& key, clock::time_point now);

  /// Counts an attempt under `key` at `now` as a failure, until release() or
  /// reset() takes it back (so parallel attempts cannot slip past the limit).
  void record(const std::string& key, clock::time_point now);

  /// Takes back the latest attempt under `key` (it tested no password).
  void release(const std::string& key);

  /// Forgets `key`: its failures and lockouts (after a successful login).
  void reset(const std::string& key);

  /// Keys tracked now (at most limiter_options::max_keys).
  size_t size() const { return keys_.size(); }

 private:
  struct entry {
    std::deque<clock::time_point> failures;  // within the window, oldest first
    clock::time_point locked_until{};
    uint32_t lockouts = 0;  // lockouts so far, forgiven after a quiet max_lockout
  };

  /// When `e` stops mattering: its failures aged out and its lockout count
  /// is forgiven.
  clock::time_point expiry(const entry& e) const;
  void make_room(clock::time_point now);

  limiter_options opts_;
  std::unordered_map<std::string, entry> keys_;
};

/// The key a client address is limited under: an IPv4 address as it is, an
/// IPv6 address by its /64 (one host usually holds a whole /64, so counting
/// single addresses would let it rotate past the limit); "" stays "".
std::string source_key(const std::string& address);

/// The login route's throttle, shared by every copy of auth_options of a node.
/// Thread-safe.
class login_guard {
 public:
  explicit login_guard(limiter_options o = {}) : users_(o), sources_(o) {}

  struct verdict {
    bool allowed = true;
    std::chrono::seconds retry_after{0};
    const char* by = "";  // "username" or "source": which limit refused
  };

  /// Whether a login of `user` from `source` (a source_key(); "": in-process,
  /// no source limit) may test a password at `now`. An allowed attempt counts as a failure of
  /// both until succeeded() or released().
  verdict begin(const std::string& user, const std::string& source,
                failure_limiter::clock::time_point now);

  /// The attempt succeeded: `user`'s failures are forgotten, and the attempt
  /// no longer counts against `source` (whose earlier failures still do).
  void succeeded(const std::string& user, const std::string& source);

  /// The attempt tested no password (the store did not answer, or the
  /// bootstrap admin is not committed yet): it counts against neither.
  void released(const std::string& user, const std::string& source);

  /// An argon2id hash (of a random password, with the parameters real ones
  /// have) that logins of unknown users are verified against, so they take
  /// as long as those of known users. Made on the first call (~20 ms): call
  /// once at startup. Thread-safe.
  const std::string& dummy_hash();

  /// Set while this node proposes the bootstrap admin: a login of a user not
  /// found then answers 503 and counts as no failure (clients poll it).
  std::atomic<bool> bootstrap_pending{false};

 private:
  std::mutex mtx_;
  failure_limiter users_;
  failure_limiter sources_;
  std::once_flag dummy_once_;
  std::string dummy_;
};

}  // namespace aisched::gateway
