// Hand-made histories for the tests of the scheduler simulation's checkers
// (scheduler_sim_checks_test: slots and DAG; scheduler_sim_run_checks_test:
// total queue, attempts, bounds, liveness, agreement): runs as committed, the
// executions a history implies, and what the checkers' findings mention.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/sim/scheduler_sim_checks.hpp"

namespace aisched::sim::checks_fixture {

using proto::instance_state;

/// A committed record of attempt `attempt` of the run of `task`'s slot `slot`.
inline proto::instance rec(uint64_t task, unix_ms slot, uint32_t attempt, instance_state state,
                    std::string worker = "", unix_ms started = 0, unix_ms finished = 0,
                    std::string error = "") {
  proto::instance x;
  x.id = proto::make_instance_id(task, slot, 0);
  x.task_id = task;
  x.slot = slot;
  x.attempt = attempt;
  x.state = state;
  x.worker_id = std::move(worker);
  x.started_at = started;
  x.finished_at = finished;
  x.error = std::move(error);
  return x;
}

/// The run of `task`'s slot `slot` started at `started` (check_slots' view).
inline proto::instance run_at(uint64_t task, unix_ms slot, unix_ms started, instance_state state,
                       uint32_t attempt = 1) {
  return rec(task, slot, attempt, state, "", started);
}

/// Run `shard` of a bulk enqueue of `task` at `slot`.
inline proto::instance queued(uint64_t task, unix_ms slot, uint32_t shard, instance_state state) {
  auto x = rec(task, slot, 1, state);
  x.id = proto::make_instance_id(task, slot, shard);
  x.shard = shard;
  return x;
}

/// Commits one record per log index, in the order given.
inline history history_of(const std::vector<proto::instance>& steps) {
  history h;
  uint64_t index = 0;
  for (auto& x : steps) {
    proto::applied a;
    a.index = ++index;
    a.instances = {x};
    h.record("n1", a);
  }
  return h;
}

/// Commits applied at instants: (when, record).
using timed_steps = std::vector<std::pair<unix_ms, proto::instance>>;

/// The commits of one run of `task`'s slot `slot` with one attempt: fired
/// (committed at `fired`), started at `started` (committed then) and ended
/// `state` at `ended` (committed then).
inline void add_run(timed_steps& steps, uint64_t task, unix_ms slot, unix_ms fired, unix_ms started,
             unix_ms ended, instance_state state = instance_state::success) {
  steps.emplace_back(fired, rec(task, slot, 1, instance_state::pending));
  steps.emplace_back(started, rec(task, slot, 1, instance_state::running, "n1", started));
  steps.emplace_back(ended, rec(task, slot, 1, state, "n1", started, ended));
}

/// Commits one record per log index in the order of their instants, each
/// applied at its instant (history::applied_at).
inline history timed_history(timed_steps steps) {
  std::stable_sort(steps.begin(), steps.end(),
                   [](auto& a, auto& b) { return a.first < b.first; });
  history h;
  uint64_t index = 0;
  for (auto& [at, x] : steps) {
    proto::applied a;
    a.index = ++index;
    a.instances = {x};
    h.record("n1", a, at);
  }
  return h;
}

inline execution ran(std::string worker, std::string id, uint32_t attempt, unix_ms from,
                     unix_ms to, bool reported = true) {
  return execution{std::move(worker), std::move(id), attempt, from, to, reported};
}

/// An execution of every committed start, on its first worker, as committed.
inline std::vector<execution> executions_of(const std::map<std::string, run_view>& runs) {
  std::vector<execution> out;
  for (auto& [id, v] : runs)
    for (auto& a : v.attempts)
      if (a.started != 0)
        out.push_back(ran(*a.workers.begin(), id, a.attempt, a.started, a.ended ? a.finished : 0));
  return out;
}

inline size_t mentioning(const std::vector<std::string>& lines, const std::string& what) {
  size_t n = 0;
  for (auto& l : lines) n += l.find(what) != std::string::npos;
  return n;
}

inline std::string all(const std::vector<std::string>& lines) {
  std::string out;
  for (auto& l : lines) out += "\n  " + l;
  return out;
}

inline sim_task every(uint64_t id, std::string name, duration_ms interval) {
  sim_task t;
  t.id = id;
  t.name = std::move(name);
  t.every = interval;
  t.max_attempts = 3;
  return t;
}

}  // namespace aisched::sim::checks_fixture
