// Durable raft state in RocksDB: the log (`raft_log`, big-endian index ->
// encoded proto::log_entry), the hard state (`raft_meta`: current term and
// vote) and the snapshot base (`raft_meta`: the last index and term compacted
// away, whose effect lives only in the state machine). Used only by the raft
// actor; appends are synced before they return.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "proto/commands.hpp"

namespace rocksdb {
class WriteBatch;
}  // namespace rocksdb

namespace aisched::storage {

class rocks;

/// What raft must remember across restarts before answering anyone.
struct hard_state {
  uint64_t term = 0;
  std::string voted_for;
  uint64_t commit = 0;
};

/// The base of the compacted log: entries up to `index` (of term `term`) are
/// gone from the log; the state machine holds their effect. {0, 0} = none.
struct log_base {
  uint64_t index = 0;
  uint64_t term = 0;
};

class raft_log {
 public:
  /// Reads the last index and hard state from `db`, which must outlive this.
  [[nodiscard]] static caf::expected<raft_log> open(rocks& db);

  /// The last index in the log, or the base's index if the log is empty.
  uint64_t last_index() const { return last_index_; }
  uint64_t last_term() const { return last_term_; }
  const hard_state& state() const { return state_; }
  const log_base& base() const { return base_; }

  /// Deletes entries with index >= `truncate_from` (if given), then appends
  /// `entries` (indexes continuing the log) together with `hs`, in one
  /// WriteBatch; `sync` makes it one fsync for the whole batch.
  [[nodiscard]] caf::error append(const std::vector<proto::log_entry>& entries, const hard_state& hs,
                    std::optional<uint64_t> truncate_from = std::nullopt, bool sync = true);

  /// Drops entries up to `index` (of term `term`) and records that base,
  /// synced. REQUIRES: the state machine's writes up to at least `index` were
  /// written before this call (they are made durable here first: the WAL is
  /// synced before the log shrinks, so a crash cannot lose both).
  [[nodiscard]] caf::error compact(uint64_t index, uint64_t term);

  /// Replaces the whole log by an empty one based at `base`, together with
  /// `hs` and whatever `state` already holds (the staged state machine), in
  /// one synced write: a crash leaves either all of it or none.
  [[nodiscard]] caf::error install(const log_base& base, const hard_state& hs, rocksdb::WriteBatch& state);

  /// Persists the hard state alone (synced).
  [[nodiscard]] caf::error save(const hard_state& hs);

  /// Entries with indexes in [from, to], at most `max` of them.
  [[nodiscard]] caf::expected<std::vector<proto::log_entry>> read(uint64_t from, uint64_t to,
                                                    size_t max = 1'000'000) const;

 private:
  explicit raft_log(rocks& db) : db_(&db) {}
  rocks* db_;
  uint64_t last_index_ = 0;
  uint64_t last_term_ = 0;
  hard_state state_;
  log_base base_;
};

}  // namespace aisched::storage
