// The retention actor, leader only: every sweep interval (10 s by default,
// --retention-interval) it asks raft whether this node leads and, if so,
// walks the committed runs task by task through the store, a page at a time
// (storage/run_retention: which finished runs each task's policy lets go),
// and commits each page's runs as one `prune_history`, the next page only once
// that one is applied. So a sweep has one command in flight at most, every
// member removes the same runs, and a new leader simply sweeps again.
// Talks to: raft (status, proposes), store (prune_scan).
#pragma once

#include <cstdint>

#include "common/activity.hpp"
#include "common/clock.hpp"
#include "proto/interfaces.hpp"

namespace aisched::retention {

struct retention_options {
  duration_ms interval = 10'000;
  /// What a task's policy leaves at 0: 7 days, 1 000 runs per task.
  proto::retention_policy defaults{7LL * 24 * 3'600'000, 1000};
  // Runs one prune_history removes at most. One command is in flight at a time,
  // so this bounds how fast a sweep can remove: at 500 a loaded node's commit
  // round trip (~60 ms) let it remove 8 000 runs/s while 40 000 finished, and
  // runs piled up far past keep_runs (BENCHMARKS.md "Memory under load").
  // A page of 5 000 is ~10 ms of apply.
  uint32_t page_runs = 5000;
  uint32_t page_tasks = 1000;  // tasks one page looks at at most
  wall_clock clock{};          // the instant a sweep judges ages at (common/clock.hpp)
};

struct retention_state {
  proto::raft_actor raft;
  proto::store_actor store;
  retention_options opts;
  wall_clock clock;  // opts.clock
  bool sweeping = false;
  uint64_t term = 0;      // of the sweep under way
  unix_ms sweep_now = 0;  // the instant the sweep judges ages at
  proto::prune_cursor cursor;  // where the sweep's next page starts
  uint64_t sweeps = 0;    // sweeps finished by this node
  uint64_t pruned = 0;    // runs its commands removed
  uint64_t failures = 0;  // sweeps ended by an error (leader change, timeout)
  unix_ms last_sweep = 0;
  inspector::activity activity;
  static inline const char* name = "retention";
};

proto::retention_actor::behavior_type retention_actor_impl(
    proto::retention_actor::stateful_pointer<retention_state> self, proto::raft_actor raft,
    proto::store_actor store, retention_options opts);

}  // namespace aisched::retention
