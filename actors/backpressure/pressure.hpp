// Backpressure arithmetic, pure: the Green / Yellow / Red level from the
// backlog (pending + dispatched runs against a maximum) and the average worker
// load. (The token bucket that caps dispatches per second is
// common/token_bucket.hpp: the router and the LLM client share it.)
#pragma once

#include <cstdint>

#include "proto/interfaces.hpp"

namespace aisched::backpressure {

struct thresholds {
  uint64_t max_backlog = 1000;  // pending + dispatched runs considered "full"
  double yellow = 0.7;          // backlog ratio at which new fires are delayed
  double red = 0.9;             // backlog ratio at which new fires are deferred
  double load_throttle = 0.85;  // average worker load ratio that forces at least yellow
  duration_ms yellow_delay = 500;
};

/// The level for `backlog` runs and an average worker load ratio in [0, 1].
proto::pressure assess(const thresholds& t, uint64_t backlog, double worker_load);

}  // namespace aisched::backpressure
