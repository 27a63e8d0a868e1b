// GET /metrics and per-route request metrics; see metrics_route.hpp.
#include "gateway/metrics_route.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.hpp"
#include "obs/metrics.hpp"

namespace aisched::gateway {

namespace {

constexpr std::string_view other = "other";

/// One pre-resolved set of series per pattern of the route table, plus "other".
struct series_table {
  std::vector<obs::http_route> routes;
  std::unordered_map<std::string_view, size_t> index;
  series_table() {
    for (auto p : route_patterns()) {
      index.emplace(p, routes.size());
      routes.emplace_back(std::string(p));
    }
    routes.emplace_back(std::string(other));
  }
  const obs::http_route& of(std::string_view path) const {
    auto i = index.find(route_pattern(path));
    return i == index.end() ? routes.back() : routes[i->second];
  }
};

http_response metrics_answer() {
  return http_response{200, obs::serialize(), "text/plain; version=0.0.4; charset=utf-8"};
}

}  // namespace

void get_metrics(route_call& c) { c.reply(metrics_answer()); }

handler_fn with_metrics(handler_fn inner) {
  auto table = std::make_shared<const series_table>();
  return [inner = std::move(inner), table](http_request req, reply_fn reply) {
    auto start = steady_now();
    const auto& route = table->of(req.path);
    // `table` outlives every reply: the captured pointer keeps it alive.
    auto timed = [reply = std::move(reply), &route, table, start](http_response res) {
      auto elapsed = std::chrono::duration<double>(steady_now() - start);
      route.record(res.status, elapsed.count());
      reply(std::move(res));
    };
    // Served here, before the API, so a scrape costs no route lookup or gate.
    if (req.path == "/metrics" && (req.method == "GET" || req.method == "HEAD"))
      return timed(metrics_answer());
    inner(std::move(req), std::move(timed));
  };
}

}  // namespace aisched::gateway
