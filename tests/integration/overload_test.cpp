// Overload on a node started the way `make run` starts one (no tuning flags):
// ten times the default backlog limit of runs due at one instant turn backpressure red, and
// the node still drains them all. Red defers new fires (counted as
// scheduler_slots_total{outcome="deferred"}) and never stops dispatching; the
// level returns to green by itself; the slots a periodic task missed meanwhile
// are counted as deferred and handled by its misfire policy.
#include <atomic>
#include <set>
#include <string>
#include <thread>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/prometheus_text.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;

namespace {

constexpr size_t default_max_backlog = 1000;  // runtime/config.hpp

std::string level_of(uint16_t port) {
  auto r = http_call(port, "GET", "/api/v1/backpressure", "", std::chrono::seconds(2));
  if (r.status != 200) return "";
  return str(parse(r).as_object(), "state");
}

double metric(uint16_t port, const std::string& name,
              const std::map<std::string, std::string>& labels) {
  auto r = http_call(port, "GET", "/metrics");
  return parse_prometheus_text(r.body).value(name, labels).value_or(0);
}

/// The lines of `log` that contain `what`.
std::string lines_with(const std::string& log, const std::string& what) {
  std::string out;
  size_t at = 0;
  while (at < log.size()) {
    auto end = log.find('\n', at);
    if (end == std::string::npos) end = log.size();
    auto line = log.substr(at, end - at);
    if (line.find(what) != std::string::npos) out += line + "\n";
    at = end + 1;
  }
  return out;
}

}  // namespace

TEST(overload, a_burst_of_ten_times_the_backlog_drains_and_backpressure_recovers) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  // A periodic task whose slots come due while the burst holds pressure red:
  // they are deferred, not lost.
  ASSERT_NE(create_task(port, R"({"name":"tick","kind":"noop","schedule":"@every 100ms","overlap":"allow","misfire":"fire_once"})"), 0);

  std::atomic<bool> done{false};
  std::set<std::string> seen;
  std::thread watch([&] {
    while (!done) {
      auto l = level_of(port);
      if (!l.empty()) seen.insert(l);
      struct timespec ts{0, 10'000'000};
      nanosleep(&ts, nullptr);
    }
  });
  auto n = std::to_string(10 * default_max_backlog);
  auto r = run_command({AISCHED_LOAD_BINARY, "burst", "--n", n, "--lead", "20", "--server",
                        "http://127.0.0.1:" + std::to_string(port), "-o", "json"},
                       std::chrono::seconds(240));
  done = true;
  watch.join();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << tail(node.log());
  auto report = json::parse(r.out).as_object();
  EXPECT_EQ(num(report, "runs"), 10 * default_max_backlog);
  // Fired ahead of their instant, held on the worker (64 slots for 10 000 runs):
  // none started before it.
  auto& start = report.at("start_lateness").as_object();
  EXPECT_EQ(start.at("n").to_number<double>(), 10.0 * default_max_backlog);
  EXPECT_GE(start.at("min_ms").to_number<double>(), 0.0) << json::serialize(start);
  EXPECT_TRUE(seen.count("red")) << "backpressure never went red";
  EXPECT_TRUE(eventually([&] { return level_of(port) == "green"; }, std::chrono::seconds(30)));
  EXPECT_GE(metric(port, "scheduler_dispatch_total", {{"result", "ok"}}),
            10.0 * default_max_backlog);
  EXPECT_GT(metric(port, "scheduler_slots_total", {{"outcome", "deferred"}}), 0.0)
      << "the periodic task's slots during red were not deferred";
  // Both transitions are logged for the operator. The green line is an info
  // line: it may wait in the log's buffer (up to a flush) after the level is served.
  std::string changes;
  eventually([&] {
    changes = lines_with(node.log(), "backpressure level changed");
    return changes.find(R"("pressure":"green")") != std::string::npos;
  });
  EXPECT_NE(changes.find(R"("pressure":"red")"), std::string::npos) << changes;
  EXPECT_NE(changes.find(R"("pressure":"green")"), std::string::npos) << changes;
  // A manual trigger after the storm runs to the end.
  auto t = create_task(port, R"({"name":"after","command":"echo after"})");
  ASSERT_EQ(http_call(port, "POST", "/api/v1/tasks/" + std::to_string(t) + "/trigger").status,
            201u);
  EXPECT_TRUE(eventually(
      [&] {
        auto l = http_call(port, "GET", "/api/v1/instances?task_id=" + std::to_string(t));
        auto v = parse(l);
        auto& items = v.as_object().at("items").as_array();
        return !items.empty() && str(items[0].as_object(), "state") == "success";
      },
      std::chrono::seconds(30)));
}
