// The secret store's records in the replicated state (storage/secret_store):
// per tenant one data key, wrapped by the cluster key, and secrets sealed by
// that data key (common/secret_crypto). Nothing here ever holds a value in
// clear: the gateway seals before proposing, the leader's router opens only
// to build an execute request.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "proto/field.hpp"
#include "proto/time.hpp"

namespace aisched::proto {

/// A tenant's data key as every member stores it: sealed under the cluster
/// key whose check value is `kek_check` (secret_crypto::key_check).
struct data_key {
  std::string tenant;
  std::string id;  // random; stays when a rotation re-wraps the key
  std::string kek_check;
  std::string wrapped;
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, data_key& x) {
  return f(caf::meta::type_name("aisched.data_key"), field("tenant"), x.tenant, field("id"), x.id,
           field("kek_check"), x.kek_check, bytes_field("wrapped"), x.wrapped,
           keep_unknown(x.unknown));
}

/// One secret: its value sealed under the data key `key_id` of its tenant,
/// bound to tenant and name (the aad). `version` counts sets (the state
/// machine assigns it); `set_by` / `set_at` say who set the current value.
struct secret_record {
  std::string tenant;
  std::string name;
  std::string key_id;
  std::string sealed;  // empty in lists: what leaves the store is metadata only
  uint64_t version = 0;
  std::string set_by;
  unix_ms set_at = 0;
  unix_ms created_at = 0;
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, secret_record& x) {
  return f(caf::meta::type_name("aisched.secret_record"), field("tenant"), x.tenant,
           field("name"), x.name, field("key_id"), x.key_id, bytes_field("sealed"), x.sealed,
           field("version"), x.version, field("set_by"), x.set_by, field("set_at"), x.set_at,
           field("created_at"), x.created_at, keep_unknown(x.unknown));
}

/// A secret's name: 1-128 of A-Z, a-z, 0-9, '_', '.', '-' (what a path
/// segment and a `{{secret.NAME}}` reference can carry unescaped).
bool valid_secret_name(const std::string& name);

/// The names `{{secret.NAME}}` placeholders in `text` refer to (an HTTP
/// task's headers and body may hold them).
std::set<std::string> secret_refs(std::string_view text);

/// `text` with each `{{secret.NAME}}` replaced by `values[NAME]`, escaped as
/// JSON string contents when `json_escape` (a body). A name missing from
/// `values` is left as written (the caller resolved every reference before).
std::string fill_secrets(std::string_view text, const std::map<std::string, std::string>& values,
                         bool json_escape);

}  // namespace aisched::proto
