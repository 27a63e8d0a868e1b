// Worker selection strategies; see routing.hpp.
#include "actors/router/routing.hpp"

#include <algorithm>
#include <set>

namespace aisched::router {

using proto::route_strategy;

uint64_t hash_of(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

void hash_ring::rebuild(const std::vector<std::string>& ids) {
  ring_.clear();
  for (auto& id : ids)
    for (uint32_t v = 0; v < vnodes_; ++v) ring_.emplace_back(hash_of(id + "#" + std::to_string(v)), id);
  std::sort(ring_.begin(), ring_.end());
}

std::vector<std::string> hash_ring::walk(uint64_t key) const {
  std::vector<std::string> out;
  if (ring_.empty()) return out;
  std::set<std::string> seen;
  auto start = std::lower_bound(ring_.begin(), ring_.end(), std::make_pair(key, std::string{}));
  size_t at = static_cast<size_t>(start - ring_.begin());
  for (size_t n = 0; n < ring_.size(); ++n) {
    auto& id = ring_[(at + n) % ring_.size()].second;
    if (seen.insert(id).second) out.push_back(id);
  }
  return out;
}

std::optional<size_t> pick(route_strategy strategy,
                           const std::map<std::string, std::string>& selector,
                           const std::vector<candidate>& workers, uint64_t task_id, uint64_t& rr,
                           uint64_t rnd, const hash_ring* ring, uint32_t shard,
                           const std::string& tenant, bool noop) {
  std::vector<size_t> fit;  // qualifying workers, in registration order
  for (size_t i = 0; i < workers.size(); ++i) {
    auto& w = workers[i];
    if (w.status == proto::worker_status::online && w.takes(noop) && w.serves(tenant) &&
        labels_match(selector, w.labels))
      fit.push_back(i);
  }
  if (fit.empty()) return std::nullopt;
  std::sort(fit.begin(), fit.end(),
            [&](size_t a, size_t b) { return workers[a].order < workers[b].order; });
  auto by = [&](auto better) { return *std::min_element(fit.begin(), fit.end(), better); };
  switch (strategy) {
    case route_strategy::round_robin:
      return fit[rr++ % fit.size()];
    case route_strategy::random:
      return fit[rnd % fit.size()];
    case route_strategy::first:
    case route_strategy::failover:  // first healthy (with room) in registration order
      return fit.front();
    case route_strategy::last:
      return fit.back();
    case route_strategy::busyover:  // first idle in order, else the least loaded
      for (auto i : fit)
        if (workers[i].load() == 0) return i;
      break;
    case route_strategy::lfu:
      return by([&](size_t a, size_t b) { return workers[a].uses < workers[b].uses; });
    case route_strategy::lru:
      return by([&](size_t a, size_t b) { return workers[a].last_used < workers[b].last_used; });
    case route_strategy::consistent_hash:
      if (ring && !ring->empty()) {
        // Bounded load: walk the ring from the task's point to the first that fits.
        std::optional<size_t> hit;
        ring->find(hash_of(std::to_string(task_id)), [&](const std::string& id) {
          for (auto i : fit)
            if (workers[i].id == id) {
              hit = i;
              return true;
            }
          return false;
        });
        if (hit) return hit;
      }
      break;
    case route_strategy::broadcast: {
      // One run per matching worker: shard i belongs to the i-th online match
      // in registration order and waits for it when it is full. A shard past
      // the current set (a worker left since the fire) goes to the least loaded.
      std::vector<size_t> members;
      for (size_t i = 0; i < workers.size(); ++i)
        if (broadcast_member(workers[i], selector, tenant)) members.push_back(i);
      std::sort(members.begin(), members.end(),
                [&](size_t a, size_t b) { return workers[a].order < workers[b].order; });
      if (shard < members.size()) {
        auto i = members[shard];
        if (workers[i].takes(noop)) return i;
        return std::nullopt;
      }
      break;
    }
    case route_strategy::least_loaded:
      break;
  }
  // least_loaded: lowest load relative to capacity; ties by registration order.
  return by([&](size_t a, size_t b) {
    auto la = uint64_t(workers[a].load()) * workers[b].max_load;
    auto lb = uint64_t(workers[b].load()) * workers[a].max_load;
    return la < lb;
  });
}

}  // namespace aisched::router
