// Placement of pending runs; see placement.hpp.
#include "actors/router/placement.hpp"

#include <algorithm>
#include <cstddef>

#include "proto/validate.hpp"

namespace aisched::router {

using namespace proto;

uint64_t run_step(const instance& x) {
  uint64_t rank = x.state == instance_state::pending      ? 0
                  : x.state == instance_state::dispatched ? 1
                  : x.state == instance_state::running    ? 2
                                                          : 3;
  return (uint64_t{x.attempt} << 2) | rank;
}

bool run_queue::push(const instance& x, bool noop) {
  auto step = run_step(x);
  auto [at, added] = ids_.emplace(x.id, step);
  if (!added) {
    // Queued already (placed again, then retried before it went): the newer
    // view is the one a dispatch must send, or the worker runs a dead attempt.
    // Rare; a view no newer (a note on a waiting run) costs no walk.
    if (at->second >= step) return false;
    at->second = step;
    for (auto& q : items_)
      if (q.run.id == x.id) q.run = x;
    return false;
  }
  items_.push_back({x, noop});
  noops_ += noop;
  return true;
}

run_queue::queued run_queue::pop() {
  auto q = std::move(items_.front());
  items_.pop_front();
  ids_.erase(q.run.id);
  noops_ -= q.noop;
  return q;
}

void run_queue::put_back(std::deque<queued> runs) {
  while (!runs.empty()) {
    ids_.emplace(runs.back().run.id, run_step(runs.back().run));
    noops_ += runs.back().noop;
    items_.push_front(std::move(runs.back()));
    runs.pop_back();
  }
}

void run_queue::clear() {
  items_.clear();
  ids_.clear();
  noops_ = 0;
}

placement_round place(run_queue& q, const std::function<const task_terms*(uint64_t)>& task_of,
                      std::vector<candidate>& workers, size_t budget, size_t scan_limit,
                      pick_context& ctx, concurrency& limits) {
  placement_round out;
  uint64_t free_slots = free_slots_of(workers);
  const bool noops_go = takes_free_noops(workers);
  std::deque<run_queue::queued> skipped;  // no fitting worker now: they stay pending, in order
  size_t looked_at = 0;
  while (!q.empty() && out.placed.size() < budget &&
         (free_slots > 0 || (noops_go && q.noops() > 0)) && looked_at++ < scan_limit) {
    auto next = q.pop();
    auto& x = next.run;
    auto* t = task_of(x.task_id);
    if (!t) {
      out.orphaned.push_back(std::move(next));
      continue;
    }
    // Its task is paused, its task or pool is at its limit, or it needs a slot
    // and none is free: it waits.
    if (t->paused || !limits.blocked(*t).empty() || (!next.noop && free_slots == 0)) {
      skipped.push_back(std::move(next));
      continue;
    }
    auto choice = pick(t->route, t->labels, workers, t->id, ctx.rr, ctx.rng(), ctx.ring, x.shard,
                       x.tenant, next.noop);
    if (!choice) {
      skipped.push_back(std::move(next));
      continue;
    }
    auto& w = workers[*choice];
    bool slot = w.holds_slot(next.noop);
    if (slot) {
      w.reserved += 1;
      free_slots -= 1;
    }
    limits.hold(x.id, *t);
    out.placed.push_back(dispatch_entry{x.id, w.id});
    out.slotless.push_back(!slot);
    out.runs.push_back(std::move(next));
  }
  q.put_back(std::move(skipped));
  return out;
}

run_queue runs_fired(const std::vector<fire_slot>& slots,
                     const std::function<const task_terms*(uint64_t)>& task_of) {
  run_queue q;
  for (auto& s : slots) {
    auto* t = task_of(s.task_id);
    if (!t) continue;
    const uint32_t shards = runs_of(s, t->shards);
    for (uint32_t shard = 0; shard < shards; ++shard) {
      instance x;
      x.id = make_instance_id(s.task_id, s.slot, shard);
      x.tenant = t->tenant;
      x.task_id = s.task_id;
      x.slot = s.slot;
      x.shard = shard;
      x.shards = shards;
      q.push(x, t->noop);
    }
  }
  return q;
}

uint32_t broadcast_fanout(const std::string& tenant,
                          const std::map<std::string, std::string>& selector,
                          const std::vector<candidate>& workers) {
  auto n = std::count_if(workers.begin(), workers.end(),
                         [&](const candidate& c) { return broadcast_member(c, selector, tenant); });
  return static_cast<uint32_t>(std::clamp<ptrdiff_t>(n, 1, max_shards));
}

void decide_fanout(std::vector<fire_slot>& slots,
                   const std::function<const task_terms*(uint64_t)>& task_of,
                   const std::vector<candidate>& workers) {
  for (auto& s : slots) {
    auto* t = task_of(s.task_id);
    if (t && t->route == route_strategy::broadcast)
      s.fanout = broadcast_fanout(t->tenant, t->labels, workers);
  }
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
