// The token bucket; see token_bucket.hpp.
#include "common/token_bucket.hpp"

#include <algorithm>
#include <cmath>

namespace aisched {

namespace {
// Floating-point slack in token arithmetic (tokens and milliseconds).
constexpr double epsilon = 1e-9;
}  // namespace

token_bucket::token_bucket(double rate, double burst, unix_ms now)
    : rate_(rate), burst_(std::max(burst, 1.0)), tokens_(std::max(burst, 1.0)), last_(now) {}

void token_bucket::refill(unix_ms now) {
  if (now <= last_) return;
  tokens_ = std::min(burst_, tokens_ + rate_ * static_cast<double>(now - last_) / 1000.0);
  last_ = now;
}

uint64_t token_bucket::take(uint64_t want, unix_ms now) {
  if (unlimited()) return want;
  refill(now);
  // The same tolerance as wait_ms(): a bucket a rounding error short of a whole
  // token has it (so waiting wait_ms() always yields one).
  auto whole = std::floor(tokens_ + epsilon);
  auto granted = std::min<uint64_t>(want, static_cast<uint64_t>(whole));
  tokens_ = std::max(0.0, tokens_ - static_cast<double>(granted));
  return granted;
}

duration_ms token_bucket::wait_ms(unix_ms now) {
  if (unlimited()) return 0;
  refill(now);
  if (tokens_ + epsilon >= 1.0) return 0;
  // The epsilon keeps a whole-millisecond wait from rounding up one more.
  return static_cast<duration_ms>(std::ceil((1.0 - tokens_) * 1000.0 / rate_ - epsilon));
}

double token_bucket::tokens(unix_ms now) {
  if (unlimited()) return burst_;
  refill(now);
  return tokens_;
}

}  // namespace aisched
