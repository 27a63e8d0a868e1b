// The seam between the worker actor and what executes its runs (issue 45
// item 2). The worker keeps everything of a run but its execution: dedup,
// holding for the instant, the outbox, reports, live output to followers,
// cancel flags. For each run that is not a no-op it calls its executor's
// launch() once, and the executor answers by messages to the worker:
// `started`, `output` chunks, then `done` with the result. The executor is
// chosen once, where the worker is spawned: process_executor in production
// (runtime/scheduler_node.cpp, runtime/worker_node.cpp), sim_executor in a
// simulation on CAF's test coordinator (actors/worker/sim_executor.hpp).
#pragma once

#include <atomic>
#include <memory>

#include <caf/actor_clock.hpp>

#include "actors/worker/executor.hpp"
#include "common/clock.hpp"
#include "common/run_pool.hpp"
#include "proto/interfaces.hpp"

namespace aisched::worker {

/// One run the worker hands to its executor.
struct run_launch {
  proto::worker_actor worker;     // told started, output, done (below)
  proto::execute_request req;     // never a no-op (the worker completes those itself)
  /// Turned true by a cancel_run: the run is to end failed, error "cancelled".
  std::shared_ptr<const std::atomic<bool>> cancelled;
  wall_clock clock;                           // the worker's: stamps the start
  const caf::actor_clock* actor_clock = nullptr;  // the worker's system's: outlives the run
};

/// How a worker executes a run. launch() is called on the worker's own
/// handler and must not block.
class run_executor {
 public:
  virtual ~run_executor() = default;

  /// Starts `run`, and from then on tells `run.worker`, in this order:
  /// (started_atom, instance_id, attempt, unix_ms start) once;
  /// (output_atom, instance_id, attempt, chunk) for each chunk of output;
  /// (done_atom, run_result, attempt) once, a result as execute_task's
  /// (executor.hpp): its state, exit code, error, output tail, start and end,
  /// ended "cancelled" once `run.cancelled` turns true, timed_out past
  /// `req.timeout`. An executor that is stopping (the node stops) may end a
  /// run without `done`. False, with nothing started and nothing to come,
  /// when it takes no more runs.
  virtual bool launch(run_launch run) = 0;

  /// How many runs execute at once (aisched-inspect's "slots"; 0: no bound).
  virtual size_t slots() const = 0;
};

/// The real executor: execute_task (processes, HTTP, containers) on a thread
/// of `pool` each, with `opts`. The pool must outlive the worker's runs; the
/// runtime stops it at shutdown, which stops the runs it still executes (no
/// `done`: the unreported run times out on the leader and is retried).
class process_executor final : public run_executor {
 public:
  process_executor(std::shared_ptr<run_pool> pool, exec_options opts);
  bool launch(run_launch run) override;
  size_t slots() const override { return pool_->threads(); }

 private:
  std::shared_ptr<run_pool> pool_;
  exec_options opts_;
};

}  // namespace aisched::worker
