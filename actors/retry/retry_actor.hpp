// The retry actor, leader only: a min-heap of deadlines. For retry_waiting
// runs it proposes `retry` (back to pending, next attempt) at their
// next_attempt_at; for dispatched or running runs it proposes a timed_out
// result when their deadline passes without a report (the state machine then
// decides whether another attempt follows). One CAF timer, generation-tagged.
// This file holds the state (what lives one leadership term only is
// term_state.hpp's); retry_actor.cpp the messages.
#pragma once

#include <cstdint>

#include "actors/retry/term_state.hpp"
#include "common/activity.hpp"
#include "common/clock.hpp"
#include "common/leader_epoch.hpp"
#include "proto/interfaces.hpp"

namespace aisched::retry {

/// The retry actor's state. `term` is what one leadership term knows and is
/// replaced whole on each `leader` message; the rest outlives terms: the
/// handles, the clock, the leader_epoch, and the timer generation (timers
/// cannot be cancelled, so a wake armed in an earlier term must stay stale).
struct retry_state {
  proto::raft_actor raft;
  proto::store_actor store;
  leader_epoch lead;  // leading, term, and the epoch that drops stale replies
  term_state term;    // this term's watched runs: new on each leader message, dropped with the term
  uint64_t timer_gen = 0;
  wall_clock clock;  // when retries and deadlines are due (common/clock.hpp)
  inspector::activity activity;
  static inline const char* name = "retry";
};

/// `clock` is its wall clock: the system's in production, a simulated one in tests.
proto::retry_actor::behavior_type retry_actor_impl(
    proto::retry_actor::stateful_pointer<retry_state> self, proto::raft_actor raft,
    proto::store_actor store, wall_clock clock);

}  // namespace aisched::retry
