// The raft actor: the seam every write goes through. propose -> append to the
// RocksDB log (synced, one fsync per batch of queued proposals) -> commit ->
// apply to the state machine -> reply, and tell subscribed commit listeners.
// Today the group has one member, which leads at once; the multi-node core
// plugs in behind the same interface (proto::raft_actor).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "proto/interfaces.hpp"
#include "storage/raft_log.hpp"

namespace aisched::storage {
class rocks;
class state_machine;
}  // namespace aisched::storage

namespace aisched::raft {

struct raft_state {
  std::shared_ptr<storage::rocks> db;
  std::shared_ptr<storage::state_machine> sm;
  std::unique_ptr<storage::raft_log> log;
  std::string node_id;
  // proposals appended to the log at the next flush, with their promises
  std::vector<proto::log_entry> pending;
  std::vector<caf::typed_response_promise<proto::applied>> promises;
  bool flush_scheduled = false;
  std::vector<proto::commit_listener_actor> listeners;
  static inline const char* name = "raft";
};

/// Opens the raft log in `db` and applies every logged entry the state machine
/// has not applied yet (with one member, every logged entry is committed).
/// Then starts a new term led by this node. Call before spawning the actor.
caf::expected<storage::raft_log> recover(storage::rocks& db, storage::state_machine& sm,
                                         const std::string& node_id);

/// Spawn detached: appends fsync. `log` comes from recover().
proto::raft_actor::behavior_type raft_actor_impl(
    proto::raft_actor::stateful_pointer<raft_state> self, std::string node_id,
    std::shared_ptr<storage::rocks> db, std::shared_ptr<storage::state_machine> sm,
    storage::raft_log log);

}  // namespace aisched::raft
