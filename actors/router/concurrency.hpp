// Concurrency limits, pure: which runs hold a slot of their task's
// max_concurrency and of their pool's size (placed, dispatched or running),
// the pool sizes, and whether one more run of a task may be placed now — with
// the reason it waits when not. The router actor feeds it what it places and
// what commits; placement asks it before each run it places.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "actors/router/task_book.hpp"
#include "proto/controls.hpp"
#include "proto/types.hpp"

namespace aisched::router {

class concurrency {
 public:
  /// Learns pool `p` (created or resized). Runs already holding its slots
  /// keep them; a smaller size only holds back new runs.
  void set_pool(const proto::pool& p) { sizes_[{p.tenant, p.name}] = p.size; }

  /// Run `run_id` of task `t` holds a slot of t's limits from now on
  /// (idempotent: a run holds at most one slot, of the limits it was held for).
  void hold(const std::string& run_id, const task_terms& t);

  /// Gives run `run_id`'s slot back (no-op for a run that holds none).
  void release(const std::string& run_id);

  /// "" when one more run of `t` fits its limits now; otherwise why it waits:
  /// "max_concurrency 1 reached (1/1)", "pool db full (4/4)" or "pool db does
  /// not exist" (one deleted meanwhile, or not known to this leader yet).
  std::string blocked(const task_terms& t) const;

  uint32_t held_by_task(uint64_t task_id) const;
  uint32_t held_in_pool(const std::string& tenant, const std::string& pool) const;
  size_t held() const { return runs_.size(); }

 private:
  using pool_key = std::pair<std::string, std::string>;  // tenant, name
  struct slot {
    uint64_t task_id = 0;
    pool_key pool;  // name "": no pool
  };
  std::unordered_map<std::string, slot> runs_;
  std::unordered_map<uint64_t, uint32_t> by_task_;
  std::map<pool_key, uint32_t> by_pool_;
  std::map<pool_key, uint32_t> sizes_;
};

}  // namespace aisched::router
