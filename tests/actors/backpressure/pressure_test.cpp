// Tests for the backpressure arithmetic (actors/backpressure/pressure.hpp): the level that
// assess() gives at the documented thresholds (green < 0.7 <= yellow < 0.9 <= red of
// max_backlog; worker load >= 0.85 forces at least yellow; only yellow carries a delay).
// The dispatch token bucket's tests are tests/common/token_bucket_test.cpp.
#include "actors/backpressure/pressure.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>

namespace aisched::backpressure {
namespace {

using proto::pressure;
using proto::pressure_level;

thresholds limits(uint64_t max_backlog) {
  thresholds t;
  t.max_backlog = max_backlog;
  t.yellow_delay = 750;
  return t;
}

// -- assess ------------------------------------------------------------------

TEST(assess, backlog_levels_switch_exactly_at_the_documented_ratios) {
  auto t = limits(1000);
  EXPECT_EQ(assess(t, 0, 0.0).level, pressure_level::green);
  EXPECT_EQ(assess(t, 699, 0.0).level, pressure_level::green);
  EXPECT_EQ(assess(t, 700, 0.0).level, pressure_level::yellow);
  EXPECT_EQ(assess(t, 899, 0.0).level, pressure_level::yellow);
  EXPECT_EQ(assess(t, 900, 0.0).level, pressure_level::red);
  EXPECT_EQ(assess(t, 1000, 0.0).level, pressure_level::red);
  EXPECT_EQ(assess(t, 50'000, 0.0).level, pressure_level::red);
  // A small maximum: 7 of 10 is exactly the yellow ratio, 9 of 10 the red one.
  auto small = limits(10);
  EXPECT_EQ(assess(small, 6, 0.0).level, pressure_level::green);
  EXPECT_EQ(assess(small, 7, 0.0).level, pressure_level::yellow);
  EXPECT_EQ(assess(small, 8, 0.0).level, pressure_level::yellow);
  EXPECT_EQ(assess(small, 9, 0.0).level, pressure_level::red);
}

TEST(assess, only_yellow_carries_the_delay) {
  auto t = limits(1000);
  EXPECT_EQ(assess(t, 100, 0.0).delay, 0);
  EXPECT_EQ(assess(t, 700, 0.0).delay, 750);
  EXPECT_EQ(assess(t, 800, 0.5).delay, 750);
  EXPECT_EQ(assess(t, 950, 0.0).delay, 0) << "red defers; it has no delay";
  thresholds defaults;
  EXPECT_EQ(assess(defaults, defaults.max_backlog, 0.0).level, pressure_level::red);
  EXPECT_EQ(assess(defaults, 750, 0.0).delay, 500) << "the default yellow delay";
}

TEST(assess, worker_load_at_the_throttle_forces_at_least_yellow) {
  auto t = limits(1000);
  EXPECT_EQ(assess(t, 0, 0.84).level, pressure_level::green);
  auto p = assess(t, 0, 0.85);
  EXPECT_EQ(p.level, pressure_level::yellow);
  EXPECT_EQ(p.delay, 750);
  EXPECT_EQ(assess(t, 0, 1.0).level, pressure_level::yellow);
  EXPECT_EQ(assess(t, 750, 0.95).level, pressure_level::yellow);
  EXPECT_EQ(assess(t, 900, 0.95).level, pressure_level::red) << "load never lowers red";
  EXPECT_EQ(assess(t, 900, 0.0).level, pressure_level::red);
}

TEST(assess, zero_max_backlog_counts_no_backlog) {
  auto t = limits(0);
  EXPECT_EQ(assess(t, 1'000'000, 0.0).level, pressure_level::green);
  EXPECT_EQ(assess(t, 1'000'000, 0.9).level, pressure_level::yellow);
}

RC_GTEST_PROP(assess, level_is_monotonic_in_backlog_and_load, ()) {
  auto t = limits(*rc::gen::inRange<uint64_t>(1, 100'000));
  auto backlog = *rc::gen::inRange<uint64_t>(0, 200'000);
  auto more = backlog + *rc::gen::inRange<uint64_t>(0, 200'000);
  auto load = *rc::gen::inRange(0, 101) / 100.0;
  auto more_load = std::min(1.0, load + *rc::gen::inRange(0, 101) / 100.0);
  auto a = assess(t, backlog, load);
  RC_ASSERT(assess(t, more, load).level >= a.level);
  RC_ASSERT(assess(t, backlog, more_load).level >= a.level);
  RC_ASSERT((a.level == pressure_level::yellow) == (a.delay == t.yellow_delay));
  if (a.level != pressure_level::yellow) RC_ASSERT(a.delay == 0);
}

}  // namespace
}  // namespace aisched::backpressure
