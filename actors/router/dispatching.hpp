// Dispatching: the router places queued runs on workers, commits each batch
// as one `dispatch` through raft, then hands every run it placed to its
// worker's proxy with its task's definition (read from the store when the
// router's cache lacks it) and its secrets. Capacity is reserved at dispatch
// and released when a committed state says the run ended or waits to retry.
// The trigger's fires pass here too (propose_fire): each broadcast slot gets
// its fanout, and the runs are placed in the fire's own command when they can.
// Split from router_actor.cpp, which calls these on its messages.
#pragma once

#include <cstddef>
#include <string>

#include "actors/router/router_actor.hpp"

namespace aisched::router {

constexpr size_t max_batch = 4096;            // runs placed per dispatch proposal
constexpr size_t scan_limit = 4 * max_batch;  // queued runs looked at per dispatch round

/// Asks for a dispatch round (once, however often asked before it runs),
/// while leading and rebuilt.
void schedule_dispatch(self_ptr self);

/// Gives back what run `run_id` held: its worker's slot and its limits' slots.
void release(self_ptr self, const std::string& run_id);

/// Run `run_id` (`noop`: of a no-op task) is placed on worker `w` at `now`,
/// taking one of its slots unless `w` completes no-ops without one.
void reserve(router_state& st, worker_entry& w, const std::string& run_id, bool noop,
             unix_ms now);

/// Run `x` (dispatched or running) holds a slot of its task's and pool's limits.
void hold_limits(router_state& st, const proto::instance& x);

/// Queues pending run `x` for placement, unless it is placed already.
void enqueue(router_state& st, const proto::instance& x);

/// Sends run `x` (dispatched or adopted) with its task's definition: the
/// cached one, or one read from the store first. Runs of a task whose read is
/// under way wait for that read; a task gone meanwhile fails them (not sent).
void deliver(self_ptr self, const proto::instance& x);

/// Places queued runs on workers and commits one dispatch batch.
void dispatch(self_ptr self);

/// Commits fire `f` for the trigger and answers `rp` with the commit. First
/// each slot of a broadcast task gets its fanout, one run per matching online
/// worker now (placement.hpp, decide_fanout): the trigger leaves it 0. A task
/// this term's book does not know yet is read from the store for that (a
/// task gone meanwhile creates nothing). When no run waits, the runs the fire
/// creates that free workers can take are placed in the same command
/// (fire_placed), then sent as a dispatch's are; the rest are created pending
/// and queued as any fire's. A fire of a term this router does not lead (or
/// no longer leads once its reads are back) is refused with `not_leader`,
/// uncommitted: the trigger decides its slots again.
void propose_fire(self_ptr self, proto::fire f, caf::typed_response_promise<proto::applied> rp);

/// Applies one committed instance state to the queue and reservations. An
/// attempt that ends without its worker's report (cancelled, or timed out at
/// its deadline) is cancelled on its worker as its slot is given back.
void observe(self_ptr self, const proto::instance& x);

}  // namespace aisched::router
