// The trigger actor fires due slots on the leader. It owns a planner (the pure
// decision logic) and one CAF timer armed for the planner's next due instant.
// Receives: leadership and committed effects from raft, pressure from
// backpressure, trigger_now from the gateway. Sends: `fire` proposals to the
// router (which decides a broadcast slot's fanout and places the runs in the
// same command; to raft when it has none) and `cancel` proposals to raft;
// reads task pages from the store when it starts leading. It hears nothing
// from the router: the fires go one way.
#pragma once

#include <functional>
#include <string>
#include <vector>
#include <memory>

#include <caf/typed_response_promise.hpp>

#include "common/activity.hpp"
#include "common/clock.hpp"
#include "actors/trigger/planner.hpp"
#include "common/leader_epoch.hpp"
#include "proto/interfaces.hpp"

namespace aisched::trigger {

struct trigger_state {
  proto::raft_actor raft;
  proto::store_actor store;
  proto::fire_proposer_actor fires_to;  // the router (subscribe); none: raft
  std::unique_ptr<planner> plan;
  leader_epoch lead;  // leading, term, the epoch that drops stale replies, ready once rebuilt
  uint64_t timer_gen = 0;   // generation of the armed wake-up timer (timers cannot be cancelled)
  unix_ms armed_for = 0;    // instant the armed timer wakes at (0: none)
  proto::pressure load;
  duration_ms fire_ahead = 0;  // how long before its instant a slot fires (planner.hpp)
  slot_stats reported;                          // the planner's counts already added to the metrics
  std::string leader_id;                        // who leads, for error hints
  // Requests that arrived while the rebuild ran, with the promise each answers.
  std::vector<std::pair<std::function<void(caf::typed_response_promise<proto::applied>)>,
                        caf::typed_response_promise<proto::applied>>>
      deferred;
  wall_clock clock;  // the time the planner and fires see (common/clock.hpp)
  inspector::activity activity;
  static inline const char* name = "trigger";
};

/// `clock` is its wall clock (the system's in production; a simulated one,
/// read on the actor clock, in tests); `fire_ahead` how long before its instant a slot fires,
/// so its run starts on it (planner.hpp; 0: at the instant). Register the
/// actor with raft (subscribe) after spawning.
proto::trigger_actor::behavior_type trigger_actor_impl(
    proto::trigger_actor::stateful_pointer<trigger_state> self, proto::raft_actor raft,
    proto::store_actor store, wall_clock clock, duration_ms fire_ahead);

}  // namespace aisched::trigger
