// Tests of raft::core's membership changes (thesis §4, single-server changes):
// learners join, catch up and are promoted; one change at a time, only after
// the leader committed an entry of its term; removing followers and the
// leader; truncation reverting a change; snapshots and restarts keeping it.
#include "sim/raft_core_fixture.hpp"

namespace aisched::raft {
namespace {

using namespace testing_support;

proto::member_info learner(std::string id) {
  return proto::member_info{std::move(id), false, "127.0.0.1:1", "127.0.0.1:2"};
}

std::vector<std::string> voters_of(const core& c) {
  std::vector<std::string> out;
  for (auto& m : c.membership())
    if (m.voter) out.push_back(m.id);
  return out;
}

errc code_of(const caf::error& e) { return view(e).code; }

auto no_auto_promote = [](config& cfg) { cfg.auto_promote = false; };

TEST(raft_membership, a_learner_catches_up_and_is_promoted_by_the_leader) {
  group g{3};
  g.elect("n1");
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(g["n1"].propose(cmd("k" + std::to_string(i))));
  g.deliver_all();
  g.add_joiner("n4");
  EXPECT_FALSE(g["n4"].is_voter("n4"));
  auto index = g["n1"].add_learner(learner("n4"));
  ASSERT_TRUE(index);
  // In effect on the leader as soon as appended: n4 is replicated to.
  EXPECT_EQ(g["n1"].membership().size(), 4u);
  EXPECT_EQ(g["n1"].peer_progress().count("n4"), 1u);
  g.deliver_all();
  EXPECT_EQ(g["n4"].last_index(), g["n1"].last_index());
  EXPECT_EQ(g["n4"].membership(), g["n1"].membership());
  // The next heartbeat round promotes the caught-up learner.
  g.tick_all(3);
  for (auto id : {"n1", "n2", "n3", "n4"})
    EXPECT_EQ(voters_of(g[id]), (std::vector<std::string>{"n1", "n2", "n3", "n4"})) << id;
  EXPECT_EQ(g["n1"].commit_index(), g["n1"].last_index());
  EXPECT_EQ(g["n1"].membership_index(), *index + 1);
}

TEST(raft_membership, a_learner_neither_campaigns_nor_counts_for_commits) {
  group g{3, no_auto_promote};
  g.elect("n1");
  g.add_joiner("n4");
  ASSERT_TRUE(g["n1"].add_learner(learner("n4")));
  g.deliver_all();
  auto term = g["n4"].term();
  g.tick("n4", 200);
  EXPECT_EQ(g["n4"].current_role(), role::follower);
  EXPECT_EQ(g["n4"].term(), term);
  EXPECT_TRUE(g.net().empty()) << "a learner sent something on its own";
  // n1 + the learner are not a majority of {n1, n2, n3}.
  g.cut("n1", "n2");
  g.cut("n1", "n3");
  auto commit = g["n1"].commit_index();
  ASSERT_TRUE(g["n1"].propose(cmd("x")));
  g.deliver_all();
  EXPECT_EQ(g["n4"].last_index(), g["n1"].last_index());
  EXPECT_EQ(g["n1"].commit_index(), commit);
}

TEST(raft_membership, campaigns_reach_learners_but_only_voters_count) {
  group g{3, no_auto_promote};
  g.elect("n1");
  g.add_joiner("n4");
  ASSERT_TRUE(g["n1"].add_learner(learner("n4")));
  g.deliver_all();
  g.crash("n1");
  g["n2"].campaign();
  // A learner may have been promoted by entries n2 lacks: it hears n2's term.
  auto asked = g.take([](const message& m) { return caf::holds_alternative<vote_request>(m.body); });
  std::set<std::string> to;
  for (auto& m : asked) to.insert(m.to);
  EXPECT_EQ(to, (std::set<std::string>{"n1", "n3", "n4"}));
  // n2 and the learner are no majority of {n1, n2, n3}.
  for (auto& m : asked)
    if (m.to == "n4") g.deliver(m);
  g.process_all();
  for (auto& m : g.take([](const message& m) { return m.from == "n4"; })) g.deliver(m);
  EXPECT_NE(g["n2"].current_role(), role::leader);
}

TEST(raft_membership, a_lagging_learner_is_not_promoted) {
  group g{3, [](config& cfg) {
    cfg.auto_promote = false;
    cfg.promote_gap = 2;
  }};
  g.elect("n1");
  g.add_joiner("n4");
  g.cut("n1", "n4");
  ASSERT_TRUE(g["n1"].add_learner(learner("n4")));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(g["n1"].propose(cmd("k" + std::to_string(i))));
  g.deliver_all();
  auto res = g["n1"].promote("n4");
  ASSERT_FALSE(res);
  EXPECT_EQ(code_of(res.error()), errc::unavailable);
  g.heal();
  g.tick_all(3);
  EXPECT_TRUE(g["n1"].promote("n4")) << "caught up now";
}

TEST(raft_membership, one_change_at_a_time) {
  group g{3, no_auto_promote};
  g.elect("n1");
  g.add_joiner("n4");
  g.add_joiner("n5");
  g.take([](const message&) { return true; });
  ASSERT_TRUE(g["n1"].add_learner(learner("n4")));
  g.take([](const message&) { return true; });  // nobody hears of it: uncommitted
  auto second = g["n1"].add_learner(learner("n5"));
  ASSERT_FALSE(second);
  EXPECT_EQ(code_of(second.error()), errc::version_conflict);
  g.tick_all(10);  // a stalled follower is probed again
  EXPECT_GE(g["n1"].commit_index(), g["n1"].membership_index());
  EXPECT_TRUE(g["n1"].add_learner(learner("n5")));
}

TEST(raft_membership, a_new_leader_changes_membership_only_after_committing_its_term) {
  group g{3};
  g.set_drop_if([](const message& m) { return caf::holds_alternative<append_request>(m.body); });
  g["n1"].campaign();
  g.deliver_all();
  ASSERT_EQ(g["n1"].current_role(), role::leader);
  auto res = g["n1"].add_learner(learner("n4"));
  ASSERT_FALSE(res);
  EXPECT_EQ(code_of(res.error()), errc::unavailable);
  g.set_drop_if(nullptr);
  g.tick_all(2);
  EXPECT_TRUE(g["n1"].add_learner(learner("n4")));
}

TEST(raft_membership, only_single_server_changes_are_accepted) {
  group g{3};
  g.elect("n1");
  auto two = g["n1"].membership();
  two.push_back(learner("n4"));
  two.push_back(learner("n5"));
  EXPECT_EQ(code_of(g["n1"].check_membership_change(two)), errc::invalid_argument);
  auto voter = g["n1"].membership();
  voter.push_back(proto::member_info{"n4", true, "", ""});
  EXPECT_EQ(code_of(g["n1"].check_membership_change(voter)), errc::invalid_argument);
  auto swap = g["n1"].membership();
  swap.back() = learner("n4");  // removes n3 and adds n4 at once
  EXPECT_EQ(code_of(g["n1"].check_membership_change(swap)), errc::invalid_argument);
  EXPECT_EQ(code_of(g["n1"].check_membership_change(g["n1"].membership())),
            errc::invalid_argument);
  auto res = g["n1"].propose(proto::command{proto::set_membership{two}});
  EXPECT_FALSE(res);
  EXPECT_FALSE(g["n2"].add_learner(learner("n4")));  // a follower refuses with not_leader
  EXPECT_EQ(code_of(g["n1"].remove_member("n9").error()), errc::not_found);
  EXPECT_EQ(code_of(g["n1"].promote("n2").error()), errc::not_found);
}

TEST(raft_membership, a_removed_follower_no_longer_counts_and_cannot_disrupt) {
  group g{3, [](config& cfg) { cfg.pre_vote = false; }};
  g.elect("n1");
  ASSERT_TRUE(g["n1"].remove_member("n3"));
  g.deliver_all();
  EXPECT_EQ(voters_of(g["n1"]), (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(g["n1"].peer_progress().count("n3"), 0u);
  // n3 never heard of its removal and campaigns; the others ignore it.
  auto term = g["n1"].term();
  g.isolate("n3");
  g.tick("n3", 100);
  EXPECT_GT(g["n3"].term(), term);
  g.heal();
  g.tick_all(10);
  EXPECT_EQ(g["n1"].current_role(), role::leader);
  EXPECT_EQ(g["n1"].term(), term);
  // Commits need n1 and n2 only now.
  g.isolate("n3");
  ASSERT_TRUE(g["n1"].propose(cmd("after")));
  g.deliver_all();
  EXPECT_EQ(g["n1"].commit_index(), g["n1"].last_index());
}

TEST(raft_membership, a_removed_leader_leads_until_the_change_commits_then_steps_down) {
  group g{3};
  g.elect("n1");
  auto index = g["n1"].remove_member("n1");
  ASSERT_TRUE(index);
  EXPECT_EQ(g["n1"].current_role(), role::leader) << "still leads the uncommitted change";
  EXPECT_FALSE(g["n1"].is_voter("n1"));
  g.deliver_all();
  EXPECT_EQ(g["n1"].current_role(), role::follower);
  for (auto id : {"n2", "n3"}) {
    EXPECT_GE(g[id].commit_index(), *index) << id << " learnt the change committed";
    EXPECT_EQ(voters_of(g[id]), (std::vector<std::string>{"n2", "n3"})) << id;
  }
  auto term = g["n1"].term();
  for (int i = 0; i < 60 && g["n2"].current_role() != role::leader &&
                  g["n3"].current_role() != role::leader;
       ++i)
    g.tick_all();
  EXPECT_TRUE(g["n2"].current_role() == role::leader || g["n3"].current_role() == role::leader);
  EXPECT_EQ(g["n1"].current_role(), role::follower);
  // The others no longer talk to it, and it never campaigns.
  EXPECT_EQ(g["n1"].term(), term);
}

TEST(raft_membership, a_member_whose_removal_is_uncommitted_may_still_campaign) {
  // n1 appended its own removal and went down before anyone else got it: its
  // log is the most up to date, so the group may need it to lead once more.
  group g{3};
  proto::membership without_n1{{"n2", true, "", ""}, {"n3", true, "", ""}};
  g.restore("n1", {1, "n1", 1},
            {entry(1, 1), proto::log_entry{2, 1, proto::command{proto::set_membership{without_n1}}}});
  g.restore("n2", {1, "n1", 1}, {entry(1, 1)});
  g.restore("n3", {1, "n1", 1}, {entry(1, 1)});
  EXPECT_FALSE(g["n1"].is_voter("n1"));
  EXPECT_TRUE(g["n1"].can_campaign());
  // n2 and n3 cannot reach each other, and n1 refuses them its vote: only n1
  // can lead, counting the votes of its membership {n2, n3}.
  g.cut("n2", "n3");
  for (int i = 0; i < 100 && g["n2"].commit_index() < 2; ++i) g.tick_all();
  EXPECT_EQ(g["n1"].current_role(), role::follower) << "stepped down once its removal committed";
  g.heal();
  g.tick_all(60);
  int leaders = 0;
  for (auto id : {"n2", "n3"}) {
    EXPECT_GE(g[id].commit_index(), 2u) << id;
    EXPECT_EQ(g[id].membership(), without_n1) << id;
    leaders += g[id].current_role() == role::leader;
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_EQ(g["n1"].current_role(), role::follower);
  EXPECT_FALSE(g["n1"].can_campaign()) << "its removal committed";
}

TEST(raft_membership, truncating_a_conflicting_suffix_reverts_the_membership) {
  group g{3};
  proto::membership four{{"n1", true, "", ""}, {"n2", true, "", ""}, {"n3", true, "", ""},
                         learner("n4")};
  g.restore("n1", {2, "", 1}, {entry(1, 1)});
  g.restore("n2", {1, "", 1},
            {entry(1, 1), proto::log_entry{2, 1, proto::command{proto::set_membership{four}}}});
  g.restore("n3", {2, "n3", 1}, {entry(1, 1), entry(2, 2, "x")});
  EXPECT_EQ(g["n2"].membership().size(), 4u) << "in effect once in the log";
  EXPECT_EQ(g["n2"].membership_index(), 2u);
  g.elect("n3");
  g.tick_all(2);
  EXPECT_EQ(g["n2"].term_at(2), 2u);
  EXPECT_EQ(g["n2"].membership().size(), 3u);
  EXPECT_EQ(proto::find_member(g["n2"].membership(), "n4"), nullptr);
  EXPECT_EQ(g["n2"].membership_index(), 0u);
}

TEST(raft_membership, snapshots_and_restarts_keep_the_membership) {
  group g{3};
  g.elect("n1");
  g.add_joiner("n4");
  ASSERT_TRUE(g["n1"].add_learner(learner("n4")));
  g.deliver_all();
  g.tick_all(3);  // promoted
  ASSERT_EQ(voters_of(g["n1"]).size(), 4u);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(g["n1"].propose(cmd("k" + std::to_string(i))));
  g.deliver_all();
  g.tick_all();
  auto members = g["n1"].membership();
  g["n1"].compact(g["n1"].applied_index());
  EXPECT_EQ(g["n1"].snapshot().members, members);
  // A new member behind the compaction point gets a snapshot carrying it.
  g.add_joiner("n5");
  ASSERT_TRUE(g["n1"].add_learner(learner("n5")));
  g.deliver_all();
  g.tick_all(3);
  EXPECT_EQ(g.at("n5").snap.index, g["n1"].snapshot().index) << "installed a snapshot";
  EXPECT_EQ(g["n5"].membership(), g["n1"].membership());
  EXPECT_TRUE(g["n5"].is_voter("n5"));
  // Restarts recover it from the durable snapshot base and log.
  for (auto id : {"n1", "n4", "n5"}) {
    auto before = g[id].membership();
    g.crash(id);
    g.restart(id);
    EXPECT_EQ(g[id].membership(), before) << id;
  }
}

}  // namespace
}  // namespace aisched::raft

namespace aisched::raft {
namespace {

using namespace testing_support;

TEST(raft_membership, a_refused_campaign_moves_the_term_but_not_the_timeout) {
  // A removed member that never learnt of it campaigns again and again with a
  // log that is behind; the members that could win must still time out.
  config cfg;
  cfg.id = "n1";
  cfg.peers = {"n1", "n2", "n3"};
  cfg.pre_vote = false;
  cfg.check_quorum = false;
  core c{cfg, hard_state{1, "", 1}, snapshot_meta{}, {entry(1, 1)}, 1, 7};
  for (int i = 0; i < 3; ++i) c.tick();
  auto refused = payloads_of<vote_response>(answer(c, vote_request{5, "n2", 0, 0, false}, "n2"));
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_FALSE(refused[0].granted);
  EXPECT_EQ(c.term(), 5u);
  EXPECT_EQ(c.election_elapsed(), 3);
  auto granted = payloads_of<vote_response>(answer(c, vote_request{6, "n3", 1, 1, false}, "n3"));
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_TRUE(granted[0].granted);
  EXPECT_EQ(c.election_elapsed(), 0) << "a granted vote restarts it";
}

}  // namespace
}  // namespace aisched::raft
