// What the trigger knows for one leadership term, and only for it: a new value
// on every `leader` message (trigger_actor.cpp), dropped whole with the term
// before it. While leading: the planner, built from the store on winning, the
// part of its counts already added to the metrics, and the instant this term's
// timer wakes at; while following, none of them. What outlives a term
// (handles, options, the clock, the timer generation, the requests waiting for
// a rebuild) is in trigger_state.
#pragma once

#include <memory>

#include "actors/trigger/planner.hpp"
#include "proto/time.hpp"

namespace aisched::trigger {

struct term_state {
  /// A follower's term: no planner.
  term_state() = default;
  /// A leader's term that began at `began`: an empty planner, filled by the
  /// rebuild (trigger_actor.cpp).
  term_state(unix_ms began, duration_ms fire_ahead)
      : plan(std::make_unique<planner>(began, fire_ahead)) {}

  std::unique_ptr<planner> plan;  // none while following
  /// The part of plan->stats() already added to the metrics
  /// (publish_slot_stats): it counts this term's planner, from zero.
  slot_stats reported;
  /// The instant this term's timer wakes at (0: none). A timer of an earlier
  /// term is stale by its generation (trigger_state::timer_gen).
  unix_ms armed_for = 0;
};

}  // namespace aisched::trigger
