// Pools and calendars in the replicated state (column `controls`): applying
// put_pool / put_calendar / delete_calendar inside the state machine's
// WriteBatch (controls_applier, used only by state_machine::apply), checking
// that a task names only ones that exist, and reading them back (free
// functions, thread-safe like every RocksDB read; the store actor answers).
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

/// Applies the control commands of one apply() call into its `batch`, with an
/// overlay so later entries of the same batch see earlier ones.
class controls_applier {
 public:
  controls_applier(rocks& db, rocksdb::WriteBatch& batch) : db_(db), batch_(batch) {}

  [[nodiscard]] caf::expected<proto::applied> apply(const proto::put_pool& c);
  [[nodiscard]] caf::expected<proto::applied> apply(const proto::put_calendar& c);
  /// `users`: the tasks of the calendar's tenant that exclude it (the caller
  /// scans them); any refuses the delete with has_dependents naming them.
  [[nodiscard]] caf::expected<proto::applied> apply(const proto::delete_calendar& c,
                                                    const std::vector<proto::task>& users);

  /// Empty when the pool and calendar task `t` names (if any) exist in its
  /// tenant; else invalid_argument naming field `pool` or `exclude_calendar`.
  /// Storage faults come back as storage errors (they fail the batch).
  [[nodiscard]] caf::error check_refs(const proto::task& t);

 private:
  [[nodiscard]] caf::expected<std::optional<std::string>> read(const std::string& key);
  void put(const std::string& key, std::string value);

  rocks& db_;
  rocksdb::WriteBatch& batch_;
  std::map<std::string, std::optional<std::string>> overlay_;  // nullopt: deleted
};

// -- reads ---------------------------------------------------------------------

/// The pools and calendars of `tenant` ("" = every tenant), by tenant and name.
[[nodiscard]] caf::expected<proto::controls> read_controls(rocks& db, const std::string& tenant);

}  // namespace aisched::storage
