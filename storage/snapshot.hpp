// State-machine snapshots for Raft log compaction (DESIGN §4–§5): a consistent
// export of the replicated column families read in bounded chunks (leader
// side), and the staging of such chunks into one WriteBatch that replaces the
// local state atomically (follower side). The raft actor moves the chunks
// between nodes; nothing here knows about peers or terms.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "storage/rocks.hpp"

namespace rocksdb {
class Snapshot;
}  // namespace rocksdb

namespace aisched::storage {

/// The column families that make up the state machine: a snapshot carries
/// these and nothing else (the raft CFs are each member's own).
constexpr std::array<column, 11> state_columns = {
    column::tasks, column::task_state, column::instances, column::instances_by_state,
    column::meta,  column::auth,       column::audit,     column::attempts,
    column::ai_conversations, column::ai_analysis, column::controls};

/// A point-in-time view of the state machine, exported chunk by chunk.
/// Holds a RocksDB snapshot, so concurrent applies do not change what it reads.
/// Not thread-safe; `db` must outlive it.
class snapshot_export {
 public:
  /// Pins the current state of `db`. The view's applied index is read from the
  /// same snapshot, so the data is exactly the state at that index.
  [[nodiscard]] static caf::expected<std::unique_ptr<snapshot_export>> open(rocks& db);

  ~snapshot_export();
  snapshot_export(const snapshot_export&) = delete;
  snapshot_export& operator=(const snapshot_export&) = delete;

  /// The index of the last entry the exported state reflects.
  uint64_t applied_index() const { return applied_; }

  /// The next chunk: whole records until adding one more would pass
  /// `max_bytes` (a chunk holds at least one record, so one huge value may
  /// exceed it). An empty chunk means the export is complete.
  [[nodiscard]] caf::expected<std::string> next_chunk(size_t max_bytes);

  /// True once every record was handed out.
  bool done() const { return column_ >= state_columns.size(); }

  /// Bytes and records handed out so far.
  uint64_t bytes() const { return bytes_; }
  uint64_t records() const { return records_; }

  /// A point read of any column (raft ones too) at the pinned state: nullopt
  /// when absent. For what describes the export (storage/backup_export).
  [[nodiscard]] caf::expected<std::optional<std::string>> get(column c, std::string_view key) const;

  /// The values of the keys of `c` that start with `prefix`, at the pinned
  /// state, in key order.
  [[nodiscard]] caf::expected<std::vector<std::string>> values_with_prefix(
      column c, std::string_view prefix) const;

 private:
  explicit snapshot_export(rocks& db);
  [[nodiscard]] caf::error open_column();

  rocks& db_;
  const rocksdb::Snapshot* snap_ = nullptr;
  std::unique_ptr<rocksdb::Iterator> it_;
  size_t column_ = 0;  // index into state_columns
  uint64_t applied_ = 0;
  uint64_t bytes_ = 0;
  uint64_t records_ = 0;
};

/// Chunks of one export, staged in memory until all have arrived; install()
/// then swaps the state in one WriteBatch, so a crash leaves either the old
/// state or the new one. Memory: the whole snapshot while staging. Not
/// thread-safe; `db` must outlive it.
class snapshot_staging {
 public:
  explicit snapshot_staging(rocks& db);
  ~snapshot_staging();
  snapshot_staging(const snapshot_staging&) = delete;
  snapshot_staging& operator=(const snapshot_staging&) = delete;

  /// Adds one chunk from snapshot_export::next_chunk. A malformed chunk is an
  /// `errc::corrupted` error and leaves the staging unusable.
  [[nodiscard]] caf::error add(std::string_view chunk);

  /// The batch that wipes the state columns and writes the staged records.
  /// The caller may add its own writes (raft meta) and write it with
  /// rocks::write; after that the staging is spent.
  rocksdb::WriteBatch& batch() { return *batch_; }

  uint64_t bytes() const { return bytes_; }
  uint64_t records() const { return records_; }

 private:
  rocks& db_;
  std::unique_ptr<rocksdb::WriteBatch> batch_;
  uint64_t bytes_ = 0;
  uint64_t records_ = 0;
};

/// Installs a complete export of `from` into `to` in one synced batch (tests
/// and tools; the raft actor streams the chunks between nodes instead).
[[nodiscard]] caf::error copy_state(rocks& from, rocks& to, size_t chunk_bytes = 1 << 20);

}  // namespace aisched::storage
