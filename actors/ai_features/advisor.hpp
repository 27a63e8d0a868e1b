// Rule-based recommendations for the advice and trend features: from facts
// aisched computed (worker load, backlog, backpressure, recent failures,
// dispatch latency, directions over a window) to recommendations of type
// throttle / migrate / scale / config. Pure; the model may add its judgement
// on top, the rules always answer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <boost/json/fwd.hpp>

namespace aisched::ai {

struct worker_fact {
  std::string id;
  std::string status;  // online | offline | draining
  uint32_t load = 0, max_load = 0;
  uint32_t cpu_percent = 0, memory_percent = 0;
  double utilization() const { return max_load ? double(load) / double(max_load) : 0.0; }
};

struct advice_facts {
  std::vector<worker_fact> workers;
  uint64_t backlog = 0, max_backlog = 0;
  std::string pressure = "green";  // green | yellow | red | unknown (not leading)
  uint64_t runs_last_hour = 0;      // finished in the last hour
  uint64_t failures_last_hour = 0;  // failed or timed out in the last hour
  std::map<uint64_t, uint64_t> failures_by_task;  // task id -> failures in the last hour
  size_t dispatch_samples = 0;                    // runs dispatched in the last hour
  double dispatch_p50_ms = 0, dispatch_p95_ms = 0;  // created -> dispatched
};

struct recommendation {
  std::string type;      // throttle | migrate | scale | config
  std::string priority;  // low | medium | high
  std::string target;    // "cluster", "worker:<id>", "task:<id>"
  std::string reason;    // the fact that triggered it
  std::string action;    // what to do
};

/// The rules' recommendations for `f`, most urgent first; empty when healthy.
std::vector<recommendation> advise(const advice_facts& f);

/// Directions over a window, for trend recommendations.
struct trend_facts {
  std::string load_direction = "unknown";     // rising | stable | falling | unknown
  std::string failure_direction = "stable";   // of the failure rate across slices
  double failure_rate = 0;                     // over the whole window
  uint64_t runs = 0;
  uint64_t backlog = 0, max_backlog = 0;
  double utilization = 0;                      // current, all online workers
};

/// The rules' recommendations for a window's trends.
std::vector<recommendation> recommend_trends(const trend_facts& f);

boost::json::value to_json(const recommendation& r);
boost::json::value to_json(const std::vector<recommendation>& rs);

}  // namespace aisched::ai
