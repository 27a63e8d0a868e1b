// aisched-load's arithmetic (see stats.hpp).
#include "tools/aisched-load/stats.hpp"

#include <algorithm>
#include <cstdio>

namespace aisched::load {

percentiles summarize(std::vector<double> xs) {
  percentiles p;
  p.n = xs.size();
  if (xs.empty()) return p;
  std::sort(xs.begin(), xs.end());
  auto at = [&](double q) {
    return xs[std::min(xs.size() - 1, static_cast<size_t>(q * xs.size()))];
  };
  p.min = xs.front();
  p.p50 = at(0.50);
  p.p90 = at(0.90);
  p.p99 = at(0.99);
  p.max = xs.back();
  return p;
}

std::vector<double> fire_lateness(const std::vector<run_times>& runs) {
  std::vector<double> out;
  for (auto& r : runs)
    if (r.created != 0) out.push_back(static_cast<double>(r.created - r.slot));
  return out;
}

std::vector<double> start_lateness(const std::vector<run_times>& runs) {
  std::vector<double> out;
  for (auto& r : runs)
    if (r.started != 0) out.push_back(static_cast<double>(r.started - r.slot));
  return out;
}

unsigned idle_minute_of_day(size_t i) { return static_cast<unsigned>(i % 1440); }

size_t idle_due(size_t n, unix_ms from, unix_ms to) {
  size_t due = 0;
  for (unix_ms t = from; t < to; t += 60'000) {
    auto m = static_cast<size_t>((t / 60'000) % 1440);
    due += n / 1440 + (m < n % 1440 ? 1 : 0);
  }
  return due;
}

self_cap throughput_cap(size_t backlog, double due_ms, double mean_in_flight, double mean_queued,
                        double rate_per_s, double margin) {
  self_cap c;
  // Little's law: mean in flight = rate x mean time in flight.
  if (rate_per_s > 0 && mean_in_flight > 0)
    c.pipeline_ms = std::max(0.0, mean_in_flight / rate_per_s * 1000.0 - due_ms);
  c.cap_per_s = static_cast<double>(backlog) * 1000.0 / (due_ms + c.pipeline_ms);
  c.node_bound = mean_in_flight > 0 && mean_queued >= 0.5 * mean_in_flight;
  c.capped = rate_per_s > 0 && rate_per_s >= (1.0 - margin) * c.cap_per_s && !c.node_bound;
  return c;
}

std::string cap_warning(size_t backlog, double due_ms, const self_cap& c, double rate_per_s) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "warning: throughput measured its own parameters: %.0f runs/s is within 10%% of "
                "the cap --backlog %zu / (--due-ms %.0f + pipeline %.0f ms) = %.0f runs/s; "
                "raise --backlog (and --concurrency if creates lag) to measure the node",
                rate_per_s, backlog, due_ms, c.pipeline_ms, c.cap_per_s);
  return buf;
}

}  // namespace aisched::load
