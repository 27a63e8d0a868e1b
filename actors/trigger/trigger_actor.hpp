// The trigger actor fires due slots on the leader. It owns a planner (the pure
// decision logic) and one CAF timer armed for the planner's next due instant.
// Receives: leadership and committed effects from raft, pressure from
// backpressure, trigger_now from the gateway. Sends: `fire` proposals to the
// router (which decides a broadcast slot's fanout and places the runs in the
// same command; to raft when it has none) and `cancel` proposals to raft;
// reads task pages from the store when it starts leading. It hears nothing
// from the router: the fires go one way. This file holds the state (what lives
// one leadership term only is term_state.hpp's); trigger_actor.cpp the messages.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <caf/typed_response_promise.hpp>

#include "common/activity.hpp"
#include "common/clock.hpp"
#include "actors/trigger/term_state.hpp"
#include "common/leader_epoch.hpp"
#include "proto/interfaces.hpp"

namespace aisched::trigger {

/// The trigger's state. `term` is what one leadership term knows and is
/// replaced whole on each `leader` message; the rest outlives terms: the
/// handles, options and clock it was spawned with, the leader_epoch that tells
/// a term's replies from older ones', the timer generation (timers cannot be
/// cancelled, so a wake armed in an earlier term must stay stale), the
/// pressure, who leads, and the requests waiting for a rebuild.
struct trigger_state {
  proto::raft_actor raft;
  proto::store_actor store;
  proto::fire_proposer_actor fires_to;  // the router (subscribe); none: raft
  leader_epoch lead;  // leading, term, the epoch that drops stale replies, ready once rebuilt
  term_state term;    // this term's planner: built on each leader message, dropped with the term
  uint64_t timer_gen = 0;   // generation of the armed wake-up timer (timers cannot be cancelled)
  proto::pressure load;
  duration_ms fire_ahead = 0;  // how long before its instant a slot fires (planner.hpp)
  std::string leader_id;       // who leads, for error hints
  // Requests that arrived while the rebuild ran, with the promise each answers.
  // They wait for this node's next finished rebuild (a new term while it still
  // leads keeps them for that term's), or are answered not_leading when it
  // stops leading.
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
