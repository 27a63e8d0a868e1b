// The retry actor, leader only: a min-heap of deadlines. For retry_waiting
// runs it proposes `retry` (back to pending, next attempt) at their
// next_attempt_at; for dispatched or running runs it proposes a timed_out
// result when their deadline passes without a report (the state machine then
// decides whether another attempt follows). One CAF timer, generation-tagged.
#pragma once

#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/activity.hpp"
#include "common/clock.hpp"
#include "common/leader_epoch.hpp"
#include "proto/interfaces.hpp"

namespace aisched::retry {

struct retry_state {
  enum class kind : uint8_t { retry, deadline };
  struct watch {
    kind what;
    unix_ms at;
    uint32_t attempt;
  };
  using item = std::pair<unix_ms, std::string>;  // (due, run id)
  /// Stale items the heap may hold beyond twice the live ones before it is rebuilt.
  static constexpr size_t heap_slack = 1024;
  proto::raft_actor raft;
  proto::store_actor store;
  leader_epoch lead;  // leading, term, and the epoch that drops stale replies
  std::unordered_map<std::string, watch> watching;  // the live entry per run
  /// May hold stale items (a run finished, or its due moved), at most twice
  /// the live ones plus heap_slack (compact() in retry_actor.cpp).
  std::priority_queue<item, std::vector<item>, std::greater<item>> heap;
  uint64_t timer_gen = 0;
  unix_ms armed_for = 0;
  wall_clock clock;  // when retries and deadlines are due (common/clock.hpp)
  inspector::activity activity;
  static inline const char* name = "retry";
};

/// `clock` is its wall clock: the system's in production, a simulated one in tests.
proto::retry_actor::behavior_type retry_actor_impl(
    proto::retry_actor::stateful_pointer<retry_state> self, proto::raft_actor raft,
    proto::store_actor store, wall_clock clock);

}  // namespace aisched::retry
