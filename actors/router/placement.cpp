// Placement of pending runs; see placement.hpp.
#include "actors/router/placement.hpp"

namespace aisched::router {

using namespace proto;

bool run_queue::push(const instance& x) {
  if (!ids_.insert(x.id).second) return false;
  items_.push_back(x);
  return true;
}

instance run_queue::pop() {
  auto x = std::move(items_.front());
  items_.pop_front();
  ids_.erase(x.id);
  return x;
}

void run_queue::put_back(std::deque<instance> runs) {
  while (!runs.empty()) {
    ids_.insert(runs.back().id);
    items_.push_front(std::move(runs.back()));
    runs.pop_back();
  }
}

void run_queue::clear() {
  items_.clear();
  ids_.clear();
}

placement_round place(run_queue& q, const std::function<const task_terms*(uint64_t)>& task_of,
                      std::vector<candidate>& workers, size_t budget, size_t scan_limit,
                      pick_context& ctx, concurrency& limits) {
  placement_round out;
  uint64_t free_slots = 0;
  for (auto& c : workers)
    if (c.status == worker_status::online && c.has_capacity()) free_slots += c.max_load - c.load();
  std::deque<instance> skipped;  // no fitting worker now: they stay pending, in order
  size_t looked_at = 0;
  while (!q.empty() && out.placed.size() < budget && free_slots > 0 &&
         looked_at++ < scan_limit) {
    auto x = q.pop();
    auto* t = task_of(x.task_id);
    if (!t) {
      out.orphaned.push_back(x.id);
      continue;
    }
    if (!limits.blocked(*t).empty()) {  // its task or pool is at its limit: it waits
      skipped.push_back(std::move(x));
      continue;
    }
    auto choice = pick(t->route, t->labels, workers, t->id, ctx.rr, ctx.rng(), ctx.ring, x.shard,
                       x.tenant);
    if (!choice) {
      skipped.push_back(std::move(x));
      continue;
    }
    workers[*choice].reserved += 1;
    free_slots -= 1;
    limits.hold(x.id, *t);
    out.placed.push_back(dispatch_entry{x.id, workers[*choice].id});
  }
  q.put_back(std::move(skipped));
  return out;
}

std::string why_waiting(const std::string& tenant,
                        const std::map<std::string, std::string>& selector,
                        const std::vector<candidate>& workers) {
  size_t draining = 0, offline = 0, closed = 0;
  for (auto& w : workers) {
    if (!w.serves(tenant) || !labels_match(selector, w.labels)) continue;
    if (w.status == worker_status::online && w.max_load > 0) return "";
    if (w.status == worker_status::online) ++closed;  // registered with max_load 0
    else (w.status == worker_status::draining ? draining : offline) += 1;
  }
  if (closed > 0 && draining + offline == 0)
    return "all matching workers take no runs (max_load 0: a worker whose outbox failed)";
  if (draining + offline == 0) {
    std::string want;
    for (auto& [k, v] : selector) want += (want.empty() ? "" : ",") + k + "=" + v;
    return "no worker of tenant " + tenant +
           (want.empty() ? " is registered" : " matches " + want);
  }
  if (offline == 0) return "all matching workers are draining";
  if (draining == 0) return "all matching workers are offline";
  return "all matching workers are draining or offline";
}

}  // namespace aisched::router
