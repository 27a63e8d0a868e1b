// GET /metrics on a real single `aisched` node: after a task is created,
// triggered and has run, the scrape is valid Prometheus text with the run
// counted where it happened (trigger, router, worker, raft, gateway), labels
// carry route patterns and never ids, and the instance gauges are right again
// after a restart.
#include <signal.h>

#include <string>

#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/prometheus_text.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
using namespace std::chrono_literals;

namespace {

/// Scrapes /metrics; a failure (and an empty result) unless it is valid text.
prom_text scrape(uint16_t port) {
  auto r = http_call(port, "GET", "/metrics");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.content_type.rfind("text/plain; version=0.0.4", 0), 0u) << r.content_type;
  auto text = parse_prometheus_text(r.body);
  for (auto& e : text.errors) ADD_FAILURE() << e;
  return text;
}

double value(const prom_text& t, const std::string& name,
             const std::map<std::string, std::string>& labels = {}) {
  auto v = t.value(name, labels);
  EXPECT_TRUE(v) << "no sample " << name;
  return v.value_or(-1);
}

}  // namespace

TEST(metrics_node, a_triggered_run_is_counted_where_it_happens) {
  temp_dir dir;
  auto data = dir.path() + "/data";
  std::string instance_id;
  {
    node_process node(data);
    ASSERT_TRUE(node.running());
    auto port = node.http_port();
    auto created = http_call(port, "POST", "/api/v1/tasks",
                             R"({"name":"metered","kind":"shell","command":"true"})");
    ASSERT_EQ(created.status, 201u) << created.body;
    auto id = num(parse(created).as_object(), "id");
    auto fired = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger");
    ASSERT_EQ(fired.status, 201u) << fired.body;
    auto v = parse(fired);
    instance_id = str(v.at("instances").as_array().at(0).as_object(), "id");
    ASSERT_FALSE(instance_id.empty());
    ASSERT_TRUE(eventually(
        [&] {
          auto r = http_call(port, "GET", "/api/v1/instances/" + instance_id);
          return r.status == 200 && str(parse(r).as_object(), "state") == "success";
        },
        20s))
        << tail(node.log());

    auto t = scrape(port);
    EXPECT_GE(value(t, "worker_executions_total", {{"status", "success"}}), 1);
    EXPECT_GE(value(t, "scheduler_slots_total", {{"outcome", "fired"}}), 1);
    EXPECT_GE(value(t, "scheduler_dispatch_total", {{"result", "ok"}}), 1);
    EXPECT_GE(value(t, "tasks_mutations_total", {{"action", "create"}}), 1);
    EXPECT_GE(value(t, "scheduler_instances", {{"state", "success"}}), 1);
    EXPECT_EQ(value(t, "scheduler_instances", {{"state", "pending"}}), 0);
    EXPECT_GE(value(t, "raft_term"), 1);
    EXPECT_GE(value(t, "leader_election_total", {{"result", "won"}}), 1);
    EXPECT_GE(value(t, "raft_commit_index"), 1);
    EXPECT_GE(value(t, "raft_applied_index"), 1);
    EXPECT_GE(value(t, "raft_append_latency_seconds_count"), 1);
    EXPECT_EQ(value(t, "worker_inflight"), 0);
    EXPECT_EQ(value(t, "scheduler_backpressure_state"), 0);
    EXPECT_EQ(value(t, "aisched_build_info"), 1);
    // Documented series are exported before their first increment.
    EXPECT_EQ(value(t, "ai_requests_total", {{"feature", "chat"}, {"result", "ok"}}), 0);
    EXPECT_EQ(value(t, "ai_requests_total", {{"feature", "analysis"}, {"result", "fallback"}}), 0);
    EXPECT_EQ(value(t, "gateway_requests_total", {{"route", "/api/v1/tasks"}, {"code", "201"}}), 1);
    EXPECT_GE(value(t, "gateway_requests_total", {{"route", "/api/v1/instances/{id}"}}), 1);
    EXPECT_GE(value(t, "gateway_request_duration_seconds_count", {{"route", "/api/v1/tasks"}}), 1);
    // Bounded cardinality: no id (task or instance) in any label.
    for (auto& s : t.samples)
      for (auto& [k, v] : s.labels) {
        EXPECT_EQ(v.find(instance_id), std::string::npos) << s.name << " " << k << "=" << v;
        EXPECT_EQ(v.find("/tasks/" + std::to_string(id)), std::string::npos) << s.name << " " << v;
      }
    EXPECT_EQ(node.stop(SIGTERM), 0);
  }

  // The instance gauges come from the replicated state, so a restart keeps them.
  node_process node(data);
  ASSERT_TRUE(node.running());
  auto t = scrape(node.http_port());
  EXPECT_EQ(value(t, "scheduler_instances", {{"state", "success"}}), 1);
  EXPECT_EQ(value(t, "worker_executions_total", {{"status", "success"}}), 0)
      << "counters start from zero in a new process";
}
