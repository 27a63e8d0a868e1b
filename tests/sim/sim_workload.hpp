// The workload a seed draws for the scheduler simulation (issue 45 item 4):
// the tasks it creates, the pool, the bulk enqueue, the cancel of one
// enqueued run, and the pause and resume of one @every task, at instants
// drawn from the seed. The tasks:
// - three to five @every tasks (5-30 s), one of them paused and resumed;
// - one to three one-shots;
// - a queue task fed by one bulk enqueue of three to eight runs;
// - two or three @every tasks sharing a pool of one or two;
// - an @every task of max_concurrency 1 (overlap allow: its runs wait);
// - a six-field cron task (seconds first) in a zone drawn among UTC and three
//   of a fractional offset (Kathmandu +05:45, Eucla +08:45, St John's -03:30);
// - an @every 15 s task with a jitter of 5-14 s;
// - a task without a schedule of its own that depends on the cron task (a
//   DAG: it fires on each success of the cron task's latest run);
// - two @every 5 s tasks whose runs take 6-12 s, one of overlap skip and one
//   of buffer_one, until 150 s in;
// - a queue task in the pool fed by one bulk enqueue of 10-20 runs just
//   before the faults: a backlog on the pool.
// Every task retries a failed run twice. Pure: no actor, no clock.
// scheduler_sim carries the plan out through the leader as the gateway would;
// each task's sim_task says what the checkers (scheduler_sim_checks) expect.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/splitmix.hpp"
#include "proto/controls.hpp"
#include "proto/types.hpp"
#include "tests/sim/scheduler_sim_checks.hpp"

namespace aisched::sim {

/// SplitMix64: a stream of well-mixed draws from one seed.
class seed_stream {
 public:
  explicit seed_stream(uint64_t seed) : state_(splitmix64(seed)) {}

  /// Uniform in [0, below); 0 when `below` is 0.
  uint64_t draw(uint64_t below);
  /// Uniform in [lo, hi], both included (lo <= hi).
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(draw(static_cast<uint64_t>(hi - lo + 1)));
  }

 private:
  uint64_t state_;
};

/// Every task of the workload retries a failed run twice, 2 s apart.
constexpr uint32_t workload_max_attempts = 3;
constexpr duration_ms workload_retry_interval = 2'000;

/// A task to create: its definition as the gateway would propose it (its
/// created_at and updated_at set when it is created), and what the checkers
/// expect of it (its id set once created).
struct planned_task {
  proto::task def;
  sim_task expect;
  /// Its upstreams, as indexes into workload_plan::tasks (each created before
  /// it): their ids become its depends_on when it is created.
  std::vector<size_t> upstreams;
  /// How long its runs take in the simulated executor, when not the common
  /// range (0, 0: the common range; worker::sim_options::durations_of).
  duration_ms min_duration = 0;
  duration_ms max_duration = 0;
};

/// A bulk enqueue: its runs, one per payload, of a queue task.
struct enqueue_plan {
  size_t task = 0;  // the queue task: an index into workload_plan::tasks
  unix_ms at = 0;
  std::vector<std::string> payloads;
};

struct workload_plan {
  /// Put before any task is created (size 0: no pool).
  proto::pool pool;
  /// Created in this order: @every tasks every-1.., one-shots once-1..,
  /// the queue task `bulk`, then the tasks of the pool (pooled-1..), the
  /// task of max_concurrency 1 (serial), the cron task (cron), the jittered
  /// task (jittered), the task that depends on the cron task (chained), the
  /// tasks of overlap skip (skip) and buffer_one (buffered), and the queue
  /// task in the pool (pooled-queue).
  std::vector<planned_task> tasks;
  enqueue_plan bulk;  // of the queue task `bulk`
  /// Of `pooled-queue`, 3.5-5 s after `bulk`: more runs than the pool holds
  /// waiting at once, so that a placement often comes while the router's
  /// note of why they wait is being committed (the race of ec39c14).
  enqueue_plan backlog;
  /// One acknowledged run of `bulk` is cancelled `cancel_after` after
  /// it: the `cancel_pick`-th, modulo how many were acknowledged.
  duration_ms cancel_after = 0;
  size_t cancel_pick = 0;
  /// The @every task paused at `pause_at` and resumed at `resume_at` (an index into `tasks`).
  size_t paused = 0;
  unix_ms pause_at = 0;
  unix_ms resume_at = 0;
};

/// The workload of a run that begins at `t0`, its periodic tasks firing
/// until `end_at`. `first` draws what the workload's first version drew, in
/// the same order (the @every tasks, the one-shots, the enqueue); `more`
/// draws the rest, so that every seed's first draws, and the faults drawn
/// after them, keep their meaning.
workload_plan plan_workload(seed_stream& first, seed_stream& more, unix_ms t0, unix_ms end_at);

/// A one-shot at `at` (the workload's retries and misfire policy): the
/// workload's own, and the ones scheduler_sim creates as a leader is lost,
/// `at` a moment away, whose create commits
/// only once a new leader leads, after its instant, and it must still fire
/// once (a missed slot for the misfire policy). An earlier trigger left such
/// a one-shot acknowledged and never fired (fixed in 71a8bb2).
planned_task one_shot_task(std::string name, unix_ms at);

}  // namespace aisched::sim
