// Retry policy arithmetic; see backoff.hpp.
#include "proto/backoff.hpp"

#include <algorithm>
#include <cmath>

namespace aisched::retry {

using namespace proto;

uint64_t stable_hash(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

duration_ms backoff(const retry_policy& p, uint32_t attempt, uint64_t seed) {
  if (p.kind != retry_kind::exponential) return std::max<duration_ms>(p.interval, 0);
  double d = static_cast<double>(p.initial) *
             std::pow(std::max(p.multiplier, 1.0), static_cast<double>(attempt > 0 ? attempt - 1 : 0));
  auto capped = static_cast<duration_ms>(std::min(d, static_cast<double>(p.max)));
  if (!p.jitter || capped <= 0) return capped;
  // Full jitter: uniform in [0, capped], from the seed rather than a random draw.
  seed ^= seed >> 31;
  seed *= 0x7fb5d329728ea185ULL;
  seed ^= seed >> 27;
  return static_cast<duration_ms>(seed % static_cast<uint64_t>(capped + 1));
}

bool should_retry(const retry_policy& p, const instance& x, instance_state outcome,
                  int32_t exit_code, unix_ms next_at) {
  if (outcome != instance_state::failed && outcome != instance_state::timed_out) return false;
  if (x.attempt >= p.max_attempts) return false;
  // A list of exit codes filters every policy, so `exponential` with `error_codes`
  // backs off exponentially and retries only those codes.
  if ((p.kind == retry_kind::on_error_codes || !p.error_codes.empty()) &&
      (outcome != instance_state::failed ||
       std::find(p.error_codes.begin(), p.error_codes.end(), exit_code) == p.error_codes.end()))
    return false;
  if (p.window > 0 && next_at > x.slot + p.window) return false;
  return true;
}

}  // namespace aisched::retry
