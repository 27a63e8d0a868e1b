// aisched-load's arithmetic: percentiles, fire and start lateness of runs, and
// the cap that the throughput scenario's own parameters put on its rate.
#include <gtest/gtest.h>

#include "tools/aisched-load/stats.hpp"

using namespace aisched::load;

TEST(load_stats, percentiles_are_nearest_rank) {
  std::vector<double> xs;
  for (int i = 100; i >= 1; --i) xs.push_back(i);  // any order
  auto p = summarize(xs);
  EXPECT_EQ(p.n, 100u);
  EXPECT_EQ(p.p50, 51);
  EXPECT_EQ(p.p90, 91);
  EXPECT_EQ(p.p99, 100);
  EXPECT_EQ(p.max, 100);
  auto empty = summarize({});
  EXPECT_EQ(empty.n, 0u);
  EXPECT_EQ(empty.max, 0);
}

TEST(load_stats, start_lateness_is_started_minus_due_of_started_runs) {
  std::vector<run_times> runs{
      {1'000, 1'001, 1'040, 1'050},  // fired 1 ms late, started 40 ms late
      {1'000, 1'000, 1'007, 1'009},
      {2'000, 2'003, 0, 0},  // fired, not started yet: no start lateness
      {3'000, 2'990, 2'995, 3'001},  // a clock step can make it negative; kept as is
  };
  EXPECT_EQ(start_lateness(runs), (std::vector<double>{40, 7, -5}));
  EXPECT_EQ(fire_lateness(runs), (std::vector<double>{1, 0, 3, -10}));
  auto p = summarize(start_lateness(runs));
  EXPECT_EQ(p.n, 3u);
  EXPECT_EQ(p.p50, 7);
  EXPECT_EQ(p.max, 40);
}

TEST(load_stats, throughput_is_capped_when_the_backlog_stays_full) {
  // 2 000 in flight at 2 600 runs/s: 769 ms in flight, 269 ms past --due-ms 500,
  // so the cap is 2 000 / 0.769 s = the measured rate.
  auto c = throughput_cap(2000, 500, 2000, 0, 2600);
  EXPECT_NEAR(c.pipeline_ms, 269.2, 0.1);
  EXPECT_NEAR(c.cap_per_s, 2600, 0.5);
  EXPECT_TRUE(c.capped);
  auto line = cap_warning(2000, 500, c, 2600);
  EXPECT_NE(line.find("--backlog"), std::string::npos) << line;
  EXPECT_NE(line.find("--due-ms"), std::string::npos) << line;
  // 92 % full is still within 10 % of the cap.
  EXPECT_TRUE(throughput_cap(2000, 500, 1840, 0, 2600).capped);
}

TEST(load_stats, a_full_backlog_held_in_the_nodes_queue_is_the_node_bound_not_the_tool) {
  // 97 000 of 100 000 in flight at 9 800 runs/s, 95 000 of them pending at the
  // node for a worker slot: Little's law puts the rate at the "cap", but more
  // backlog would only lengthen the node's queue.
  auto c = throughput_cap(100'000, 0, 97'000, 95'000, 9'800);
  EXPECT_TRUE(c.node_bound);
  EXPECT_FALSE(c.capped) << "the tool blamed its own --backlog for a node that could not keep up";
  // The same full backlog with the node's queue nearly empty: the runs spent
  // their time in the pipeline, and more of them in flight would go faster.
  auto tool = throughput_cap(100'000, 0, 97'000, 2'000, 9'800);
  EXPECT_FALSE(tool.node_bound);
  EXPECT_TRUE(tool.capped);
}

TEST(load_stats, idle_tasks_come_due_a_day_apart_spread_over_its_minutes) {
  EXPECT_EQ(idle_minute_of_day(0), 0u);
  EXPECT_EQ(idle_minute_of_day(1439), 1439u);
  EXPECT_EQ(idle_minute_of_day(1440), 0u) << "one task per minute of the day, then again";
  const aisched::unix_ms day = 86'400'000, minute = 60'000;
  // 3 000 tasks: minutes 0..119 hold three, the others two.
  EXPECT_EQ(idle_due(3000, 0, minute), 3u);
  EXPECT_EQ(idle_due(3000, 200 * minute, 203 * minute), 6u);
  EXPECT_EQ(idle_due(3000, 5 * day, 6 * day), 3000u) << "a whole day fires every task once";
  EXPECT_EQ(idle_due(1000, 1000 * minute, 1001 * minute), 0u) << "minute 1000 has no task";
}

TEST(load_stats, throughput_is_not_capped_when_the_backlog_has_room) {
  // Half the backlog in flight: the node, not the tool, set the rate.
  auto c = throughput_cap(2000, 500, 1000, 0, 1300);
  EXPECT_NEAR(c.cap_per_s, 2600, 0.5);
  EXPECT_FALSE(c.capped);
  // Nothing measured: the cap is backlog / due, and nothing is capped.
  auto none = throughput_cap(200, 500, 0, 0, 0);
  EXPECT_EQ(none.pipeline_ms, 0);
  EXPECT_EQ(none.cap_per_s, 400);
  EXPECT_FALSE(none.capped);
}
