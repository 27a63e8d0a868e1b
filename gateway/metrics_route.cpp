// GET /metrics and per-route request metrics; see metrics_route.hpp.
#include "gateway/metrics_route.hpp"

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "obs/metrics.hpp"

namespace aisched::gateway {

namespace {

/// Every route the gateway serves, as a pattern: a `{...}` segment matches any
/// one segment. A route missing here is counted as "other": add new routes
/// (gateway/api.cpp) here too.
constexpr std::string_view patterns[] = {
    "/",  // the web console (gateway/console.cpp), not part of the REST API
    "/console/{asset}",
    "/healthz",
    "/readyz",
    "/metrics",
    "/api/v1/version",
    "/api/v1/cluster",
    "/api/v1/cluster/members",
    "/api/v1/cluster/members/{id}",
    "/api/v1/schedules/next",
    "/api/v1/tasks",
    "/api/v1/tasks/{id}",
    "/api/v1/tasks/{id}/trigger",
    "/api/v1/tasks/{id}/backfill",
    "/api/v1/tasks/{id}/pause",
    "/api/v1/tasks/{id}/resume",
    "/api/v1/events/{name}",
    "/api/v1/dag",
    "/api/v1/instances",
    "/api/v1/instances/{id}",
    "/api/v1/instances/{id}/cancel",
    "/api/v1/instances/{id}/report",
    "/api/v1/instances/{id}/output",
    "/api/v1/instances/{id}/attempts",
    "/api/v1/workers",
    "/api/v1/workers/load-history",
    "/api/v1/workers/{id}",
    "/api/v1/workers/{id}/load-history",
    "/api/v1/workers/{id}/heartbeat",
    "/api/v1/workers/{id}/drain",
    "/api/v1/workers/{id}/undrain",
    "/api/v1/backpressure",
    "/api/v1/openapi.json",
    "/api/v1/auth/login",
    "/api/v1/auth/whoami",
    "/api/v1/users",
    "/api/v1/users/{name}",
    "/api/v1/tokens",
    "/api/v1/tokens/{id}",
    "/api/v1/audit",
    "/api/v1/admin/log-level",
    "/api/v1/ai/chat",
    "/api/v1/ai/confirm",
    "/api/v1/ai/conversations",
    "/api/v1/ai/conversations/{id}/messages",
    "/api/v1/ai/ws",
    "/api/v1/instances/{id}/analysis",
    "/api/v1/ai/analyze/{instance_id}",
    "/api/v1/ai/advice",
    "/api/v1/ai/task-draft",
    "/api/v1/ai/tasks/{id}/duration",
    "/api/v1/ai/trends",
};
constexpr std::string_view other = "other";

}  // namespace

bool route_matches(std::string_view pattern, std::string_view path) {
  auto next = [](std::string_view& s) {
    while (!s.empty() && s.front() == '/') s.remove_prefix(1);
    auto end = s.find('/');
    auto seg = s.substr(0, end);
    s.remove_prefix(end == std::string_view::npos ? s.size() : end);
    return seg;
  };
  for (;;) {
    auto want = next(pattern);
    auto have = next(path);
    if (want.empty() || have.empty()) return want.empty() && have.empty();
    if (want.front() != '{' && want != have) return false;
  }
}

namespace {

/// One pre-resolved set of series per pattern, plus "other".
struct route_table {
  std::vector<obs::http_route> routes;
  route_table() {
    for (auto p : patterns) routes.emplace_back(std::string(p));
    routes.emplace_back(std::string(other));
  }
  const obs::http_route& of(std::string_view path) const {
    for (size_t i = 0; i < std::size(patterns); ++i)
      if (route_matches(patterns[i], path)) return routes[i];
    return routes.back();
  }
};

}  // namespace

std::string_view route_pattern(std::string_view path) {
  for (auto p : patterns)
    if (route_matches(p, path)) return p;
  return other;
}

std::vector<std::string_view> route_patterns() {
  return {std::begin(patterns), std::end(patterns)};
}

handler_fn with_metrics(handler_fn inner) {
  auto table = std::make_shared<const route_table>();
  return [inner = std::move(inner), table](http_request req, reply_fn reply) {
    auto start = std::chrono::steady_clock::now();
    const auto& route = table->of(req.path);
    // `table` outlives every reply: the captured pointer keeps it alive.
    auto timed = [reply = std::move(reply), &route, table, start](http_response res) {
      auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start);
      route.record(res.status, elapsed.count());
      reply(std::move(res));
    };
    if (req.path == "/metrics") {
      if (req.method != "GET" && req.method != "HEAD")
        return timed(http_response{
            405,
            R"({"error":{"code":"method_not_allowed","message":"method not allowed","field":""}})",
            "application/json"});
      return timed(
          http_response{200, obs::serialize(), "text/plain; version=0.0.4; charset=utf-8"});
    }
    inner(std::move(req), std::move(timed));
  };
}

}  // namespace aisched::gateway
