// The registrar keeps a worker registered with the leader's router, wherever
// the leader is. It asks a member's endpoint (over CAF, non-blocking, with a
// deadline) who leads, follows that answer to the leader's endpoint, registers
// the local worker actor with the leader's router and repeats the registration
// as a heartbeat (with the machine's CPU and memory use and the runs the worker
// holds, asked of the worker actor each time). Every second it asks
// the leader's endpoint whether it still leads; when it does not, or when the
// leader goes away, it finds the new one — from any member it has learned of,
// so a worker outlives the node it first joined. `drain` makes it say the
// worker is draining (finishing its runs, taking no new ones).
//
// A worker node starts from its `--join` address; a scheduler node's built-in
// worker starts from its own node's endpoint.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/worker/host_stats.hpp"
#include "proto/interfaces.hpp"

namespace aisched::worker {

struct registrar_options {
  /// Cluster addresses ("host:port") of members to ask first; learned members
  /// are added as they are seen.
  std::vector<std::string> seeds;
  /// This node's own endpoint (a scheduler node's built-in worker): asked
  /// directly instead of dialing `seeds.front()`, which is then its address.
  proto::endpoint_actor own_endpoint;
  proto::worker info;
  proto::worker_actor worker;
  /// How the member at a cluster address is reached without dialing it: a
  /// lookup in a directory of endpoints kept beside the actors of one actor
  /// system (the simulation, tests/sim/scheduler_sim; raft_options::
  /// resolve_peer's counterpart), answering an invalid handle while no member
  /// is there (retried like a refused connection). Empty, as in a node: over
  /// the cluster port (proto::reach_endpoint).
  std::function<proto::endpoint_actor(const std::string& address)> resolve_member;
};

struct registrar_state {
  registrar_options opts;
  size_t next_seed = 0;           // the member asked on the next attempt
  proto::endpoint_actor leader;   // the endpoint of the leader registered with
  proto::router_actor router;     // that leader's router; null while looking
  uint64_t leader_term = 0;       // the term that leader said it leads in
  std::string leader_cluster;     // and its cluster id
  uint64_t generation = 0;        // bumped per attempt; stale replies are ignored
  uint32_t ticks = 0;             // seconds since the last heartbeat
  std::string last_error;         // why the last attempt failed, reported once ("" once registered)
  host_stats stats;
  proto::worker& info() { return opts.info; }
  static inline const char* name = "registrar";
};

caf::behavior registrar_actor_impl(caf::stateful_actor<registrar_state>* self,
                                   registrar_options opts);

}  // namespace aisched::worker
