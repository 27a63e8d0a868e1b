// Backpressure arithmetic, pure: the Green / Yellow / Red level from the
// backlog (pending + dispatched runs against a maximum) and the average worker
// load, and a token bucket that caps dispatches per second.
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

/// A token bucket: `rate` tokens per second up to `burst`. A rate of 0 means
/// unlimited (the bucket always grants). Time is passed in (ms).
class token_bucket {
 public:
  token_bucket(double rate, double burst, unix_ms now);

  /// Takes up to `want` tokens at `now`; returns how many were granted.
  uint64_t take(uint64_t want, unix_ms now);

  /// Milliseconds until at least one token is available (0 if one is now).
  duration_ms wait_ms(unix_ms now);

  double tokens(unix_ms now);
  bool unlimited() const { return rate_ <= 0; }

 private:
  void refill(unix_ms now);
  double rate_;
  double burst_;
  double tokens_;
  unix_ms last_;
};

}  // namespace aisched::backpressure
