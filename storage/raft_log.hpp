// Durable raft state in RocksDB: the log (`raft_log`, big-endian index ->
// encoded proto::log_entry) and the hard state (`raft_meta`: current term and
// vote). Used only by the raft actor; appends are synced before they return.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "proto/commands.hpp"

namespace aisched::storage {

class rocks;

/// What raft must remember across restarts before answering anyone.
struct hard_state {
  uint64_t term = 0;
  std::string voted_for;
  uint64_t commit = 0;
};

class raft_log {
 public:
  /// Reads the last index and hard state from `db`, which must outlive this.
  static caf::expected<raft_log> open(rocks& db);

  uint64_t last_index() const { return last_index_; }
  uint64_t last_term() const { return last_term_; }
  const hard_state& state() const { return state_; }

  /// Deletes entries with index >= `truncate_from` (if given), then appends
  /// `entries` (indexes continuing the log) together with `hs`, in one
  /// WriteBatch; `sync` makes it one fsync for the whole batch.
  caf::error append(const std::vector<proto::log_entry>& entries, const hard_state& hs,
                    std::optional<uint64_t> truncate_from = std::nullopt, bool sync = true);

  /// Persists the hard state alone (synced).
  caf::error save(const hard_state& hs);

  /// Entries with indexes in [from, to], at most `max` of them.
  caf::expected<std::vector<proto::log_entry>> read(uint64_t from, uint64_t to,
                                                    size_t max = 1'000'000) const;

 private:
  explicit raft_log(rocks& db) : db_(&db) {}
  rocks* db_;
  uint64_t last_index_ = 0;
  uint64_t last_term_ = 0;
  hard_state state_;
};

}  // namespace aisched::storage
