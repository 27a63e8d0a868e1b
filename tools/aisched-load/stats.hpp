// aisched-load's arithmetic, pure and testable without a node: percentiles,
// the two lateness measures of a run, and the rate cap that the throughput
// scenario's own parameters put on what it measures.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "proto/time.hpp"

namespace aisched::load {

/// The times of one run, as `/api/v1/instances` reports them (0 when unset).
/// A load task carries no jitter, so its slot is its due instant.
struct run_times {
  unix_ms slot = 0;      // the due instant
  unix_ms created = 0;   // the fire: when the leader decided and proposed the run
  unix_ms started = 0;   // when the worker started it
  unix_ms finished = 0;  // when its result was reported
};

struct percentiles {
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  size_t n = 0;
};

/// Nearest-rank percentiles of `xs` (any order); all zero when empty.
percentiles summarize(std::vector<double> xs);

/// Fire lateness, created - slot, of every run that has a creation time.
std::vector<double> fire_lateness(const std::vector<run_times>& runs);

/// Start lateness, started - slot, of every run that started: what BullMQ's
/// benchmarks call a delayed job's lateness. Runs that never started are left out.
std::vector<double> start_lateness(const std::vector<run_times>& runs);

/// The idle scenario's schedule: task i (creation order) runs daily at
/// minute-of-day i % 1440, UTC (cron `0 M H * * *`), so N tasks come due
/// N / 1 440 at a time, once a minute, and most of them are idle in any window.
unsigned idle_minute_of_day(size_t i);

/// How many of tasks 0..n-1 come due in [from, to) (UTC; from and to on whole
/// minutes, to - from at most a day).
size_t idle_due(size_t n, unix_ms from, unix_ms to);

/// What the throughput scenario can measure at most. It keeps at most `backlog`
/// runs in flight (created and not yet seen done), each due `due_ms` after its
/// create, so by Little's law its rate is at most backlog / (due + pipeline),
/// where the pipeline is the rest of a run's time in flight: the create's round
/// trip, fire, dispatch, run, result, and the tool's own polling of /metrics.
/// A full backlog alone does not say the tool set the rate: a node that
/// cannot keep up holds the runs itself, queued for a worker slot, and the
/// time in flight is its queue. So the cap counts only when the node's queue
/// held less than half of what was in flight; otherwise the node was the bound.
struct self_cap {
  double pipeline_ms = 0;   // mean time in flight beyond due_ms (0 when unknown)
  double cap_per_s = 0;     // backlog / (due_ms + pipeline_ms)
  bool node_bound = false;  // most runs in flight were queued at the node
  bool capped = false;      // within `margin` of cap_per_s, and not node_bound
};

/// `mean_in_flight` is the mean over the window of runs created and not seen
/// done, `mean_queued` the mean of those the node held pending (fired, not
/// placed on a worker); `rate_per_s` the measured rate of runs done.
/// Requires backlog > 0.
self_cap throughput_cap(size_t backlog, double due_ms, double mean_in_flight, double mean_queued,
                        double rate_per_s, double margin = 0.10);

/// The warning line for a capped run, naming the flags that lift the cap.
std::string cap_warning(size_t backlog, double due_ms, const self_cap& c, double rate_per_s);

}  // namespace aisched::load
