// Users, API tokens and audit entries in the replicated state: applying their
// commands inside the state machine's WriteBatch (auth_applier, used only by
// state_machine::apply) and reading them back (free functions, thread-safe
// like every RocksDB read; the store actor answers with them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "proto/commands.hpp"

namespace rocksdb {
class WriteBatch;
}

namespace aisched::storage {

class rocks;

/// Applies the auth commands of one apply() call into its `batch`, with an
/// overlay so later entries of the same batch see earlier ones.
class auth_applier {
 public:
  auth_applier(rocks& db, rocksdb::WriteBatch& batch) : db_(db), batch_(batch) {}

  [[nodiscard]] caf::expected<proto::applied> apply(const proto::put_user& c);
  [[nodiscard]] caf::expected<proto::applied> apply(const proto::delete_user& c);
  [[nodiscard]] caf::expected<proto::applied> apply(const proto::put_token& c);
  [[nodiscard]] caf::expected<proto::applied> apply(const proto::delete_token& c);
  [[nodiscard]] caf::expected<proto::applied> apply(const proto::share_worker& c);
  /// Entries are keyed by `index` (the log entry's) and their position in it,
  /// under their tenant and, for "cluster.*" actions, also under cluster_audit_log.
  [[nodiscard]] caf::expected<proto::applied> apply(const proto::record_audit& c, uint64_t index);

 private:
  [[nodiscard]] caf::expected<std::optional<std::string>> read(const std::string& key);
  void put(const std::string& key, std::string value);
  void erase(const std::string& key);
  [[nodiscard]] caf::expected<bool> any_user();

  rocks& db_;
  rocksdb::WriteBatch& batch_;
  std::map<std::string, std::optional<std::string>> overlay_;  // nullopt: deleted
};

// -- reads ---------------------------------------------------------------------

[[nodiscard]] caf::expected<proto::user> read_user(rocks& db, const std::string& name);
/// Users of `tenant` ("" = all), by name.
[[nodiscard]] caf::expected<proto::user_list> read_users(rocks& db, const std::string& tenant);
/// The token whose secret hashes to `sha256_hex`; not_found if none (revoked).
[[nodiscard]] caf::expected<proto::api_token> read_token_by_hash(rocks& db, const std::string& sha256_hex);
[[nodiscard]] caf::expected<proto::token_list> read_tokens(rocks& db, const std::string& tenant);
/// The tenant from which the cluster admin shared worker `id`; "" when it is not shared.
[[nodiscard]] caf::expected<std::string> read_worker_share(rocks& db, const std::string& id);
/// Audit entries of `q.tenant` (or of the cluster log, proto::cluster_audit_log), newest first.
[[nodiscard]] caf::expected<proto::audit_page> read_audit(rocks& db, const proto::audit_query& q);

}  // namespace aisched::storage
