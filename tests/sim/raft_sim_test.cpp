// Seeded simulations of 3- and 5-member raft::core groups (tests/sim/raft_sim):
// lossy, duplicating, reordering network, partitions, crashes that lose
// unpersisted state, restarts, compaction and client proposals, with election
// safety, log matching, leader completeness and state-machine safety checked
// after every event and liveness checked after every healing. A failure prints
// its seed and the command that replays it; AISCHED_SIM_SEED=... runs one seed
// (raft_sim.replay), and raft_soak (tests/sim/raft_soak.cpp) runs thousands.
#include "tests/sim/raft_sim.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace aisched::raft::sim {
namespace {

struct totals {
  uint64_t runs = 0;
  uint64_t ticks = 0;
  uint64_t crashes = 0;
  uint64_t snapshots = 0;
  uint64_t leaders = 0;
  uint64_t committed = 0;
  uint64_t membership_changes = 0;
  uint64_t leader_removals = 0;
  int worst_recovery = 0;
};

// Runs `count` seeds from `first`; stops at the first failure, reporting how
// to replay it.
void run_seeds(uint64_t first, uint64_t count, options opts, totals& sum) {
  sim::install_abort_reporter("raft_sim_test");
  for (auto seed = first; seed < first + count; ++seed) {
    opts.seed = seed;
    auto res = sim::run(opts);
    ASSERT_TRUE(res.ok) << res.failure << "\n  profile: " << res.profile
                        << "\n  replay:  " << sim::replay_hint(opts);
    ++sum.runs;
    sum.ticks += res.stats.ticks;
    sum.crashes += res.stats.crashes;
    sum.snapshots += res.stats.snapshots;
    sum.leaders += res.stats.leaders;
    sum.committed += res.stats.committed;
    sum.membership_changes += res.stats.membership_changes;
    sum.leader_removals += res.stats.leader_removals;
    sum.worst_recovery = std::max(sum.worst_recovery, res.stats.max_recovery_ticks);
  }
}

void report(const char* name, const totals& t) {
  std::printf(
      "[ %s ] %llu runs, %llu ticks, %llu crashes, %llu snapshots installed, "
      "%llu leaders, %llu entries committed, %llu membership changes (%llu removing the "
      "leader), worst recovery %d ticks\n",
      name, static_cast<unsigned long long>(t.runs), static_cast<unsigned long long>(t.ticks),
      static_cast<unsigned long long>(t.crashes), static_cast<unsigned long long>(t.snapshots),
      static_cast<unsigned long long>(t.leaders), static_cast<unsigned long long>(t.committed),
      static_cast<unsigned long long>(t.membership_changes),
      static_cast<unsigned long long>(t.leader_removals), t.worst_recovery);
}

// Each run: 5000 chaos events (about 1000-1300 ticks, ~50 crashes, ~10
// leaders) and 6 calm phases; the fault profile is drawn from the seed.
constexpr size_t steps_per_run = 5000;

TEST(raft_sim, three_members_keep_safety_and_liveness_under_faults) {
  options opts;
  opts.nodes = 3;
  opts.steps = steps_per_run;
  totals t;
  run_seeds(1, 400, opts, t);
  report("3 members", t);
  EXPECT_GT(t.snapshots, 0u) << "no run compacted past a follower and sent it a snapshot";
  EXPECT_GT(t.membership_changes, 0u) << "no run changed the membership";
  EXPECT_GT(t.leader_removals, 0u) << "no run removed a leader";
}

TEST(raft_sim, five_members_keep_safety_and_liveness_under_faults) {
  options opts;
  opts.nodes = 5;
  opts.steps = steps_per_run;
  totals t;
  run_seeds(100'001, 400, opts, t);
  report("5 members", t);
}

TEST(raft_sim, without_pre_vote_or_check_quorum_safety_still_holds) {
  // The optional mechanisms only protect availability; safety must not
  // depend on them.
  options opts;
  opts.nodes = 5;
  opts.steps = steps_per_run;
  opts.pre_vote = false;
  opts.check_quorum = false;
  totals t;
  run_seeds(200'001, 100, opts, t);
  report("5 members, plain raft", t);
}

TEST(raft_sim, a_seed_replays_the_same_run) {
  options opts;
  opts.seed = 42;
  opts.nodes = 5;
  auto a = sim::run(opts);
  auto b = sim::run(opts);
  ASSERT_TRUE(a.ok) << a.failure;
  EXPECT_EQ(a.profile, b.profile);
  EXPECT_EQ(a.stats.ticks, b.stats.ticks);
  EXPECT_EQ(a.stats.delivered, b.stats.delivered);
  EXPECT_EQ(a.stats.committed, b.stats.committed);
  EXPECT_EQ(a.stats.max_term, b.stats.max_term);
  EXPECT_EQ(a.stats.applied, b.stats.applied);
}

// Replays one run from the environment, e.g.
//   AISCHED_SIM_SEED=17 AISCHED_SIM_NODES=5 raft_sim_test --gtest_filter=raft_sim.replay
// AISCHED_SIM_TRACE=1 prints every event.
TEST(raft_sim, replay) {
  auto env = [](const char* name) -> const char* { return std::getenv(name); };
  if (env("AISCHED_SIM_SEED") == nullptr)
    GTEST_SKIP() << "set AISCHED_SIM_SEED (and AISCHED_SIM_NODES, AISCHED_SIM_STEPS) to replay";
  options opts;
  opts.seed = std::strtoull(env("AISCHED_SIM_SEED"), nullptr, 10);
  if (auto* x = env("AISCHED_SIM_NODES")) opts.nodes = std::strtoull(x, nullptr, 10);
  if (auto* x = env("AISCHED_SIM_STEPS")) opts.steps = std::strtoull(x, nullptr, 10);
  if (auto* x = env("AISCHED_SIM_PRE_VOTE")) opts.pre_vote = std::string{x} == "1";
  if (auto* x = env("AISCHED_SIM_CHECK_QUORUM")) opts.check_quorum = std::string{x} == "1";
  if (auto* x = env("AISCHED_SIM_TRACE"); x != nullptr && std::string{x} != "0")
    opts.trace = stderr;
  sim::install_abort_reporter("raft_sim_test");
  auto res = sim::run(opts);
  std::printf("profile: %s\n", res.profile.c_str());
  EXPECT_TRUE(res.ok) << res.failure << "\n  replay: " << sim::replay_hint(opts);
}

}  // namespace
}  // namespace aisched::raft::sim
