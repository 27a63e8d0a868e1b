// Retry policy arithmetic, pure and deterministic: whether a failed attempt is
// retried and when. The "jitter" is a hash of the instance id and attempt, not
// a random draw, so every replica of the state machine computes the same
// deadline from the same committed facts.
#pragma once

#include <cstdint>
#include <string_view>

#include "proto/types.hpp"

namespace aisched::retry {

/// Backoff before attempt `attempt + 1` after attempt `attempt` (1-based) failed.
/// fixed / on_error_codes: `interval`; exponential: initial * multiplier^(attempt-1)
/// capped at `max`, and with `jitter` a full-jitter value in [0, that] chosen by `seed`.
duration_ms backoff(const proto::retry_policy& p, uint32_t attempt, uint64_t seed);

/// Whether an instance whose attempt `x.attempt` ended in `outcome` (failed or
/// timed_out) with `exit_code` gets another attempt under `p` at time `now`:
/// attempts left, the exit code listed (policy on_error_codes, or any policy
/// with a non-empty `error_codes`: then a timed-out run is not retried), and
/// the next attempt inside the retry window (slot + window) when one is set.
bool should_retry(const proto::retry_policy& p, const proto::instance& x,
                  proto::instance_state outcome, int32_t exit_code, unix_ms next_at);

/// A stable 64-bit hash of `s` (FNV-1a), for seeds.
uint64_t stable_hash(std::string_view s);

}  // namespace aisched::retry
