// What the retry actor knows for one leadership term, and only for it: a new
// value on every `leader` message (retry_actor.cpp), dropped whole with the
// term before it. While leading: the runs it watches (a retry due, or a
// deadline), the heap of their due instants, and the instant this term's timer
// wakes at; while following, nothing. What outlives a term (handles, the
// clock, the timer generation) is in retry_state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proto/time.hpp"

namespace aisched::retry {

struct term_state {
  enum class kind : uint8_t { retry, deadline };
  struct watch {
    kind what;
    unix_ms at;
    uint32_t attempt;
  };
  using item = std::pair<unix_ms, std::string>;  // (due, run id)
  /// Stale items the heap may hold beyond twice the live ones before it is rebuilt.
  static constexpr size_t heap_slack = 1024;

  std::unordered_map<std::string, watch> watching;  // the live entry per run
  /// May hold stale items (a run finished, or its due moved), at most twice
  /// the live ones plus heap_slack (compact() in retry_actor.cpp).
  std::priority_queue<item, std::vector<item>, std::greater<item>> heap;
  /// The instant this term's timer wakes at (0: none). A timer of an earlier
  /// term is stale by its generation (retry_state::timer_gen).
  unix_ms armed_for = 0;
};

}  // namespace aisched::retry
