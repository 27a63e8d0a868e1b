// The replicated state machine: applies committed log entries to RocksDB, each
// batch in one WriteBatch together with the applied index, so a replay after a
// crash applies nothing twice. Owned by the raft actor (the only writer); its
// read functions are safe to call from any thread concurrently with apply.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "proto/commands.hpp"
#include "proto/interfaces.hpp"
#include "proto/types.hpp"

namespace aisched::storage {

class rocks;
struct apply_cache;

/// Schema version written on first open; a mismatch refuses to start.
constexpr uint64_t schema_version = 2;  // 2: tasks and runtimes carry retention

class state_machine {
 public:
  ~state_machine();
  /// Loads the applied index and counters from `db`, which must outlive this.
  [[nodiscard]] static caf::expected<std::unique_ptr<state_machine>> open(rocks& db);

  /// Index of the last applied log entry (0 before any). Thread-safe.
  uint64_t applied_index() const { return applied_index_.load(); }

  /// Applies `entries` (ascending indexes) in one WriteBatch. Entries at or
  /// below applied_index() are skipped and yield an empty `applied`. Returns one
  /// result per entry: a command that is rejected (unknown task, stale version,
  /// illegal transition) yields its error and changes nothing, but its index
  /// still counts as applied. Only a storage failure fails the whole call;
  /// then nothing of the batch is visible. Single writer: not thread-safe
  /// against itself.
  /// `before_write`, if set, is called once the batch is computed and before
  /// it is written; an error it answers fails the call, nothing written. The
  /// raft actor waits there for its log entries' sync: the batch is computed
  /// while the disk syncs, and nothing of an entry is visible before the
  /// entry is durable.
  [[nodiscard]] caf::expected<std::vector<caf::expected<proto::applied>>> apply(
      const std::vector<proto::log_entry>& entries,
      const std::function<caf::error()>& before_write = nullptr);

  /// Re-reads the applied index and counters from the database after the
  /// state was replaced underneath (a snapshot installed by the raft actor).
  /// Same thread as apply().
  [[nodiscard]] caf::error reload();

  // -- reads (tenant "" matches every tenant) --------------------------------

  [[nodiscard]] caf::expected<proto::task> get_task(std::string_view tenant, uint64_t id) const;
  [[nodiscard]] caf::expected<proto::task_page> list_tasks(const proto::task_query& q) const;
  [[nodiscard]] caf::expected<proto::instance> get_instance(std::string_view tenant,
                                              std::string_view id) const;
  [[nodiscard]] caf::expected<proto::instance_page> list_instances(const proto::instance_query& q) const;
  /// The attempts of instance `id` (storage/attempt_history.hpp): not_found
  /// like get_instance when it does not exist in `tenant`.
  [[nodiscard]] caf::expected<proto::attempt_list> list_attempts(std::string_view tenant,
                                                   std::string_view id) const;
  /// Tasks after `q.after_id` with their runtime facts, for a leader's rebuild.
  [[nodiscard]] caf::expected<proto::schedule_page> scan_schedules(const proto::task_query& q) const;
  /// Non-terminal instances (pending, dispatched, running, retry_waiting), paged by
  /// `q.cursor` / `q.limit`, into `active`.
  [[nodiscard]] caf::expected<proto::schedule_page> scan_active(const proto::instance_query& q) const;
  /// One page of the run-history retention sweep (storage/run_retention.hpp).
  [[nodiscard]] caf::expected<proto::prune_page> scan_prunable(const proto::prune_query& q) const;
  /// Runtime facts of task `id`; a default value (task_id = id) if it never fired.
  [[nodiscard]] caf::expected<proto::task_runtime> get_task_runtime(uint64_t id) const;

  /// Number of instances in each state (index: proto::instance_state), as of
  /// applied_index(). Kept in the same WriteBatch as the state, so it is exact
  /// after a restart without a scan. Only call it from the thread that applies.
  using state_counts = std::array<uint64_t, proto::enum_names<proto::instance_state>::value.size()>;
  const state_counts& instance_counts() const { return instance_counts_; }

 private:
  explicit state_machine(rocks& db);

  rocks& db_;
  std::unique_ptr<apply_cache> cache_;  // the applying thread's (storage/apply_cache.hpp)
  std::atomic<uint64_t> applied_index_{0};
  uint64_t next_task_id_ = 1;
  state_counts instance_counts_{};
};

}  // namespace aisched::storage
