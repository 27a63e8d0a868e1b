// Tests for obs/metrics: events recorded through the pre-resolved handles show
// up as the right samples in the serialized text, which is well-formed
// Prometheus text format 0.0.4 and carries every family of issue #7, and
// every ai_requests_total series (rejected answers included) from the start.
#include "obs/metrics.hpp"

#include <vector>

#include <string>

#include <gtest/gtest.h>

#include "support/prometheus_text.hpp"

namespace aisched::obs {
namespace {

using test::parse_prometheus_text;

TEST(metrics_test, recorded_events_appear_as_samples_in_valid_text) {
  auto& m = get();
  m.dispatch_ok.inc(3);
  m.dispatch_error.inc();
  m.slots_fired.inc(2);
  m.slots_deduplicated.inc();
  m.trigger_lateness_seconds.observe(0.003);
  m.trigger_lateness_seconds.observe(2);
  m.instances[0].set(7);  // pending
  m.executions[3].inc();  // success
  m.raft_term.set(4);
  m.backpressure_state.set(2);
  http_route("/api/v1/tasks/{id}").record(404, 0.002);

  auto text = parse_prometheus_text(serialize());
  for (auto& e : text.errors) ADD_FAILURE() << e;
  EXPECT_EQ(text.value("scheduler_dispatch_total", {{"result", "ok"}}), 3);
  EXPECT_EQ(text.value("scheduler_dispatch_total", {{"result", "error"}}), 1);
  EXPECT_EQ(text.value("scheduler_dispatch_total", {{"result", "refused"}}), 0);
  EXPECT_EQ(text.value("scheduler_slots_total", {{"outcome", "fired"}}), 2);
  EXPECT_EQ(text.value("scheduler_slots_total", {{"outcome", "deduplicated"}}), 1);
  EXPECT_EQ(text.value("scheduler_slots_total", {{"outcome", "missed"}}), 0);
  EXPECT_EQ(text.value("scheduler_trigger_lateness_seconds_count"), 2);
  EXPECT_EQ(text.value("scheduler_trigger_lateness_seconds_bucket", {{"le", "0.005"}}), 1);
  EXPECT_EQ(text.value("scheduler_trigger_lateness_seconds_bucket", {{"le", "+Inf"}}), 2);
  EXPECT_DOUBLE_EQ(text.value("scheduler_trigger_lateness_seconds_sum").value_or(0), 2.003);
  EXPECT_EQ(text.value("scheduler_instances", {{"state", "pending"}}), 7);
  EXPECT_EQ(text.value("scheduler_instances", {{"state", "retry_waiting"}}), 0);
  EXPECT_EQ(text.value("worker_executions_total", {{"status", "success"}}), 1);
  EXPECT_EQ(text.value("worker_executions_total", {{"status", "timed_out"}}), 0);
  EXPECT_FALSE(text.value("worker_executions_total", {{"status", "pending"}}))
      << "only final states get their own series";
  EXPECT_EQ(text.value("raft_term"), 4);
  EXPECT_EQ(text.value("scheduler_backpressure_state"), 2);
  EXPECT_EQ(
      text.value("gateway_requests_total", {{"route", "/api/v1/tasks/{id}"}, {"code", "404"}}), 1);
  EXPECT_EQ(text.value("gateway_request_duration_seconds_count", {{"route", "/api/v1/tasks/{id}"}}),
            1);
  EXPECT_EQ(text.value("aisched_build_info", {{"version", AISCHED_VERSION}}), 1);
}

TEST(metrics_test, every_family_of_the_issue_is_registered_with_its_type) {
  // The gateway's series appear with a route's first request (the others exist from the start).
  http_route("/healthz").record(200, 0.0001);
  auto text = parse_prometheus_text(serialize());
  const std::pair<const char*, const char*> families[] = {
      {"scheduler_dispatch_total", "counter"},
      {"leader_election_total", "counter"},
      {"worker_executions_total", "counter"},
      {"scheduler_trigger_lateness_seconds", "histogram"},
      {"scheduler_instances", "gauge"},
      {"scheduler_backpressure_state", "gauge"},
      {"scheduler_dispatch_tokens", "gauge"},
      {"raft_term", "gauge"},
      {"raft_commit_index", "gauge"},
      {"raft_applied_index", "gauge"},
      {"raft_append_latency_seconds", "histogram"},
      {"worker_inflight", "gauge"},
      {"tasks_mutations_total", "counter"},
      {"scheduler_slots_total", "counter"},
      {"gateway_requests_total", "counter"},
      {"gateway_request_duration_seconds", "histogram"},
      {"aisched_build_info", "gauge"},
      {"process_resident_memory_bytes", "gauge"},
      {"backups_total", "counter"},  // issue 46: scheduled backups
      {"backup_failures_total", "counter"},
      {"backup_last_success_timestamp_seconds", "gauge"},
  };
  for (auto [name, type] : families) {
    auto i = text.types.find(name);
    ASSERT_NE(i, text.types.end()) << name << " is not registered";
    EXPECT_EQ(i->second, type) << name;
  }
}

TEST(metrics_test, every_ai_request_series_is_exported_from_the_start_invalid_included) {
  // A rejected model answer has its own result (issue 43 item 8): with its
  // series at 0 from start-up, rate() and absent() read it like the others.
  auto text = parse_prometheus_text(serialize());
  for (auto feature : {"chat", "analysis", "advice", "trends", "task_draft", "duration"})
    for (auto result : {"ok", "fallback", "invalid", "error", "rate_limited"})
      EXPECT_EQ(text.value("ai_requests_total", {{"feature", feature}, {"result", result}}), 0)
          << feature << " " << result;
}

TEST(metrics_test, resident_memory_is_this_processes_read_at_each_scrape) {
  auto before = parse_prometheus_text(serialize())
                    .value("process_resident_memory_bytes", {})
                    .value_or(0);
  EXPECT_GT(before, 1 << 20) << "a process holds more than a MiB resident";
  // 64 MiB touched shows in the next scrape, not a cached figure.
  std::vector<char> touched(64 << 20, 1);
  auto after = parse_prometheus_text(serialize())
                   .value("process_resident_memory_bytes", {})
                   .value_or(0);
  EXPECT_GT(after, before + (48 << 20)) << "before " << before << ", after " << after;
  EXPECT_EQ(touched[12345], 1);
}

TEST(metrics_test, routes_share_a_series_per_pattern_and_code) {
  http_route a("/api/v1/workers");
  http_route b("/api/v1/workers");  // a second handle on the same pattern
  a.record(200, 0.001);
  b.record(200, 0.001);
  a.record(503, 0.001);
  a.record(999, 0.001);  // not an HTTP status: one shared "other" series
  auto text = parse_prometheus_text(serialize());
  EXPECT_EQ(text.value("gateway_requests_total", {{"route", "/api/v1/workers"}, {"code", "200"}}),
            2);
  EXPECT_EQ(text.value("gateway_requests_total", {{"route", "/api/v1/workers"}, {"code", "503"}}),
            1);
  EXPECT_EQ(text.value("gateway_requests_total", {{"route", "/api/v1/workers"}, {"code", "other"}}),
            1);
}

TEST(prometheus_text_test, the_checker_rejects_what_a_scraper_would) {
  auto bad = parse_prometheus_text(
      "# TYPE x_total counter\n"
      "x_total{a=\"1\"} 1\n"
      "y 2\n"                     // no TYPE
      "# TYPE z counter\n"        // counter without _total
      "x_total{a=1} 1\n"          // unquoted label value
      "x_total{a=\"1\"} one\n");  // not a number
  EXPECT_EQ(bad.errors.size(), 4u);
  for (auto& e : bad.errors) SCOPED_TRACE(e);
}

}  // namespace
}  // namespace aisched::obs
