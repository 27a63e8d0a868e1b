// The leader's scheduling actors of a scheduler node, spawned and wired as a
// node wires them: trigger, retry, router and backpressure, each subscribed to
// the raft actor's commits and leadership; the router proposes the trigger's
// fires (deciding a broadcast slot's runs and placing them in the same
// command); backpressure tells both the pressure. One function, so that the node
// (runtime/scheduler_node.cpp) and the simulation of the whole scheduler
// (tests/sim/scheduler_sim) run the same actors wired the same way.
#pragma once

#include <caf/fwd.hpp>

#include "actors/backpressure/backpressure_actor.hpp"
#include "actors/router/router_actor.hpp"
#include "common/clock.hpp"
#include "proto/interfaces.hpp"

namespace aisched::runtime {

struct scheduling_options {
  /// The wall clock of all four (common/clock.hpp): the system's in a node, a
  /// simulated one on CAF's test coordinator. Replaces `router.clock`.
  wall_clock clock;
  /// How long before its instant a slot fires (trigger::planner; 0: at it).
  duration_ms fire_ahead = 0;
  router::router_options router;
  backpressure::thresholds limits;
};

struct scheduling_actors {
  proto::trigger_actor trigger;
  proto::retry_actor retrier;
  proto::router_actor router;
  proto::backpressure_actor pressure;
};

/// Spawns the four in `sys` (scheduled, not detached) over `raft` and `store`
/// and wires them. Sends only: the subscriptions take effect when delivered.
scheduling_actors spawn_scheduling(caf::actor_system& sys, const proto::raft_actor& raft,
                                   const proto::store_actor& store, scheduling_options opts);

}  // namespace aisched::runtime
