// Tests for retry::backoff and retry::should_retry (pure policy arithmetic): fixed and
// exponential backoff with cap, deterministic full jitter, and the retry decision (attempts
// left, on_error_codes, retry window, outcomes that are never retried).
#include "proto/backoff.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace aisched::retry {
namespace {

using proto::instance;
using proto::instance_state;
using proto::retry_kind;
using proto::retry_policy;

retry_policy fixed(duration_ms interval) {
  retry_policy p;
  p.kind = retry_kind::fixed;
  p.interval = interval;
  return p;
}

retry_policy exponential(duration_ms initial, double multiplier, duration_ms max) {
  retry_policy p;
  p.kind = retry_kind::exponential;
  p.initial = initial;
  p.multiplier = multiplier;
  p.max = max;
  return p;
}

instance at_attempt(uint32_t attempt, unix_ms slot = 1'700'000'000'000) {
  instance x;
  x.id = "7-1700000000000-0";
  x.slot = slot;
  x.attempt = attempt;
  return x;
}

// -- backoff -------------------------------------------------------------------

TEST(backoff, fixed_waits_the_interval_after_every_attempt) {
  auto p = fixed(2500);
  for (uint32_t attempt : {1u, 2u, 3u, 10u, 1000u}) EXPECT_EQ(backoff(p, attempt, 42), 2500);
}

TEST(backoff, fixed_ignores_exponential_fields_and_jitter) {
  auto p = fixed(700);
  p.initial = 1;
  p.multiplier = 10;
  p.max = 5;
  p.jitter = true;
  EXPECT_EQ(backoff(p, 4, 123456789), 700);
}

TEST(backoff, negative_interval_is_treated_as_zero) { EXPECT_EQ(backoff(fixed(-5), 1, 0), 0); }

TEST(backoff, on_error_codes_waits_the_interval) {
  auto p = fixed(1500);
  p.kind = retry_kind::on_error_codes;
  p.error_codes = {3};
  EXPECT_EQ(backoff(p, 1, 0), 1500);
  EXPECT_EQ(backoff(p, 5, 0), 1500);
}

TEST(backoff, exponential_doubles_from_the_initial_value_up_to_the_cap) {
  auto p = exponential(1000, 2.0, 10'000);
  EXPECT_EQ(backoff(p, 1, 0), 1000);
  EXPECT_EQ(backoff(p, 2, 0), 2000);
  EXPECT_EQ(backoff(p, 3, 0), 4000);
  EXPECT_EQ(backoff(p, 4, 0), 8000);
  EXPECT_EQ(backoff(p, 5, 0), 10'000);  // 16 s capped
  EXPECT_EQ(backoff(p, 6, 0), 10'000);
}

TEST(backoff, exponential_stays_at_the_cap_for_huge_attempt_numbers) {
  auto p = exponential(1000, 2.0, 600'000);
  EXPECT_EQ(backoff(p, 64, 0), 600'000);
  EXPECT_EQ(backoff(p, 5000, 0), 600'000);  // 2^4999 overflows a double: still the cap
  EXPECT_EQ(backoff(p, UINT32_MAX, 0), 600'000);
}

TEST(backoff, exponential_attempt_zero_counts_as_the_first) {
  EXPECT_EQ(backoff(exponential(1000, 3.0, 60'000), 0, 0), 1000);
}

TEST(backoff, exponential_with_other_multiplier) {
  auto p = exponential(500, 3.0, 60'000);
  EXPECT_EQ(backoff(p, 1, 0), 500);
  EXPECT_EQ(backoff(p, 2, 0), 1500);
  EXPECT_EQ(backoff(p, 3, 0), 4500);
  EXPECT_EQ(backoff(p, 4, 0), 13'500);
}

TEST(backoff, exponential_multiplier_below_one_never_shrinks) {
  auto p = exponential(1000, 0.5, 60'000);
  EXPECT_EQ(backoff(p, 1, 0), 1000);
  EXPECT_EQ(backoff(p, 5, 0), 1000);
}

TEST(backoff, initial_above_cap_is_capped) {
  EXPECT_EQ(backoff(exponential(90'000, 2.0, 30'000), 1, 0), 30'000);
}

TEST(backoff, jitter_is_deterministic_for_the_same_seed) {
  auto p = exponential(1000, 2.0, 60'000);
  p.jitter = true;
  for (uint64_t seed : std::vector<uint64_t>{1, 2, 99, stable_hash("7-1700000000000-0") ^ 3}) {
    auto a = backoff(p, 3, seed);
    EXPECT_EQ(a, backoff(p, 3, seed));
    EXPECT_GE(a, 0);
    EXPECT_LE(a, 4000);
  }
}

TEST(backoff, jitter_spreads_over_the_whole_range) {
  // Seeds as the state machine forms them: hash of the instance id ^ attempt.
  auto p = exponential(1000, 2.0, 60'000);
  p.jitter = true;
  const duration_ms cap = 8000;  // attempt 4
  std::set<duration_ms> distinct;
  int low = 0, high = 0;
  const int n = 1000;
  for (int i = 0; i < n; ++i) {
    auto seed = stable_hash("7-" + std::to_string(1'700'000'000'000 + i * 1000) + "-0") ^ 4u;
    auto d = backoff(p, 4, seed);
    ASSERT_GE(d, 0);
    ASSERT_LE(d, cap);
    distinct.insert(d);
    if (d < cap / 2)
      ++low;
    else
      ++high;
  }
  EXPECT_GT(distinct.size(), 500u);  // not a handful of values
  EXPECT_GT(low, n / 4);             // both halves of [0, cap] are used
  EXPECT_GT(high, n / 4);
}

TEST(backoff, jitter_with_zero_backoff_is_zero) {
  auto p = exponential(0, 2.0, 60'000);
  p.jitter = true;
  EXPECT_EQ(backoff(p, 3, 12345), 0);
}

RC_GTEST_PROP(backoff, exponential_is_monotonic_and_within_cap, (uint32_t attempt)) {
  const auto initial = *rc::gen::inRange<duration_ms>(1, 100'000);
  const auto max = *rc::gen::inRange<duration_ms>(1, 10'000'000);
  const auto multiplier = *rc::gen::element(1.0, 1.5, 2.0, 3.0, 10.0);
  auto p = exponential(initial, multiplier, max);
  auto a = *rc::gen::inRange<uint32_t>(1, 200);
  auto d = backoff(p, a, 0);
  RC_ASSERT(d <= max);
  RC_ASSERT(d >= std::min(initial, max));
  RC_ASSERT(backoff(p, a + 1, 0) >= d);
  RC_ASSERT(backoff(p, attempt, 0) <= max);
}

RC_GTEST_PROP(backoff, jitter_stays_within_zero_and_the_unjittered_value, (uint64_t seed)) {
  auto p = exponential(*rc::gen::inRange<duration_ms>(1, 100'000), 2.0,
                       *rc::gen::inRange<duration_ms>(1, 10'000'000));
  auto attempt = *rc::gen::inRange<uint32_t>(1, 64);
  auto plain = backoff(p, attempt, seed);
  p.jitter = true;
  auto jittered = backoff(p, attempt, seed);
  RC_ASSERT(jittered >= 0);
  RC_ASSERT(jittered <= plain);
  RC_ASSERT(jittered == backoff(p, attempt, seed));
}

// -- should_retry ---------------------------------------------------------------

TEST(should_retry, retries_failed_and_timed_out_while_attempts_are_left) {
  auto p = fixed(1000);
  p.max_attempts = 3;
  EXPECT_TRUE(should_retry(p, at_attempt(1), instance_state::failed, 1, 0));
  EXPECT_TRUE(should_retry(p, at_attempt(2), instance_state::failed, 1, 0));
  EXPECT_TRUE(should_retry(p, at_attempt(2), instance_state::timed_out, 137, 0));
  EXPECT_FALSE(should_retry(p, at_attempt(3), instance_state::failed, 1, 0));
  EXPECT_FALSE(should_retry(p, at_attempt(3), instance_state::timed_out, 137, 0));
  EXPECT_FALSE(should_retry(p, at_attempt(4), instance_state::failed, 1, 0));
}

TEST(should_retry, max_attempts_one_means_no_retry) {
  auto p = exponential(1000, 2.0, 60'000);
  p.max_attempts = 1;
  EXPECT_FALSE(should_retry(p, at_attempt(1), instance_state::failed, 1, 0));
}

TEST(should_retry, success_and_other_outcomes_are_never_retried) {
  for (auto kind : {retry_kind::fixed, retry_kind::exponential, retry_kind::on_error_codes}) {
    retry_policy p;
    p.kind = kind;
    p.max_attempts = 10;
    p.error_codes = {0, 1};
    for (auto s :
         {instance_state::success, instance_state::cancelled, instance_state::pending,
          instance_state::dispatched, instance_state::running, instance_state::retry_waiting}) {
      EXPECT_FALSE(should_retry(p, at_attempt(1), s, 0, 0))
          << proto::name_of(kind) << " " << proto::name_of(s);
      EXPECT_FALSE(should_retry(p, at_attempt(1), s, 1, 0))
          << proto::name_of(kind) << " " << proto::name_of(s);
    }
  }
}

TEST(should_retry, on_error_codes_retries_only_listed_exit_codes) {
  retry_policy p;
  p.kind = retry_kind::on_error_codes;
  p.max_attempts = 5;
  p.error_codes = {3, 75};
  EXPECT_TRUE(should_retry(p, at_attempt(1), instance_state::failed, 3, 0));
  EXPECT_TRUE(should_retry(p, at_attempt(1), instance_state::failed, 75, 0));
  EXPECT_FALSE(should_retry(p, at_attempt(1), instance_state::failed, 1, 0));
  EXPECT_FALSE(should_retry(p, at_attempt(1), instance_state::failed, 0, 0));
  EXPECT_FALSE(should_retry(p, at_attempt(1), instance_state::failed, -1, 0));
  EXPECT_FALSE(should_retry(p, at_attempt(5), instance_state::failed, 3, 0));  // none left
}

// Exit codes combine with exponential backoff: only listed codes retry, each
// after the exponential delay for its attempt.
TEST(should_retry, exponential_with_error_codes_retries_only_listed_codes_backing_off) {
  auto p = exponential(1000, 2.0, 60'000);
  p.max_attempts = 5;
  p.error_codes = {75};
  EXPECT_TRUE(should_retry(p, at_attempt(1), instance_state::failed, 75, 0));
  EXPECT_TRUE(should_retry(p, at_attempt(3), instance_state::failed, 75, 0));
  EXPECT_FALSE(should_retry(p, at_attempt(1), instance_state::failed, 1, 0));
  EXPECT_FALSE(should_retry(p, at_attempt(1), instance_state::timed_out, 75, 0));
  EXPECT_FALSE(should_retry(p, at_attempt(5), instance_state::failed, 75, 0));
  EXPECT_EQ(backoff(p, 1, 0), 1000);
  EXPECT_EQ(backoff(p, 2, 0), 2000);
  EXPECT_EQ(backoff(p, 3, 0), 4000);
  // Without a list, exponential still retries every failure.
  p.error_codes.clear();
  EXPECT_TRUE(should_retry(p, at_attempt(1), instance_state::failed, 1, 0));
}

TEST(should_retry, on_error_codes_does_not_retry_timeouts) {
  retry_policy p;
  p.kind = retry_kind::on_error_codes;
  p.max_attempts = 5;
  p.error_codes = {137, 3};  // even the exit code a killed run gets
  EXPECT_FALSE(should_retry(p, at_attempt(1), instance_state::timed_out, 137, 0));
  EXPECT_FALSE(should_retry(p, at_attempt(1), instance_state::timed_out, 3, 0));
}

TEST(should_retry, on_error_codes_with_empty_list_never_retries) {
  retry_policy p;
  p.kind = retry_kind::on_error_codes;
  p.max_attempts = 5;
  EXPECT_FALSE(should_retry(p, at_attempt(1), instance_state::failed, 1, 0));
}

TEST(should_retry, window_excludes_attempts_past_slot_plus_window) {
  const unix_ms slot = 1'700'000'000'000;
  auto p = fixed(1000);
  p.max_attempts = 10;
  p.window = 60'000;
  auto x = at_attempt(2, slot);
  EXPECT_TRUE(should_retry(p, x, instance_state::failed, 1, slot + 1000));
  EXPECT_TRUE(should_retry(p, x, instance_state::failed, 1, slot + 60'000));  // boundary
  EXPECT_FALSE(should_retry(p, x, instance_state::failed, 1, slot + 60'001));
  EXPECT_FALSE(should_retry(p, x, instance_state::timed_out, 137, slot + 120'000));
}

TEST(should_retry, zero_window_is_unbounded) {
  const unix_ms slot = 1'700'000'000'000;
  auto p = fixed(1000);
  p.max_attempts = 10;
  p.window = 0;
  EXPECT_TRUE(should_retry(p, at_attempt(2, slot), instance_state::failed, 1,
                           slot + 365LL * 24 * 3600 * 1000));
}

RC_GTEST_PROP(should_retry, never_retries_beyond_max_attempts, ()) {
  retry_policy p;
  p.kind =
      *rc::gen::element(retry_kind::fixed, retry_kind::exponential, retry_kind::on_error_codes);
  p.max_attempts = *rc::gen::inRange<uint32_t>(1, 20);
  p.error_codes = *rc::gen::container<std::vector<int32_t>>(rc::gen::inRange(-2, 200));
  p.window = *rc::gen::element<duration_ms>(0, 1000, 60'000);
  auto attempt = *rc::gen::inRange<uint32_t>(1, 25);
  auto outcome = *rc::gen::element(instance_state::failed, instance_state::timed_out,
                                   instance_state::success, instance_state::cancelled);
  auto code = *rc::gen::inRange(-2, 200);
  const unix_ms slot = 1'700'000'000'000;
  auto next_at = slot + *rc::gen::inRange<duration_ms>(0, 120'000);
  bool r = should_retry(p, at_attempt(attempt, slot), outcome, code, next_at);
  if (r) {
    RC_ASSERT(attempt < p.max_attempts);
    RC_ASSERT(outcome == instance_state::failed || outcome == instance_state::timed_out);
    RC_ASSERT(p.window == 0 || next_at <= slot + p.window);
    if (p.kind == retry_kind::on_error_codes || !p.error_codes.empty()) {
      RC_ASSERT(outcome == instance_state::failed);
      RC_ASSERT(std::find(p.error_codes.begin(), p.error_codes.end(), code) !=
                p.error_codes.end());
    }
  }
}

}  // namespace
}  // namespace aisched::retry
