// The simulation's executor (issue 45 item 2): a run takes a duration and ends
// with an exit code, both drawn from a seed and the run ("{instance}#{attempt}"),
// without a process or a thread. Each run is a small actor of the worker's
// system that times itself on the actor clock (delayed messages), so on CAF's
// test coordinator it runs in virtual time and a seed replays exactly. At the
// worker's level it behaves as process_executor does for a shell run: it
// reports its start and one line of output, ends failed (exit status N) or
// success, is killed by a cancel (seen within `poll`, failed "cancelled", exit
// 137) and by its timeout (timed_out, exit 137; -1 for both with HTTP runs).
// Unlike the real one it has no slots: every run it is given runs at once.
// An observer may be told of each run's start and end (the scheduler
// simulation records what really executed, tests/sim/scheduler_sim).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "actors/worker/run_executor.hpp"

namespace aisched::worker {

/// One step of one execution, as sim_options::observer is told it.
struct sim_run_event {
  enum class kind : uint8_t {
    started,  // it began (the executor tells its worker `started` at the same instant)
    ended,    // it ended and told its worker `done` (success, failed, cancelled, timed out)
    stopped,  // it ended silently: its executor was stopped (the worker killed)
  };
  uint64_t run = 0;  // the run's actor id: the same in its start and its end, unique in the system
  std::string instance_id;
  uint32_t attempt = 0;
  kind what = kind::started;
  unix_ms at = 0;  // on the run's wall clock
};

/// How long the runs of one task take: between `min` and `max`, both included.
struct duration_range {
  duration_ms min = 0;
  duration_ms max = 0;
};

struct sim_options {
  uint64_t seed = 1;
  duration_ms min_duration = 100;     // a run takes between these two, both included...
  duration_ms max_duration = 10'000;
  /// ...unless its task has a range of its own here (e.g. a task whose runs
  /// outlast its period: tests/sim/sim_workload). Asked at each launch, so it
  /// may learn of tasks created after the executor. Empty, or nullopt for a
  /// task: the range above.
  std::function<std::optional<duration_range>(uint64_t task_id)> durations_of;
  uint32_t failure_permille = 100;    // runs that exit non-zero, per thousand...
  int32_t max_exit_code = 3;          // ...with an exit code in [1, max_exit_code]
  duration_ms poll = 50;              // how often a run sees its cancel flag (as the real one)
  /// Told each run's start and end, on the run's actor (so in the thread of
  /// the actor system that runs it). Empty: nobody is told.
  std::function<void(const sim_run_event&)> observer;
};

/// What one run does if nothing stops it.
struct sim_outcome {
  duration_ms duration = 0;
  int32_t exit_code = 0;
};

class sim_executor final : public run_executor {
 public:
  explicit sim_executor(sim_options opts);

  /// The outcome of attempt `attempt` of `instance_id`, a run of task
  /// `task_id`: a function of the seed, the run and its task's duration range
  /// alone (not of when or where it runs).
  sim_outcome outcome_of(const std::string& instance_id, uint32_t attempt,
                         uint64_t task_id = 0) const;

  bool launch(run_launch run) override;
  size_t slots() const override { return 0; }

  /// Takes no more runs; the runs still going end at their next timer
  /// without `done`, as a stopped run_pool's (the node stops). Idempotent.
  void stop();

  const sim_options& options() const { return opts_; }

 private:
  sim_options opts_;
  std::shared_ptr<std::atomic<bool>> stopped_;
};

}  // namespace aisched::worker
