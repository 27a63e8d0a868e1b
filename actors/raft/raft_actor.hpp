// The raft actor: the seam every write goes through, and this node's member of
// the Raft group. It drives the pure raft::core: ticks it, steps it with peer
// messages, and for each `ready` persists (synced, one fsync per batch), sends
// to peers over CAF, applies committed entries to the state machine, answers
// the proposals that committed, and tells the commit listeners (trigger,
// retry, router, backpressure) what was applied and whether this node leads.
// A follower forwards proposals to the leader, so clients never see who leads.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/inspector/activity.hpp"
#include "actors/raft/core.hpp"
#include "proto/interfaces.hpp"
#include "storage/raft_log.hpp"

namespace aisched::storage {
class rocks;
class state_machine;
}  // namespace aisched::storage

namespace aisched::raft {

using peer_msg_atom = caf::atom_constant<caf::atom("raftmsg")>;
using reconnect_atom = caf::atom_constant<caf::atom("raftconn")>;

/// The full interface of a raft actor: the local one (proto::raft_actor) plus
/// what members send each other and its own timers.
using node_actor = proto::raft_actor::extend<caf::reacts_to<peer_msg_atom, message>,
                                             caf::reacts_to<caf::tick_atom>,
                                             caf::reacts_to<reconnect_atom, std::string>>;

/// Another member: its id and cluster address (where its endpoint is published).
struct peer_address {
  std::string id;
  std::string host;
  uint16_t port = 0;
};

struct raft_options {
  std::string node_id = "n1";
  std::vector<peer_address> peers;  // the other members (empty: a group of one)
  duration_ms tick = 50;            // one core tick
  int election_ticks = 10;          // election timeout 10-20 ticks = 0.5-1 s
};

struct raft_state {
  struct waiter {
    uint64_t term;
    caf::typed_response_promise<proto::applied> promise;
  };
  struct peer {
    peer_address addr;
    node_actor handle;
    uint64_t generation = 0;  // of the connection attempt; stale replies are ignored
  };
  raft_options opts;
  std::shared_ptr<storage::rocks> db;
  std::shared_ptr<storage::state_machine> sm;
  std::shared_ptr<storage::raft_log> log;
  std::shared_ptr<core> member;
  std::map<std::string, peer> peers;
  std::map<uint64_t, waiter> waiting;  // log index -> the local proposal's promise
  bool flush_scheduled = false;
  std::vector<proto::commit_listener_actor> listeners;
  proto::leadership told;            // what listeners were told last
  uint64_t last_applied_term = 0;    // term of the last applied entry
  role observed_role = role::follower;  // role and term the metrics last saw
  uint64_t observed_term = 0;
  inspector::activity activity;
  static inline const char* name = "raft";
};

/// Restores the member from `db`: hard state and log from the raft log, the
/// applied index from the state machine. Call before spawning.
caf::expected<std::unique_ptr<core>> restore(storage::raft_log& log, storage::state_machine& sm,
                                             const raft_options& opts);

/// What raft_actor_impl needs besides the database: the opened log and the
/// restored member.
struct member_parts {
  raft_options opts;
  std::shared_ptr<storage::raft_log> log;
  std::shared_ptr<core> member;
};

/// Opens the raft log in `db` and restores the member described by `opts`.
caf::expected<member_parts> open_member(storage::rocks& db, storage::state_machine& sm,
                                        raft_options opts);

/// Spawn detached: appends fsync. `log` and `member` come from open/restore.
node_actor::behavior_type raft_actor_impl(node_actor::stateful_pointer<raft_state> self,
                                          raft_options opts, std::shared_ptr<storage::rocks> db,
                                          std::shared_ptr<storage::state_machine> sm,
                                          std::shared_ptr<storage::raft_log> log,
                                          std::shared_ptr<core> member);

}  // namespace aisched::raft
