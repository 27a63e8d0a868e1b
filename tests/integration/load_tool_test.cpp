// aisched-load against a real node with small bounds: `burst`, `throughput`
// and `idle` complete and report sane numbers in `-o json` (fire and start
// lateness; the throughput self-cap; memory per idle task and its fires).
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;

namespace {

json::object run_load(uint16_t port, std::vector<std::string> args,
                      std::chrono::seconds limit = std::chrono::seconds(120)) {
  std::vector<std::string> cmd{AISCHED_LOAD_BINARY};
  cmd.insert(cmd.end(), args.begin(), args.end());
  for (auto a : {"--server", "-o"}) cmd.push_back(a), cmd.push_back("");
  cmd[cmd.size() - 3] = "http://127.0.0.1:" + std::to_string(port);
  cmd.back() = "json";
  auto r = run_command(cmd, limit);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  boost::system::error_code ec;
  auto v = json::parse(r.out, ec);
  if (ec || !v.is_object()) {
    ADD_FAILURE() << "not a JSON report: " << r.out << r.err;
    return {};
  }
  return v.as_object();
}

double number(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_number() ? v->to_number<double>() : -1;
}

}  // namespace

TEST(load_tool, burst_fires_every_task_of_a_small_burst) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto r = run_load(node.http_port(), {"burst", "--n", "20", "--lead", "2"});
  EXPECT_EQ(number(r, "tasks"), 20);
  EXPECT_EQ(number(r, "runs"), 20);
  // A slot fires up to --fire-ahead-ms (250 by default), plus 0.1 ms for each
  // slot of its burst (trigger::planner::burst_cost_us), before its instant
  // and its run never starts before it.
  auto& late = r.at("fire_lateness").as_object();
  EXPECT_GE(number(late, "p50_ms"), -(250 + 20 * 0.1));
  EXPECT_LE(number(late, "p50_ms"), number(late, "p99_ms"));
  EXPECT_LE(number(late, "p99_ms"), number(late, "max_ms"));
  EXPECT_LT(number(late, "max_ms"), 10'000);
  // Each run starts after it fired, so each start-lateness percentile is at
  // least the same fire-lateness percentile.
  auto& start = r.at("start_lateness").as_object();
  EXPECT_EQ(number(start, "n"), 20);
  EXPECT_GE(number(start, "p50_ms"), 0) << "runs started before their instant";
  for (auto k : {"p50_ms", "p90_ms", "p99_ms", "max_ms"})
    EXPECT_GE(number(start, k), number(late, k)) << k;
  EXPECT_LE(number(start, "p90_ms"), number(start, "p99_ms"));
  EXPECT_GE(number(r, "all_started_after_ms"), number(r, "all_fired_after_ms"));
  EXPECT_LE(number(r, "all_started_after_ms"), number(r, "all_done_after_ms"));
}

TEST(load_tool, throughput_reports_fired_dispatched_and_committed_rates) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto r = run_load(node.http_port(),
                    {"throughput", "--duration", "3", "--n", "150", "--backlog", "30"});
  auto created = number(r, "tasks_created");
  EXPECT_GT(created, 0);
  EXPECT_LE(created, 150);
  EXPECT_TRUE(r.at("all_done").as_bool());
  auto fired = number(r, "fired"), dispatched = number(r, "dispatched"),
       committed = number(r, "committed");
  EXPECT_GT(committed, 0);
  // A run is counted dispatched before its execute is sent, so before its
  // result; fires are counted when the trigger hears of their commit, which can
  // trail the router's dispatch of the same runs by a message, so that pair is
  // bounded by what was created instead.
  EXPECT_LE(committed, dispatched);
  EXPECT_LE(committed, fired);
  EXPECT_LE(dispatched, created);
  EXPECT_LE(fired, created);
  EXPECT_GT(number(r, "committed_per_s"), 0);
  EXPECT_GT(number(r, "window_s"), 0);
  EXPECT_LE(number(r, "window_s"), 10);
  // The cap its own flags set: at most 30 in flight (plus one per connection
  // racing the check), a pipeline past --due-ms, and whether it was reached.
  EXPECT_GT(number(r, "mean_in_flight"), 0);
  EXPECT_LE(number(r, "mean_in_flight"), 30 + 8);
  EXPECT_GE(number(r, "pipeline_ms"), 0);
  EXPECT_GT(number(r, "self_cap_per_s"), 0);
  EXPECT_TRUE(r.at("self_capped").is_bool());
  EXPECT_TRUE(r.at("node_bound").is_bool());
  EXPECT_GE(number(r, "mean_queued_at_node"), 0);
  EXPECT_LE(number(r, "mean_queued_at_node"), 30 + 8)
      << "more runs pending at the node than the tool lets be in flight";
}

TEST(load_tool, bulk_throughput_counts_the_runs_retention_already_removed) {
  // Bulk runs of one task for a window longer than a retention sweep (every 10 s by
  // default, keeping 1 000 finished runs per task): most runs are gone before the
  // tool counts them, and it still sees every run done.
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto r = run_load(node.http_port(), {"throughput", "--duration", "12", "--n", "100000000",
                                       "--bulk", "500", "--concurrency", "1", "--backlog", "2000"});
  auto created = number(r, "tasks_created");
  EXPECT_GT(created, 1000);
  EXPECT_TRUE(r.at("all_done").as_bool()) << json::serialize(r);
  EXPECT_LE(number(r, "committed"), created);
  // Each enqueue's round trip is measured: one per 500 runs made, and the one
  // producer spends part of the window waiting for them, never more than all of it.
  auto& enq = r.at("enqueue_ms").as_object();
  EXPECT_GE(number(enq, "n"), created / 500);
  EXPECT_GT(number(enq, "p50_ms"), 0);
  EXPECT_GT(number(r, "producers_busy"), 0);
  EXPECT_LE(number(r, "producers_busy"), 1.0);
  auto metrics = http_call(node.http_port(), "GET", "/metrics");
  const std::string line = "\nscheduler_runs_pruned_total ";
  auto at = metrics.body.find(line);
  ASSERT_NE(at, std::string::npos);
  EXPECT_GT(std::stod(metrics.body.substr(at + line.size())), 0)
      << "no sweep ran: the test proves nothing";
}

TEST(load_tool, idle_tasks_fire_once_each_in_their_minute_and_cost_memory) {
  // 3 000 daily tasks: two or three come due in each minute of the day. The
  // window is the next whole minute after a 15 s settle, so this takes 1.5 to
  // 2.5 minutes, nearly all of it waiting.
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto r = run_load(node.http_port(),
                    {"idle", "--n", "3000", "--duration", "60", "--concurrency", "8"},
                    std::chrono::seconds(240));
  EXPECT_EQ(number(r, "tasks"), 3000);
  EXPECT_EQ(number(r, "window_s"), 60);
  auto expected = number(r, "expected_runs");
  EXPECT_GE(expected, 2);
  EXPECT_LE(expected, 3);
  EXPECT_EQ(number(r, "observed_runs"), expected);
  EXPECT_EQ(number(r, "duplicates"), 0);
  EXPECT_EQ(number(r, "missed"), 0);
  EXPECT_GT(number(r, "rss_before_bytes"), 0) << "the node exports process_resident_memory_bytes";
  EXPECT_GT(number(r, "rss_after_bytes"), number(r, "rss_before_bytes"));
  EXPECT_GT(number(r, "rss_bytes_per_task"), 0);
  auto& late = r.at("fire_lateness").as_object();
  EXPECT_EQ(number(late, "n"), expected);
  EXPECT_LT(number(late, "max_ms"), 10'000);
}
