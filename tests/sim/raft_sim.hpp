// A deterministic simulation of a Raft group (TigerBeetle VOPR / FoundationDB
// style): N raft::core members over a simulated network that drops, delays,
// duplicates, reorders and partitions, with crashes that lose everything not
// persisted through `ready`, restarts from the simulated disk, log compaction
// and client proposals. Everything is drawn from one seed, so a seed replays a
// run exactly. The Raft safety properties are checked after every event, and
// liveness (leader + a committed proposal within a bound after healing) at
// regular calm phases. Used by tests/sim/raft_sim_test and tests/sim/raft_soak.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace aisched::raft::sim {

struct options {
  uint64_t seed = 1;
  size_t nodes = 3;
  /// Chaos events per run (each delivers a message, ticks, proposes, crashes ...).
  size_t steps = 3000;
  /// A calm phase (heal, restart all, no loss) checking liveness starts after
  /// every this many chaos steps, and once at the end.
  size_t calm_every = 1000;
  /// Ticks a calm phase may take to elect a leader and commit a new proposal,
  /// on top of an allowance for moving the uncommitted backlog (see calm_phase).
  int liveness_ticks = 0;  // 0 = 40 election timeouts
  /// Force these core options; unset = drawn from the seed.
  std::optional<bool> pre_vote;
  std::optional<bool> check_quorum;
  /// Print every event to this stream (nullptr = quiet).
  FILE* trace = nullptr;
};

struct stats {
  uint64_t ticks = 0;
  uint64_t delivered = 0;
  uint64_t dropped = 0;
  uint64_t duplicated = 0;
  uint64_t crashes = 0;
  uint64_t partitions = 0;
  uint64_t leaders = 0;  // distinct (term, leader) pairs observed
  uint64_t max_term = 0;
  uint64_t proposals = 0;
  uint64_t committed = 0;  // highest committed index
  uint64_t applied = 0;    // entries applied, summed over members
  uint64_t compactions = 0;
  uint64_t snapshots = 0;  // snapshots installed by followers
  uint64_t truncations = 0;
  uint64_t calm_phases = 0;
  uint64_t membership_changes = 0;  // proposed by leaders (raft_sim_members)
  uint64_t leader_removals = 0;     // of those, leaders removing themselves
  int max_recovery_ticks = 0;  // worst calm phase: ticks to leader + commit
};

struct result {
  bool ok = true;
  std::string failure;  // what broke, with the step and time
  std::string profile;  // the fault profile and core config drawn from the seed
  sim::stats stats;
};

/// Runs one simulation. A broken core invariant aborts the process; call
/// install_abort_reporter() first so the abort names the seed.
result run(const options& opts);

/// The environment-variable form that replays `opts` in raft_sim_test.
std::string replay_hint(const options& opts);

/// On SIGABRT, prints the replay hint of the simulation running at the time.
void install_abort_reporter(const char* program);

}  // namespace aisched::raft::sim
