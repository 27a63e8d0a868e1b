// Who may do what: roles, users, API tokens and audit entries. Users and tokens
// live in the replicated state (so a login or a token works on every node and a
// revocation takes effect everywhere); audit entries are replicated too. Only
// hashes are stored: argon2id for passwords, SHA-256 for API token secrets.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "proto/field.hpp"
#include "proto/time.hpp"
#include "proto/types.hpp"

namespace aisched::proto {

/// Ordered: cluster_admin > admin > operator > viewer (compare with <, >=).
/// `admin` administers its own tenant; `cluster_admin` (the bootstrap user)
/// also the group (membership, log level) and other tenants' users. Appended
/// last: stored users and tokens keep their encoded values.
enum class role : uint8_t { viewer, operator_, admin, cluster_admin };
template <> struct enum_names<role> {
  static constexpr std::string_view name = "role";
  static constexpr std::array<std::string_view, 4> value{"viewer", "operator", "admin",
                                                         "cluster_admin"};
};

struct user {
  std::string name;  // unique across tenants: logins name no tenant
  std::string tenant = "default";
  role r = role::viewer;
  std::string password_hash;  // argon2id encoded ("$argon2id$v=19$...")
  unix_ms created_at = 0;
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, user& x) {
  return f(caf::meta::type_name("aisched.user"), field("name"), x.name, field("tenant"), x.tenant,
           field("r"), x.r, field("password_hash"), x.password_hash,
           field("created_at"), x.created_at, keep_unknown(x.unknown));
}

struct api_token {
  std::string id;  // public handle ("tok_..."), for listing and revoking
  std::string name;
  std::string tenant = "default";
  role r = role::viewer;
  std::string hash;  // lower-case hex SHA-256 of the secret ("ais_...")
  std::string created_by;
  unix_ms created_at = 0;
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, api_token& x) {
  return f(caf::meta::type_name("aisched.api_token"), field("id"), x.id, field("name"), x.name,
           field("tenant"), x.tenant, field("r"), x.r, field("hash"), x.hash,
           field("created_by"), x.created_by, field("created_at"), x.created_at,
           keep_unknown(x.unknown));
}

/// One recorded mutation (or login attempt).
struct audit_entry {
  unix_ms at = 0;
  std::string subject;  // user name, "token:<id>", or "anonymous" with auth off
  std::string tenant;
  std::string action;  // "task.create", "worker.drain", "auth.login" ...
  std::string target;  // the object's id or name ("" when none)
  std::string result;  // "ok" or the error code ("forbidden", "not_found" ...)
  std::string via;     // X-Aisched-Via header ("ai-agent"), "" otherwise
  std::string node;    // the gateway that served the request
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, audit_entry& x) {
  return f(caf::meta::type_name("aisched.audit_entry"), field("at"), x.at,
           field("subject"), x.subject, field("tenant"), x.tenant, field("action"), x.action,
           field("target"), x.target, field("result"), x.result, field("via"), x.via,
           field("node"), x.node, keep_unknown(x.unknown));
}

/// The audit log cluster-scoped actions (those named "cluster.*") are also
/// recorded in, besides their actor's tenant's: `audit_query{cluster_audit_log}`
/// lists it. No tenant can have this name (gateway::valid_name refuses '*').
constexpr std::string_view cluster_audit_log = "*cluster";
inline bool is_cluster_action(std::string_view action) {
  return action.substr(0, 8) == "cluster.";
}

/// Newest first. `cursor` is opaque (from a previous page); `since` (0: none)
/// stops the listing at older entries.
struct audit_query {
  std::string tenant;
  std::string cursor;
  uint32_t limit = 50;
  unix_ms since = 0;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, audit_query& x) {
  return f(caf::meta::type_name("aisched.audit_query"), field("tenant"), x.tenant,
           field("cursor"), x.cursor, field("limit"), x.limit, field("since"), x.since);
}

struct audit_page {
  std::vector<audit_entry> items;
  std::string next_cursor;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, audit_page& x) {
  return f(caf::meta::type_name("aisched.audit_page"), field("items"), x.items,
           field("next_cursor"), x.next_cursor);
}

struct user_list {
  std::vector<user> items;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, user_list& x) {
  return f(caf::meta::type_name("aisched.user_list"), field("items"), x.items);
}

struct token_list {
  std::vector<api_token> items;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, token_list& x) {
  return f(caf::meta::type_name("aisched.token_list"), field("items"), x.items);
}

}  // namespace aisched::proto
