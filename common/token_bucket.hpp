// A token bucket, pure: `rate` tokens per second up to `burst`, the time passed
// in. It caps the router's dispatches per second (--dispatch-rate) and the LLM
// client's requests per minute. Not thread-safe: its owner serialises the calls
// (the router is one actor; the LLM client holds a mutex).
#pragma once

#include <cstdint>

#include "proto/time.hpp"

namespace aisched {

/// `rate` tokens per second up to `burst` (at least 1); full at start. A rate
/// of 0 means unlimited (the bucket always grants). Time is passed in (ms).
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

}  // namespace aisched
