// REST routes of authentication and its administration: POST /api/v1/auth/login,
// GET /api/v1/auth/whoami, /api/v1/users, /api/v1/tokens and GET /api/v1/audit.
// They ask the store actor (reads) and the raft actor (replicated changes);
// password hashing runs in a detached actor (argon2 is deliberately slow).
#pragma once

#include <string>

#include "gateway/access.hpp"

namespace aisched::gateway {

// The handlers (gateway/route_table.cpp). User and token routes act on the
// caller's tenant; naming another (body or ?tenant=) is the cluster admin's
// only (403 otherwise), as is `GET /api/v1/audit?scope=cluster`.
void login_route(route_call& c);         // POST /api/v1/auth/login
void whoami(route_call& c);              // GET /api/v1/auth/whoami
void list_users(route_call& c);          // GET /api/v1/users?tenant
void create_user_route(route_call& c);   // POST /api/v1/users {"name","password","role","tenant"}
void delete_user_route(route_call& c);   // DELETE /api/v1/users/{name}?tenant
void list_tokens(route_call& c);         // GET /api/v1/tokens?tenant
void create_token_route(route_call& c);  // POST /api/v1/tokens {"name","role","tenant"}
void revoke_token(route_call& c);        // DELETE /api/v1/tokens/{id}?tenant
void list_audit_route(route_call& c);    // GET /api/v1/audit?limit&cursor&since&tenant&scope

/// With auth on and `admin_password` set: until some user exists, proposes
/// the first user, `admin` of tenant `default` with role cluster_admin (every
/// node may try; the state machine keeps the first). Retries every second
/// until it is committed.
void bootstrap_admin(const api_context& ctx, std::string admin_password);

}  // namespace aisched::gateway
