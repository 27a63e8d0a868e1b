// The checkers of the scheduler simulation (tests/sim/scheduler_sim): pure
// functions from what a run recorded (the workload it created, the fault
// windows it caused, every committed instance change, the leader's final
// state) to violations, one line each. They talk to no actor; scheduler_sim
// feeds them, and they can be fed a hand-made history in a unit test.
//
// - slots (Jepsen's Chronos checker): every slot of a periodic task in the
//   checked window, and every one-shot instant, fired exactly once (one run
//   per (task, slot), and no run at an instant that is no slot); its run
//   started within [slot, slot + eps] unless a fault window covers the slot,
//   and never before the slot; and it ended success, or failed with every
//   attempt its retry policy allows spent. Every run of an acknowledged bulk
//   enqueue ended the same way.
// - settled: after the settle period no run is pending, dispatched, running
//   or waiting to retry.
// - history: the recorded history agrees with the leader's final state (no
//   commit missed by the recorders), and no two members applied one log index
//   differently.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "proto/commands.hpp"
#include "proto/types.hpp"

namespace aisched::sim {

/// A task the workload created, as the checks need it.
struct sim_task {
  uint64_t id = 0;
  std::string name;
  duration_ms every = 0;  // `@every` interval (slots k * every since the epoch); 0: not periodic
  unix_ms at = 0;         // one-shot instant; 0: none
  unix_ms end_at = 0;     // no slots after this (0: unbounded)
  uint32_t max_attempts = 1;
  std::vector<std::string> enqueued;  // a bulk enqueue's runs, as its acknowledgement named them
};

/// When a fault was active: [from, to] on the simulated wall clock.
struct fault_window {
  std::string kind;    // "leader_crash", "follower_crash", "leader_freeze", "partition",
                       // "one_way", "worker_death"
  std::string member;  // "n2"; "n1->n3" for one_way (n1's messages to n3 lost)
  unix_ms from = 0;
  unix_ms to = 0;
};

/// Every committed instance change, by raft log index, as the first member to
/// apply that index told its listeners; and the indexes two members applied
/// differently.
struct history {
  std::map<uint64_t, std::vector<proto::instance>> commits;
  std::vector<std::string> disagreements;

  /// Records what member `member` applied (a commit listener's `applied`).
  void record(const std::string& member, const proto::applied& a);
};

/// One run as the history shows it.
struct run_view {
  proto::instance last;    // its latest committed record
  unix_ms first_start = 0;  // the earliest start of any of its attempts (0: never started)
};

/// The runs of `h` by instance id.
std::map<std::string, run_view> runs_of(const history& h);

struct check_bounds {
  unix_ms checked_from = 0;   // slots in [checked_from, checked_until] are checked
  unix_ms checked_until = 0;
  duration_ms eps = 1'000;    // a run starts at most this long after its slot...
  duration_ms heal = 15'000;  // ...unless its slot is in [from, to + heal] of a fault window
};

/// Whether a fault window, extended by `heal`, covers instant `t`.
bool covered(const std::vector<fault_window>& faults, duration_ms heal, unix_ms t);

/// Whether `x` ended as its task allows: success, or failed / timed out with
/// `max_attempts` attempts spent.
bool ended_allowed(const proto::instance& x, uint32_t max_attempts);

std::vector<std::string> check_slots(const std::vector<sim_task>& tasks,
                                     const std::vector<fault_window>& faults,
                                     const std::map<std::string, run_view>& runs,
                                     const check_bounds& b);

/// `final_state`: every run in the leader's state at the end, by id.
std::vector<std::string> check_settled(const std::map<std::string, proto::instance>& final_state);

std::vector<std::string> check_history(const history& h,
                                       const std::map<std::string, run_view>& runs,
                                       const std::map<std::string, proto::instance>& final_state);

}  // namespace aisched::sim
