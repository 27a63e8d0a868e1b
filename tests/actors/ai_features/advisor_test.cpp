// The advice and trend rules recommend throttle / scale / migrate / config from
// the facts that call for them, and nothing for a healthy cluster.
#include <gtest/gtest.h>

#include <algorithm>

#include "actors/ai_features/advisor.hpp"

using namespace aisched::ai;

namespace {

bool has(const std::vector<recommendation>& rs, const std::string& type, const std::string& target = "") {
  return std::any_of(rs.begin(), rs.end(), [&](auto& r) {
    return r.type == type && (target.empty() || r.target == target);
  });
}

}  // namespace

TEST(advisor, healthy_cluster_has_no_recommendation) {
  advice_facts f;
  f.workers = {{"w1", "online", 2, 16, 20, 30}, {"w2", "online", 3, 16, 25, 30}};
  f.max_backlog = 1000;
  f.runs_last_hour = 100;
  f.failures_last_hour = 1;
  EXPECT_TRUE(advise(f).empty());
}

TEST(advisor, red_backpressure_throttles_first) {
  advice_facts f;
  f.workers = {{"w1", "online", 15, 16, 50, 50}};
  f.pressure = "red";
  f.backlog = 950;
  f.max_backlog = 1000;
  auto rs = advise(f);
  ASSERT_FALSE(rs.empty());
  EXPECT_EQ(rs.front().priority, "high");
  EXPECT_TRUE(has(rs, "throttle"));
  EXPECT_TRUE(has(rs, "scale"));
}

TEST(advisor, hot_worker_beside_idle_one_migrates) {
  advice_facts f;
  f.workers = {{"hot", "online", 15, 16, 95, 40}, {"idle", "online", 1, 16, 5, 20}};
  auto rs = advise(f);
  EXPECT_TRUE(has(rs, "migrate", "worker:hot"));
  EXPECT_FALSE(has(rs, "scale"));
}

TEST(advisor, failing_tasks_and_slow_dispatch_need_config) {
  advice_facts f;
  f.workers = {{"w1", "online", 1, 16, 5, 5}, {"w2", "offline", 0, 16, 0, 0}};
  f.runs_last_hour = 10;
  f.failures_last_hour = 6;
  f.failures_by_task = {{42, 5}, {43, 1}};
  f.dispatch_samples = 10;
  f.dispatch_p95_ms = 9000;
  auto rs = advise(f);
  EXPECT_TRUE(has(rs, "config", "task:42"));
  EXPECT_FALSE(has(rs, "config", "task:43"));
  EXPECT_TRUE(has(rs, "config", "worker:w2"));
  EXPECT_TRUE(has(rs, "config", "cluster"));
}

TEST(advisor, no_workers_with_backlog_scales) {
  advice_facts f;
  f.backlog = 3;
  f.max_backlog = 1000;
  auto rs = advise(f);
  ASSERT_FALSE(rs.empty());
  EXPECT_EQ(rs.front().type, "scale");
}

TEST(advisor, trends) {
  trend_facts t;
  t.load_direction = "rising";
  t.utilization = 0.9;
  t.failure_direction = "rising";
  t.failure_rate = 0.3;
  t.runs = 50;
  auto rs = recommend_trends(t);
  EXPECT_TRUE(has(rs, "scale"));
  EXPECT_TRUE(has(rs, "config"));
  trend_facts quiet;
  quiet.runs = 50;
  EXPECT_TRUE(recommend_trends(quiet).empty());
}
