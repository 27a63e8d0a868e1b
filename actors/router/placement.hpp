// Placement, pure: the queue of pending runs in arrival order, one placement
// round over it (which run goes to which worker, within the free slots and the
// dispatch budget), and why a run that no worker can take waits. The router
// actor feeds it tasks and worker candidates and commits what it decides.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "actors/router/concurrency.hpp"
#include "actors/router/routing.hpp"
#include "proto/commands.hpp"

namespace aisched::router {

/// How far along run `x` is: its attempt, then pending < dispatched < running
/// < ended (success, failed, timed out, cancelled, retry_waiting). A run moves
/// forward, so of two views of one run the greater is the newer.
uint64_t run_step(const proto::instance& x);

/// Pending runs waiting for a worker, each once, oldest first. It counts the
/// runs of no-op tasks, which a native worker takes without a slot
/// (candidate::takes): while there are some, a round is worth it with no slot free.
class run_queue {
 public:
  struct queued {
    proto::instance run;
    bool noop = false;  // of a no-op task
  };
  /// Appends `x` (`noop`: of a no-op task) unless it is queued already; false
  /// then, and a queued view of it older than `x` (run_step) takes `x`'s place.
  bool push(const proto::instance& x, bool noop = false);
  bool contains(const std::string& id) const { return ids_.count(id) > 0; }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  size_t noops() const { return noops_; }
  void clear();
  const std::deque<queued>& items() const { return items_; }

  /// Takes the oldest run off the queue. Requires !empty().
  queued pop();
  /// Puts runs taken off with pop() back at the head, in their order.
  void put_back(std::deque<queued> runs);

 private:
  std::deque<queued> items_;
  std::unordered_map<std::string, uint64_t> ids_;  // each queued run's run_step
  size_t noops_ = 0;
};

/// The routing strategies' own state, kept across rounds.
struct pick_context {
  uint64_t rr = 0;             // round-robin cursor
  std::mt19937_64 rng{42};     // random strategy
  const hash_ring* ring = nullptr;
};

/// What one round decided. Placed runs have left the queue and hold a slot in
/// `workers` (the caller's candidates) unless `slotless` says otherwise; the
/// rest keep their order.
struct placement_round {
  std::vector<proto::dispatch_entry> placed;
  /// placed[i]'s run as it was queued: queued again if its dispatch does not
  /// commit (popped from the queue, it would otherwise wait for the next leader).
  std::vector<run_queue::queued> runs;
  std::vector<bool> slotless;         // placed[i] holds no slot of its worker (a no-op)
  std::vector<run_queue::queued> orphaned;  // runs whose task was deleted: cancel them
};

/// Places up to `budget` runs from the head of `q`, looking at no more than
/// `scan_limit` of them; with no slot free, only runs of no-op tasks can go.
/// `task_of` answers the task of a run (nullptr if it was deleted). A run of a
/// paused task, or over its task's max_concurrency or its pool's size
/// (`limits`), stays queued; each run placed holds a slot of `limits`.
placement_round place(run_queue& q, const std::function<const task_terms*(uint64_t)>& task_of,
                      std::vector<candidate>& workers, size_t budget, size_t scan_limit,
                      pick_context& ctx, concurrency& limits);

/// The runs a fire of `slots` will create, in order, queued for placing them
/// as they are fired (their ids are deterministic, proto::make_instance_id);
/// slots of tasks `task_of` does not know are left out (the fire skips a
/// deleted task).
run_queue runs_fired(const std::vector<proto::fire_slot>& slots,
                     const std::function<const task_terms*(uint64_t)>& task_of);

/// How many runs a slot of a broadcast task of `tenant` with label `selector`
/// creates: one per worker of `workers` it fans out to (broadcast_member:
/// online, serving the tenant, matching the labels), at least one (with none,
/// that run waits pending for one to come) and at most proto::max_shards.
uint32_t broadcast_fanout(const std::string& tenant,
                          const std::map<std::string, std::string>& selector,
                          const std::vector<candidate>& workers);

/// Sets the fanout of each slot of `slots` whose task `task_of` knows to be a
/// broadcast task to its broadcast_fanout over `workers`; every other slot is
/// left as it is. Done before the fire is proposed, so that runs_fired,
/// placement and the state machine all see the fanout committed.
void decide_fanout(std::vector<proto::fire_slot>& slots,
                   const std::function<const task_terms*(uint64_t)>& task_of,
                   const std::vector<candidate>& workers);

/// Why a run of `tenant` with label `selector` cannot be placed on any of
/// `workers` now — "" when some matching online worker exists (it only waits
/// for a free slot, which is not worth telling). Otherwise e.g. "no worker of
/// tenant acme matches zone=eu", "all matching workers are draining" or "all
/// matching workers take no runs" (registered with max_load 0).
std::string why_waiting(const std::string& tenant,
                        const std::map<std::string, std::string>& selector,
                        const std::vector<candidate>& workers);

}  // namespace aisched::router
