// Authentication, the pure parts: signed expiring JWTs (libjwt, HS256),
// argon2id password hashes (libargon2), SHA-256 of API token secrets. No
// actors, no I/O, the clock is a parameter: unit-tested directly. Who may call
// which route is the route table (gateway/route_table.hpp); the gate that
// applies both to each request is gateway/access.hpp.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

#include "gateway/auth_limiter.hpp"
#include "common/principal.hpp"

namespace aisched::gateway {

struct auth_options {
  bool enabled = false;  // off: every request is cluster_admin of tenant "default"
  std::string secret;    // the HS256 key, the same on every node
  std::chrono::seconds token_ttl{3600};
  /// The node's failed-login limits: not an option but state, shared by every
  /// copy of these options (the login route, bootstrap_admin).
  std::shared_ptr<login_guard> logins = std::make_shared<login_guard>();
};

// -- credentials ----------------------------------------------------------------

/// A signed JWT for `u` valid from `now` (unix seconds) for `opts.token_ttl`.
caf::expected<std::string> issue_jwt(const auth_options& opts, const proto::user& u,
                                     int64_t now);

/// The `iss` of every JWT aisched issues; verify_jwt refuses any other.
constexpr std::string_view jwt_issuer = "aisched";

/// How far ahead of `now` a JWT's `nbf` may be: the members' clocks differ.
constexpr std::chrono::seconds jwt_leeway{30};

/// The principal a JWT names, if its HS256 signature is ours, its `iss` is
/// jwt_issuer, it has not expired at `now` (unix seconds) and, when it carries
/// an `nbf`, that is at most jwt_leeway after `now`; unauthenticated otherwise.
caf::expected<principal> verify_jwt(const auth_options& opts, const std::string& token,
                                    int64_t now);

/// An argon2id hash of `password` with a random salt, in the encoded form.
caf::expected<std::string> hash_password(std::string_view password);

/// Whether `password` matches the encoded argon2id hash.
bool verify_password(const std::string& encoded, std::string_view password);

std::string sha256_hex(std::string_view data);

/// API token secrets start with this, so the gate tells them from JWTs.
constexpr std::string_view token_prefix = "ais_";

/// The credential of `Authorization: Bearer <credential>` ("" when absent).
std::string bearer_of(const std::map<std::string, std::string>& headers);

/// Whether a tenant or user name is acceptable: 1-63 of [a-z0-9_.-], starting
/// with a letter or digit (they end up in storage keys and URLs).
bool valid_name(std::string_view s);

}  // namespace aisched::gateway
