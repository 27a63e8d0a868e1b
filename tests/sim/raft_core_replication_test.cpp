// Tests of raft::core's log replication (ordering, conflicts, fast backtracking,
// the figure-8 commit rule, batching and pipelining, resends) and of crashes,
// restarts and compaction (recovery of what was persisted, snapshots), and the
// ready/advance contract.
#include "sim/raft_core_fixture.hpp"

namespace aisched::raft {
namespace {

using namespace testing_support;

// -- log replication ---------------------------------------------------------

TEST(raft_core, proposals_replicate_and_commit_in_order) {
  group g{3};
  g.elect("n1");
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(g["n1"].propose(cmd("k" + std::to_string(i))));
  g.deliver_all();
  g.tick_all();
  for (auto id : {"n1", "n2", "n3"}) {
    EXPECT_EQ(g[id].commit_index(), 11u) << id;
    ASSERT_EQ(g.at(id).applied_entries.size(), 11u) << id;
    for (int i = 0; i < 10; ++i)
      EXPECT_EQ(key_of(g.at(id).applied_entries[i + 1].cmd), "k" + std::to_string(i));
    EXPECT_EQ(g.at(id).log.size(), 11u) << id << ": everything was persisted";
  }
  EXPECT_EQ(g["n1"].peer_progress().at("n2").match, 11u);
  EXPECT_EQ(g["n1"].peer_progress().at("n2").state, progress_state::replicate);
}

TEST(raft_core, a_follower_truncates_a_conflicting_uncommitted_suffix) {
  group g{3};
  // n3 was leader of term 2 and appended 3 entries nobody else got.
  g.restore("n1", {3, "", 1}, {entry(1, 1)});
  g.restore("n2", {3, "", 1}, {entry(1, 1)});
  g.restore("n3", {2, "n3", 1},
            {entry(1, 1), entry(2, 2, "x"), entry(3, 2, "y"), entry(4, 2, "z")});
  g.elect("n1");  // term 4
  ASSERT_TRUE(g["n1"].propose(cmd("a")));
  g.deliver_all();
  g.tick_all();
  EXPECT_EQ(g["n3"].last_index(), 3u);
  EXPECT_EQ(g["n3"].term_at(2), 4u);  // n1's no-op replaced "x"
  EXPECT_EQ(g["n3"].commit_index(), 3u);
  // The durable log followed: a ready told n3 to truncate from index 2.
  bool truncated = false;
  for (auto& rd : g.at("n3").readies) truncated |= rd.truncate_from && *rd.truncate_from == 2;
  EXPECT_TRUE(truncated);
  ASSERT_EQ(g.at("n3").log.size(), 3u);
  EXPECT_EQ(key_of(g.at("n3").log[2].cmd), "a");
  for (auto& e : g.at("n3").applied_entries) EXPECT_NE(key_of(e.cmd), "x");
}

void step_conflicting_append_into_committed_prefix() {
  config cfg;
  cfg.id = "n2";
  cfg.peers = {"n1", "n2", "n3"};
  core c{cfg, hard_state{2, "", 2}, snapshot_meta{}, {entry(1, 1), entry(2, 1), entry(3, 1)}, 0, 1};
  // A (broken) leader of term 2 claims index 2 has term 2: index 2 is
  // committed here, so this can only mean a safety bug somewhere.
  c.step(message{"n2", "n1", append_request{2, "n1", 1, 1, {entry(2, 2), entry(3, 2)}, 2}});
}

TEST(raft_core, a_conflict_at_a_committed_index_aborts) {
  EXPECT_DEATH(step_conflicting_append_into_committed_prefix(), "committed");
}

TEST(raft_core, fast_backtracking_skips_a_whole_conflicting_term_per_round_trip) {
  group g{3};
  // n3 holds 50 entries of a term-2 leader nobody else saw.
  std::vector<proto::log_entry> stale{entry(1, 1)};
  for (uint64_t i = 2; i <= 51; ++i) stale.push_back(entry(i, 2, "s" + std::to_string(i)));
  std::vector<proto::log_entry> good{entry(1, 1)};
  for (uint64_t i = 2; i <= 31; ++i) good.push_back(entry(i, 3, "g" + std::to_string(i)));
  g.restore("n1", {3, "", 1}, good);
  g.restore("n2", {3, "", 1}, good);
  g.restore("n3", {3, "", 1}, stale);
  size_t rejections = 0;
  g.set_drop_if([&](const message& m) {
    if (auto* r = caf::get_if<append_response>(&m.body); r && !r->success && m.from == "n3")
      ++rejections;
    return false;
  });
  g.elect("n1");
  g.tick_all(2);
  EXPECT_LE(rejections, 2u);
  EXPECT_EQ(g["n3"].last_index(), 32u);
  EXPECT_EQ(g["n3"].term_at(31), 3u);
  EXPECT_EQ(g["n3"].commit_index(), 32u);
}

TEST(raft_core, a_leader_commits_an_old_term_entry_only_with_one_of_its_own_figure_8) {
  // Figure 8 of the Raft paper, five members. Appends carry one entry so the
  // leader of term 4 can replicate its old entry without its own no-op.
  group g{5, [](config& c) {
            c.max_entries_per_append = 1;
            c.pre_vote = false;
            c.check_quorum = false;  // no leader lease: S5 may campaign right after S1 crashes
          }};
  // (a) S1 led term 2 and replicated index 2 to S2 only; both have since
  // seen term 3.
  g.restore("n1", {3, "", 1}, {entry(1, 1), entry(2, 2, "old")});
  g.restore("n2", {3, "", 1}, {entry(1, 1), entry(2, 2, "old")});
  // (b) S5 led term 3 with votes of S3, S4, S5 and appended index 2 of term 3.
  g.restore("n3", {3, "n5", 1}, {entry(1, 1)});
  g.restore("n4", {3, "n5", 1}, {entry(1, 1)});
  g.restore("n5", {3, "n5", 1}, {entry(1, 1), entry(2, 3, "s5")});
  // (c) S5 is down; S1 wins term 4 with S2 and S3 and gets index 2 onto S3,
  // but its no-op (index 3) reaches nobody.
  g.crash("n5");
  g.isolate("n4");
  g.set_drop_if([](const message& m) {
    auto* a = caf::get_if<append_request>(&m.body);
    return a && !a->entries.empty() && a->entries.front().index == 3;
  });
  g["n1"].campaign();
  g.deliver_all();
  ASSERT_EQ(g["n1"].current_role(), role::leader);
  ASSERT_EQ(g["n1"].term(), 4u);
  g.tick("n1");  // a heartbeat round finds where S2 and S3 match
  g.deliver_all();
  EXPECT_EQ(g["n3"].term_at(2), 2u);  // "old" is on a majority now (S1, S2, S3) ...
  EXPECT_EQ(g["n1"].peer_progress().at("n3").match, 2u);
  EXPECT_EQ(g["n1"].commit_index(), 1u);  // ... and still must not commit
  // (d) S1 crashes; S5 comes back and wins term 5 with S2, S3, S4 (its last
  // term 3 beats their 2), overwriting index 2 everywhere — legal, because it
  // was never committed.
  g.crash("n1");
  g.heal();
  g.set_drop_if(nullptr);
  g.drop_all();
  g.restart("n5");
  g["n5"].campaign();  // term 4: S2 and S3 already voted for S1 in it
  g.deliver_all();
  ASSERT_EQ(g["n5"].current_role(), role::candidate);
  g["n5"].campaign();  // term 5
  g.deliver_all();
  ASSERT_EQ(g["n5"].current_role(), role::leader);
  g.tick_all();
  for (auto id : {"n2", "n3", "n4", "n5"}) {
    EXPECT_EQ(g[id].term_at(2), 3u) << id;
    for (auto& e : g.at(id).applied_entries) EXPECT_NE(key_of(e.cmd), "old") << id;
  }
  // (e) The other branch: had S1's no-op reached a majority, both commit.
  group h{5, [](config& c) { c.pre_vote = false; }};
  h.restore("n1", {3, "", 1}, {entry(1, 1), entry(2, 2, "old")});
  h.restore("n2", {3, "", 1}, {entry(1, 1), entry(2, 2, "old")});
  h.restore("n3", {3, "n5", 1}, {entry(1, 1)});
  h.restore("n4", {3, "n5", 1}, {entry(1, 1)});
  h.restore("n5", {3, "n5", 1}, {entry(1, 1), entry(2, 3, "s5")});
  h.crash("n5");
  h.isolate("n4");
  h.elect("n1");
  EXPECT_EQ(h["n1"].commit_index(), 3u);
  EXPECT_EQ(key_of(h.at("n1").applied_entries[1].cmd), "old");
}

TEST(raft_core, heartbeats_carry_the_commit_index_to_followers) {
  group g{3};
  g.elect("n1");
  g.tick_all();
  // The followers get the entry, but no empty append tells them it committed.
  g.set_drop_if([](const message& m) {
    auto* a = caf::get_if<append_request>(&m.body);
    return a != nullptr && a->entries.empty();
  });
  ASSERT_TRUE(g["n1"].propose(cmd("x")));
  g.deliver_all();
  EXPECT_EQ(g["n1"].commit_index(), 2u);
  EXPECT_EQ(g["n3"].last_index(), 2u);
  EXPECT_EQ(g["n3"].commit_index(), 1u);
  // One heartbeat round later they know.
  g.set_drop_if(nullptr);
  g.tick_all();
  EXPECT_EQ(g["n3"].commit_index(), 2u);
  EXPECT_EQ(g.at("n3").applied, 2u);
}

TEST(raft_core, appends_are_batched_and_pipelined_within_the_window) {
  group g{3, [](config& c) {
            c.max_entries_per_append = 2;
            c.max_inflight_appends = 3;
          }};
  g.elect("n1");
  g.tick_all();
  ASSERT_EQ(g["n1"].peer_progress().at("n2").state, progress_state::replicate);
  // n2 stops answering; proposals pile up.
  g.cut_one_way("n2", "n1");
  g.net().clear();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(g["n1"].propose(cmd("a" + std::to_string(i))));
  auto to_n2 = g.take([](const message& m) { return m.to == "n2"; });
  auto appends = payloads_of<append_request>(to_n2);
  EXPECT_EQ(appends.size(), 3u);  // one per proposal until the window is full
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(g["n1"].propose(cmd("b" + std::to_string(i))));
  EXPECT_TRUE(g.take([](const message& m) { return m.to == "n2"; }).empty());
  EXPECT_EQ(g["n1"].peer_progress().at("n2").inflight.size(), 3u);
  // n2 answers again: the window drains in batches of at most two entries.
  g.heal();
  g.net().clear();
  g.tick_all(12);
  EXPECT_EQ(g["n2"].last_index(), 11u);
  EXPECT_EQ(g["n2"].commit_index(), 11u);
  for (auto& rd : g.at("n1").readies)
    for (auto& a : payloads_of<append_request>(rd.messages)) EXPECT_LE(a.entries.size(), 2u);
}

TEST(raft_core, a_lost_append_is_resent_after_the_flow_stalls) {
  group g{3};
  g.elect("n1");
  g.tick_all();
  // The append carrying "x" to n2 is lost.
  ASSERT_TRUE(g["n1"].propose(cmd("x")));
  auto lost = g.take([](const message& m) { return m.to == "n2"; });
  ASSERT_EQ(payloads_of<append_request>(lost).size(), 1u);
  g.deliver_all();
  g.tick_all(10);
  EXPECT_EQ(g["n2"].last_index(), 2u);
  EXPECT_EQ(g["n2"].commit_index(), 2u);
}

TEST(raft_core, a_silent_follower_gets_heartbeats_not_batches_until_it_answers) {
  group g{3};
  g.elect("n1");
  g.tick_all();
  g.crash("n3");
  g.tick_all(25);  // n3 is no longer "recently active"
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(g["n1"].propose(cmd("k" + std::to_string(i))));
  g.deliver_all();
  size_t batches = 0;
  size_t heartbeats = 0;
  g.set_drop_if([&](const message& m) {
    if (auto* a = caf::get_if<append_request>(&m.body); a != nullptr && m.to == "n3")
      ++(a->entries.empty() ? heartbeats : batches);
    return false;
  });
  g.tick_all(30);
  EXPECT_EQ(batches, 0u);
  EXPECT_GE(heartbeats, 10u);
  // Once it answers again, it catches up.
  g.restart("n3");
  g.tick_all(10);
  EXPECT_GT(batches, 0u);
  EXPECT_EQ(g["n3"].last_index(), g["n1"].last_index());
  EXPECT_EQ(g["n3"].commit_index(), g["n1"].commit_index());
}

// -- crashes, restarts and compaction ----------------------------------------

TEST(raft_core, a_restarted_member_recovers_only_what_it_persisted) {
  group g{3};
  g.elect("n1");
  ASSERT_TRUE(g["n1"].propose(cmd("a")));
  g.deliver_all();
  g.tick_all();
  // n2 receives an append but crashes before its ready is processed.
  g.cut("n1", "n3");
  ASSERT_TRUE(g["n1"].propose(cmd("b")));
  g.process("n1");
  auto to_n2 = g.take([](const message& m) { return m.to == "n2"; });
  ASSERT_EQ(to_n2.size(), 1u);
  g["n2"].step(to_n2[0]);
  EXPECT_EQ(g["n2"].last_index(), 3u);  // in memory only
  g.crash("n2");
  g.restart("n2");
  EXPECT_EQ(g["n2"].last_index(), 2u);
  EXPECT_EQ(g["n2"].term(), 1u);
  EXPECT_EQ(g["n2"].commit_index(), 2u);
  EXPECT_EQ(g["n2"].applied_index(), 2u);
  EXPECT_EQ(g["n1"].commit_index(), 2u);  // "b" did not commit: no ack was sent
  g.heal();
  g.tick_all(10);
  EXPECT_EQ(g["n1"].commit_index(), 3u);
  EXPECT_EQ(g["n2"].commit_index(), 3u);
}

TEST(raft_core, a_follower_behind_the_compacted_log_gets_a_snapshot) {
  group g{3};
  g.elect("n1");
  g.isolate("n3");
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(g["n1"].propose(cmd("k" + std::to_string(i))));
  g.deliver_all();
  g.tick_all();
  ASSERT_EQ(g["n1"].applied_index(), 21u);
  g["n1"].compact(15);
  EXPECT_EQ(g["n1"].snapshot().index, 15u);
  EXPECT_EQ(g["n1"].entries().size(), 6u);
  EXPECT_FALSE(g["n1"].term_at(10));
  g.heal();
  g.tick_all(10);
  // n3 installed the snapshot and took the rest as entries.
  bool installed = false;
  for (auto& rd : g.at("n3").readies) installed |= rd.snapshot && rd.snapshot->index == 15;
  EXPECT_TRUE(installed);
  EXPECT_EQ(g["n3"].snapshot().index, 15u);
  EXPECT_EQ(g["n3"].last_index(), 21u);
  EXPECT_EQ(g["n3"].commit_index(), 21u);
  EXPECT_EQ(g.at("n3").applied, 21u);
  // After the jump only entries after the snapshot were applied one by one.
  ASSERT_FALSE(g.at("n3").applied_entries.empty());
  EXPECT_EQ(g.at("n3").applied_entries.back().index, 21u);
  // And n3 restarts from its snapshot-based durable log.
  g.crash("n3");
  g.restart("n3");
  EXPECT_EQ(g["n3"].snapshot().index, 15u);
  EXPECT_EQ(g["n3"].last_index(), 21u);
}

TEST(raft_core, a_follower_that_lost_its_disk_gets_a_snapshot_once_reported_restarted) {
  group g{3};
  g.elect("n1");
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(g["n1"].propose(cmd("k" + std::to_string(i))));
  g.deliver_all();
  g.tick_all();
  ASSERT_EQ(g["n1"].peer_progress().at("n3").match, 21u);
  g["n1"].compact(15);
  // n3 comes back with an empty data dir: all it acknowledged is gone.
  g.crash("n3");
  g.at("n3") = group::member{};
  g.restart("n3");
  ASSERT_EQ(g["n3"].last_index(), 0u);
  g["n1"].peer_restarted("n3");  // the driver saw n3's connection drop
  EXPECT_EQ(g["n1"].peer_progress().at("n3").match, 0u);
  g.tick_all(10);
  bool installed = false;
  for (auto& rd : g.at("n3").readies) installed |= rd.snapshot && rd.snapshot->index == 15;
  EXPECT_TRUE(installed);
  EXPECT_EQ(g["n3"].last_index(), 21u);
  EXPECT_EQ(g.at("n3").applied, 21u);
}

void take_two_readies_without_advance() {
  config cfg;
  cfg.id = "n1";
  cfg.peers = {"n1"};
  core c{cfg, 1};
  c.campaign();
  auto rd = c.take_ready();
  ASSERT_TRUE(c.propose(cmd("x")));
  c.take_ready();
}

TEST(raft_core, take_ready_requires_advance_of_the_previous_ready) {
  EXPECT_DEATH(take_two_readies_without_advance(), "advance");
}


}  // namespace
}  // namespace aisched::raft
