// Tests for gateway/metrics_route: paths map to bounded route patterns (never
// raw ids), GET /metrics answers in Prometheus text format, and every other
// request is counted under its pattern and status once the inner handler
// answers.
#include "gateway/metrics_route.hpp"

#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "obs/metrics.hpp"
#include "support/prometheus_text.hpp"

namespace aisched::gateway {
namespace {

TEST(metrics_route_test, paths_map_to_their_route_pattern) {
  EXPECT_EQ(route_pattern("/api/v1/tasks"), "/api/v1/tasks");
  EXPECT_EQ(route_pattern("/api/v1/tasks/42"), "/api/v1/tasks/{id}");
  EXPECT_EQ(route_pattern("/api/v1/tasks/42/"), "/api/v1/tasks/{id}");
  EXPECT_EQ(route_pattern("/api/v1/tasks/42/pause"), "/api/v1/tasks/{id}/pause");
  EXPECT_EQ(route_pattern("/api/v1/instances/3-1764471600000-0"), "/api/v1/instances/{id}");
  EXPECT_EQ(route_pattern("/api/v1/instances/3-1764471600000-0/report"),
            "/api/v1/instances/{id}/report");
  EXPECT_EQ(route_pattern("/api/v1/workers/w-9/heartbeat"), "/api/v1/workers/{id}/heartbeat");
  EXPECT_EQ(route_pattern("/api/v1/events/deploy"), "/api/v1/events/{name}");
  EXPECT_EQ(route_pattern("/healthz"), "/healthz");
  EXPECT_EQ(route_pattern("/metrics"), "/metrics");
  EXPECT_EQ(route_pattern("/"), "/");
  EXPECT_EQ(route_pattern("/console/app.js"), "/console/{asset}");
}

TEST(metrics_route_test, unknown_paths_share_one_pattern) {
  for (auto p : {"/wp-admin", "/console/a/b", "/api/v1/tasks/1/2/3", "/api/v1/nope", "/api/v2/tasks",
                 "/api/v1/tasks/1/explode"})
    EXPECT_EQ(route_pattern(p), "other") << p;
}

/// Calls `h` and returns the response it gives synchronously.
std::optional<http_response> call(const handler_fn& h, std::string method, std::string path) {
  std::optional<http_response> out;
  http_request req;
  req.method = std::move(method);
  req.path = std::move(path);
  h(std::move(req), [&](http_response r) { out = std::move(r); });
  return out;
}

TEST(metrics_route_test, get_metrics_answers_prometheus_text) {
  bool inner_called = false;
  auto h = with_metrics([&](http_request, reply_fn reply) {
    inner_called = true;
    reply({200, "{}", "application/json"});
  });
  auto r = call(h, "GET", "/metrics");
  ASSERT_TRUE(r);
  EXPECT_FALSE(inner_called);
  EXPECT_EQ(r->status, 200u);
  EXPECT_EQ(r->content_type.rfind("text/plain; version=0.0.4", 0), 0u) << r->content_type;
  auto text = test::parse_prometheus_text(r->body);
  for (auto& e : text.errors) ADD_FAILURE() << e;
  EXPECT_TRUE(text.value("aisched_build_info"));
  // Other methods go on to the API, whose route table answers 405 with Allow: GET.
  call(h, "POST", "/metrics");
  EXPECT_TRUE(inner_called);
  EXPECT_EQ(match_route("POST", "/metrics").allow, "GET");
}

TEST(metrics_route_test, requests_are_counted_by_pattern_and_status_when_answered) {
  reply_fn later;
  auto h = with_metrics([&](http_request req, reply_fn reply) {
    if (req.path == "/api/v1/tasks/77") return reply({404, "{}", "application/json"});
    later = std::move(reply);  // answers asynchronously, like an actor would
  });
  call(h, "GET", "/api/v1/tasks/77");
  call(h, "POST", "/api/v1/tasks");
  auto value = [](const char* route, const char* code) {
    auto text = test::parse_prometheus_text(obs::serialize());
    return text.value("gateway_requests_total", {{"route", route}, {"code", code}}).value_or(0);
  };
  EXPECT_EQ(value("/api/v1/tasks/{id}", "404"), 1);
  EXPECT_EQ(value("/api/v1/tasks", "201"), 0) << "not answered yet";
  ASSERT_TRUE(later);
  later({201, "{}", "application/json"});
  EXPECT_EQ(value("/api/v1/tasks", "201"), 1);

  auto text = test::parse_prometheus_text(obs::serialize());
  for (auto& s : text.samples)
    for (auto& [k, v] : s.labels) EXPECT_EQ(v.find("77"), std::string::npos) << s.name << " " << k;
}

}  // namespace
}  // namespace aisched::gateway
