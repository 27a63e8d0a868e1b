// Duration statistics and directions computed by aisched: nearest-rank
// percentiles, a least-squares trend, failure slices of a window.
#include <gtest/gtest.h>

#include "actors/ai_features/stats.hpp"

using namespace aisched::ai;

TEST(stats, nearest_rank_percentiles) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_EQ(percentile(v, 50), 50);
  EXPECT_EQ(percentile(v, 95), 95);
  EXPECT_EQ(percentile(v, 100), 100);
  EXPECT_EQ(percentile(v, 0), 1);
  EXPECT_EQ(percentile({7}, 95), 7);
  EXPECT_EQ(percentile({}, 50), 0);
  EXPECT_EQ(percentile({1, 2, 3, 4}, 50), 2);
}

TEST(stats, duration_stats_of_unsorted_history) {
  auto s = compute_duration_stats({300, 100, 200, 1000, 400});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean_ms, 400);
  EXPECT_EQ(s.p50_ms, 300);
  EXPECT_EQ(s.p95_ms, 1000);
  EXPECT_EQ(s.max_ms, 1000);
  EXPECT_EQ(s.min_ms, 100);
}

TEST(stats, trend_rising_falling_stable) {
  EXPECT_EQ(compute_duration_stats({100, 120, 140, 160, 180, 200}).trend, "rising");
  EXPECT_EQ(compute_duration_stats({200, 180, 160, 140, 120, 100}).trend, "falling");
  EXPECT_EQ(compute_duration_stats({100, 102, 99, 101, 100, 98}).trend, "stable");
  EXPECT_EQ(compute_duration_stats({100, 500}).trend, "stable");  // too few runs
  auto s = compute_duration_stats({100, 200, 300, 400});
  EXPECT_NEAR(s.slope_ms_per_run, 100, 1e-9);
  EXPECT_NEAR(s.next_estimate_ms, 500, 1e-9);
}

TEST(stats, empty_history) {
  auto s = compute_duration_stats({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.p95_ms, 0);
  EXPECT_EQ(s.trend, "stable");
}

TEST(stats, failure_slices) {
  std::vector<run_outcome> runs{{0, false}, {10, true}, {50, true}, {99, false}, {100, true},
                                {-1, true}};
  auto s = slice_outcomes(runs, 0, 100, 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].start, 0);
  EXPECT_EQ(s[0].end, 50);
  EXPECT_EQ(s[0].runs, 2u);
  EXPECT_EQ(s[0].failures, 1u);
  EXPECT_EQ(s[1].runs, 2u);  // 50 and 99; 100 and -1 are outside
  EXPECT_DOUBLE_EQ(s[1].failure_rate(), 0.5);
  EXPECT_EQ(slice_outcomes({}, 0, 10, 0).size(), 1u);
}

TEST(stats, direction_of_points) {
  EXPECT_EQ(direction({{0, 0.1}, {1, 0.3}, {2, 0.5}, {3, 0.7}}), "rising");
  EXPECT_EQ(direction({{0, 0}, {1, 0}, {2, 0}}), "stable");
  EXPECT_EQ(direction({{0, 0.5}, {1, 0.5}}), "stable");
}
