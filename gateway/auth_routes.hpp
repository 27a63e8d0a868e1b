// REST routes of authentication and its administration: POST /api/v1/auth/login,
// GET /api/v1/auth/whoami, /api/v1/users, /api/v1/tokens and GET /api/v1/audit.
// They ask the store actor (reads) and the raft actor (replicated changes);
// password hashing runs in a detached actor (argon2 is deliberately slow).
#pragma once

#include <string>
#include <vector>

#include "gateway/access.hpp"

namespace aisched::gateway {

/// Serves `req` if its path (split in `seg`: "api", "v1", ...) is one of the
/// routes above; the gate (access::admit) has already checked the role.
void auth_routes(access& gate, http_request& req, const std::vector<std::string>& seg,
                 reply_fn& reply);

/// Whether auth_routes() serves paths under /api/v1/<resource>.
bool is_auth_resource(const std::string& resource);

/// With auth on and `admin_password` set: until some user exists, proposes
/// the first user, `admin` of tenant `default` (every node may try; the state
/// machine keeps the first). Retries every second until it is committed.
void bootstrap_admin(const api_context& ctx, std::string admin_password);

}  // namespace aisched::gateway
