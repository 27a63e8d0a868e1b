// Secrets in the replicated state: applying put_data_keys / put_secret /
// delete_secret inside the state machine's WriteBatch (secret_applier, used
// only by state_machine::apply) and reading the records back (free functions,
// thread-safe like every RocksDB read; storage/secret_keeper uses them). The
// records live in the auth column family, so snapshots carry them; only
// sealed values and wrapped keys are ever stored (proto/secret_types.hpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "proto/commands.hpp"

namespace rocksdb {
class WriteBatch;
}

namespace aisched::storage {

class rocks;

/// Applies the secret commands of one apply() call into its `batch`, with an
/// overlay so later entries of the same batch see earlier ones (members batch
/// entries differently; every one must reach the same state).
class secret_applier {
 public:
  secret_applier(rocks& db, rocksdb::WriteBatch& batch) : db_(db), batch_(batch) {}

  [[nodiscard]] caf::expected<proto::applied> apply(const proto::put_data_keys& c);
  [[nodiscard]] caf::expected<proto::applied> apply(const proto::put_secret& c);
  [[nodiscard]] caf::expected<proto::applied> apply(const proto::delete_secret& c);

 private:
  [[nodiscard]] caf::expected<std::optional<std::string>> read(const std::string& key);
  void put(const std::string& key, std::string value);
  void erase(const std::string& key);

  rocks& db_;
  rocksdb::WriteBatch& batch_;
  std::map<std::string, std::optional<std::string>> overlay_;  // nullopt: deleted
};

// -- reads ---------------------------------------------------------------------

/// The data key of `tenant`; nullopt if the tenant has none yet.
[[nodiscard]] caf::expected<std::optional<proto::data_key>> read_data_key(rocks& db,
                                                                         const std::string& tenant);
/// Every tenant's data key, by tenant.
[[nodiscard]] caf::expected<std::vector<proto::data_key>> read_data_keys(rocks& db);
/// Secret `name` of `tenant` with its sealed value; not_found naming the secret.
[[nodiscard]] caf::expected<proto::secret_record> read_secret(rocks& db, const std::string& tenant,
                                                              const std::string& name);
/// The secrets of `tenant`, by name, without their sealed values.
[[nodiscard]] caf::expected<std::vector<proto::secret_record>> read_secrets(
    rocks& db, const std::string& tenant);

}  // namespace aisched::storage
