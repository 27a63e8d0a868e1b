// Worker selection, pure: label selectors, capacity, and the route strategies
// (least_loaded, round_robin, random, first, last, lfu, lru, consistent_hash,
// failover, busyover, broadcast). The router actor keeps the registry and
// calls pick().
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/types.hpp"

namespace aisched::router {

/// What routing knows about one worker.
struct candidate {
  std::string id;
  std::string tenant = "default";  // the tenant that registered it
  bool shared = false;             // takes runs of every tenant (cluster admin's choice)
  std::map<std::string, std::string> labels;
  uint32_t max_load = 1;
  uint32_t reserved = 0;      // runs dispatched here and not finished
  uint32_t reported = 0;      // load from its last heartbeat (external work included)
  proto::worker_status status = proto::worker_status::online;
  uint64_t uses = 0;          // dispatches so far (lfu)
  unix_ms last_used = 0;      // last dispatch (lru)
  uint64_t order = 0;         // registration order (first / last / failover / busyover)
  /// Completes no-op runs without a thread (a native worker): they take no
  /// slot of it, so only its being open (max_load > 0) bounds them.
  bool free_noops = false;

  uint32_t load() const { return std::max(reserved, reported); }
  bool has_capacity() const { return load() < max_load; }
  /// Whether a run (`noop`: of a no-op task) fits here now.
  bool takes(bool noop) const { return has_capacity() || (noop && free_noops && max_load > 0); }
  /// Whether a run (`noop`: of a no-op task) placed here holds one of its slots.
  bool holds_slot(bool noop) const { return !(noop && free_noops); }
  /// Whether runs of `run_tenant` may go here ("" = any tenant).
  bool serves(const std::string& run_tenant) const {
    return shared || run_tenant.empty() || run_tenant == tenant;
  }
};

using proto::labels_match;

/// Whether `c` is one of the workers a broadcast task of `tenant` with label
/// `selector` fans out to: online, serving that tenant, matching the labels.
/// Its fanout counts them (placement.hpp, broadcast_fanout) and pick() puts
/// shard i on the i-th of them: both use this one predicate.
inline bool broadcast_member(const candidate& c, const std::map<std::string, std::string>& selector,
                             const std::string& tenant) {
  return c.status == proto::worker_status::online && c.serves(tenant) &&
         labels_match(selector, c.labels);
}

/// Whether some online worker of `workers` takes no-op runs without a slot
/// (candidate::takes): only then can a no-op go while every slot is taken.
inline bool takes_free_noops(const std::vector<candidate>& workers) {
  return std::any_of(workers.begin(), workers.end(), [](const candidate& c) {
    return c.status == proto::worker_status::online && c.free_noops && c.max_load > 0;
  });
}

/// The free slots over the online workers of `workers`.
inline uint64_t free_slots_of(const std::vector<candidate>& workers) {
  uint64_t n = 0;
  for (auto& c : workers)
    if (c.status == proto::worker_status::online && c.has_capacity()) n += c.max_load - c.load();
  return n;
}

/// A consistent-hash ring with `vnodes` virtual nodes per worker.
class hash_ring {
 public:
  explicit hash_ring(uint32_t vnodes = 64) : vnodes_(vnodes) {}
  void rebuild(const std::vector<std::string>& worker_ids);
  /// Worker ids in ring order starting at `key`'s position (each id once).
  std::vector<std::string> walk(uint64_t key) const;
  /// The first worker id in ring order from `key` for which `accept(id)` holds.
  template <class Pred>
  const std::string* find(uint64_t key, Pred accept) const {
    if (ring_.empty()) return nullptr;
    auto start = std::lower_bound(ring_.begin(), ring_.end(), std::make_pair(key, std::string{}));
    size_t at = static_cast<size_t>(start - ring_.begin());
    for (size_t n = 0; n < ring_.size(); ++n) {
      auto& id = ring_[(at + n) % ring_.size()].second;
      if (accept(id)) return &id;
    }
    return nullptr;
  }
  bool empty() const { return ring_.empty(); }

 private:
  uint32_t vnodes_;
  std::vector<std::pair<uint64_t, std::string>> ring_;  // sorted by hash
};

/// Picks a worker for a run of task `task_id` among `workers` (all registered
/// ones): only online workers whose labels match `selector` and that take the
/// run (capacity; `noop`: a run of a no-op task, see candidate::takes)
/// qualify. Returns the index into `workers`, or nullopt when none fits
/// (the run then waits). `rr` is the round-robin cursor, `rnd` a random draw.
/// `broadcast` places shard `shard` on the shard-th matching online worker.
/// Only workers that serve `tenant` (theirs or shared; "" = any) qualify.
std::optional<size_t> pick(proto::route_strategy strategy,
                           const std::map<std::string, std::string>& selector,
                           const std::vector<candidate>& workers, uint64_t task_id,
                           uint64_t& rr, uint64_t rnd, const hash_ring* ring,
                           uint32_t shard = 0, const std::string& tenant = "",
                           bool noop = false);

/// 64-bit mix of a string (FNV-1a + finaliser), stable across nodes.
uint64_t hash_of(const std::string& s);

}  // namespace aisched::router
