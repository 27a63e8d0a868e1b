// The advice and trend rules; see advisor.hpp.
#include "actors/ai_features/advisor.hpp"

#include <algorithm>
#include <cstdio>

#include <boost/json.hpp>

namespace aisched::ai {

namespace {

std::string pct(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f %%", x * 100);
  return buf;
}

int rank(const std::string& priority) {
  return priority == "high" ? 0 : priority == "medium" ? 1 : 2;
}

void sort_by_priority(std::vector<recommendation>& rs) {
  std::stable_sort(rs.begin(), rs.end(), [](auto& a, auto& b) {
    return rank(a.priority) < rank(b.priority);
  });
}

}  // namespace

std::vector<recommendation> advise(const advice_facts& f) {
  std::vector<recommendation> out;
  uint64_t load = 0, cap = 0;
  const worker_fact* coolest = nullptr;
  for (auto& w : f.workers) {
    if (w.status != "online") continue;
    load += w.load;
    cap += w.max_load;
    if (!coolest || w.utilization() < coolest->utilization()) coolest = &w;
  }
  double util = cap ? double(load) / double(cap) : 0;
  double fill = f.max_backlog ? double(f.backlog) / double(f.max_backlog) : 0;
  // throttle: the backlog nears the point where new fires are held or refused.
  if (f.pressure == "red" || f.pressure == "yellow" || fill >= 0.7)
    out.push_back({"throttle", f.pressure == "red" || fill >= 0.9 ? "high" : "medium", "cluster",
                   "backpressure " + f.pressure + ", backlog " + std::to_string(f.backlog) + "/" +
                       std::to_string(f.max_backlog) + " (" + pct(fill) + ")",
                   "Lower the dispatch rate or pause low-priority schedules until the backlog "
                   "drains; add workers if it persists."});
  // scale: the workers are (nearly) full, or there are none for a backlog.
  if (cap == 0 && f.backlog > 0)
    out.push_back({"scale", "high", "cluster",
                   "no online worker, backlog " + std::to_string(f.backlog),
                   "Start workers (or undrain them): nothing can run."});
  else if (cap > 0 && util >= 0.85)
    out.push_back({"scale", util >= 0.95 ? "high" : "medium", "cluster",
                   "online workers at " + pct(util) + " of their capacity",
                   "Add workers or raise max_load where machines have headroom."});
  // migrate: one worker hot while another has room.
  for (auto& w : f.workers) {
    if (w.status != "online") continue;
    bool hot = w.utilization() >= 0.85 || w.cpu_percent >= 90 || w.memory_percent >= 90;
    if (!hot || !coolest || coolest == &w || coolest->utilization() > 0.5) continue;
    out.push_back({"migrate", "medium", "worker:" + w.id,
                   "worker " + w.id + " at " + pct(w.utilization()) + " load, cpu " +
                       std::to_string(w.cpu_percent) + " %, memory " +
                       std::to_string(w.memory_percent) + " %, while " + coolest->id + " is at " +
                       pct(coolest->utilization()),
                   "Move work from " + w.id + " to " + coolest->id +
                       ": use the least_loaded route or widen the label selectors of the tasks "
                       "pinned to it."});
  }
  for (auto& w : f.workers)
    if (w.status == "offline")
      out.push_back({"config", "medium", "worker:" + w.id, "worker " + w.id + " is offline",
                     "Bring it back or remove it (DELETE /api/v1/workers/" + w.id +
                         ") so the registry shows the real capacity."});
  // config: failing tasks and slow dispatch.
  if (f.runs_last_hour >= 5) {
    double rate = double(f.failures_last_hour) / double(f.runs_last_hour);
    if (rate >= 0.2)
      out.push_back({"config", rate >= 0.5 ? "high" : "medium", "cluster",
                     std::to_string(f.failures_last_hour) + " of " +
                         std::to_string(f.runs_last_hour) + " runs failed in the last hour (" +
                         pct(rate) + ")",
                     "Look at the failure analyses of the failing tasks; fix the common cause "
                     "before adding retries."});
  }
  for (auto& [task, n] : f.failures_by_task)
    if (n >= 3)
      out.push_back({"config", "medium", "task:" + std::to_string(task),
                     "task " + std::to_string(task) + " failed " + std::to_string(n) +
                         " times in the last hour",
                     "Check its failure analysis; adjust its command, timeout or retry policy, "
                     "or pause it until fixed."});
  if (f.dispatch_samples >= 5 && f.dispatch_p95_ms > 5000)
    out.push_back({"config", "medium", "cluster",
                   "dispatch latency p95 " + std::to_string(int64_t(f.dispatch_p95_ms)) + " ms",
                   "Runs wait long for a worker: raise dispatch_rate or worker slots, or add "
                   "workers."});
  sort_by_priority(out);
  return out;
}

std::vector<recommendation> recommend_trends(const trend_facts& f) {
  std::vector<recommendation> out;
  if (f.load_direction == "rising" && f.utilization >= 0.6)
    out.push_back({"scale", f.utilization >= 0.85 ? "high" : "medium", "cluster",
                   "worker load rising, now " + pct(f.utilization) + " of capacity",
                   "Plan capacity: add workers before load reaches the backpressure threshold."});
  if (f.load_direction == "falling" && f.utilization < 0.2 && f.runs > 0)
    out.push_back({"scale", "low", "cluster",
                   "worker load falling, now " + pct(f.utilization) + " of capacity",
                   "Capacity could be reduced if this holds."});
  if (f.failure_direction == "rising")
    out.push_back({"config", f.failure_rate >= 0.2 ? "high" : "medium", "cluster",
                   "failure rate rising across the window (" + pct(f.failure_rate) + " overall)",
                   "Check what changed (deploys, dependencies) and the analyses of recent "
                   "failures."});
  else if (f.runs >= 5 && f.failure_rate >= 0.2)
    out.push_back({"config", "medium", "cluster",
                   "failure rate " + pct(f.failure_rate) + " over the window",
                   "Fix the most common failure causes; see GET /api/v1/ai/advice."});
  double fill = f.max_backlog ? double(f.backlog) / double(f.max_backlog) : 0;
  if (fill >= 0.5)
    out.push_back({"throttle", fill >= 0.9 ? "high" : "medium", "cluster",
                   "backlog " + std::to_string(f.backlog) + "/" + std::to_string(f.max_backlog),
                   "Spread schedules (jitter) or lower the dispatch rate; add workers."});
  sort_by_priority(out);
  return out;
}

boost::json::value to_json(const recommendation& r) {
  return boost::json::object{{"type", r.type},     {"priority", r.priority},
                             {"target", r.target}, {"reason", r.reason},
                             {"action", r.action}};
}

boost::json::value to_json(const std::vector<recommendation>& rs) {
  boost::json::array a;
  for (auto& r : rs) a.push_back(to_json(r));
  return a;
}

}  // namespace aisched::ai
