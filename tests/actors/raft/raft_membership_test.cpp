// Membership changes through real raft actors on CAF's test coordinator
// (tests/actors/raft/raft_group.*): a member started empty (--join) is added
// as a learner, catches up (by a snapshot when the log was compacted) and is
// promoted to voter by the leader; a removed follower no longer counts and
// its link is dropped; a removed leader steps down once its removal commits
// and the others elect a new leader that takes writes.
#define CAF_GTEST_DSL_IMPL
#include "raft_group.hpp"

#include <chrono>
#include <string>

#include "proto/errors.hpp"
#include "storage/state_machine.hpp"

namespace aisched::raft {
namespace {

using namespace std::chrono_literals;
using test::raft_group;

int elect(raft_group& g, std::chrono::milliseconds limit = 3000ms) {
  int leader = -1;
  auto took = g.run_until([&] { return (leader = g.agreed_leader()) >= 0; }, limit);
  EXPECT_GE(took.count(), 0) << "no agreed leader within " << limit.count() << " ms";
  return leader;
}

proto::membership_change add(const std::string& id) {
  return proto::membership_change{true, proto::member_info{id, false, "127.0.0.1:7404",
                                                           "127.0.0.1:8084"}};
}

proto::membership_change remove(const std::string& id) {
  return proto::membership_change{false, proto::member_info{id, true, "", ""}};
}

bool is_voter_on(raft_group& g, size_t on, const std::string& id) {
  return g.state(on).member->is_voter(id);
}

TEST(raft_membership_actor, a_joiner_catches_up_by_snapshot_and_becomes_a_voter) {
  raft_group g(3, /*snapshot_every=*/20);
  auto leader = elect(g);
  ASSERT_GE(leader, 0);
  for (int i = 0; i < 60; ++i) ASSERT_NE(g.create_task(leader, "t" + std::to_string(i)), 0u);
  auto n4 = g.add_joiner();
  g.run_for(1500ms);
  EXPECT_EQ(g.state(n4).member->current_role(), role::follower) << "a joiner never campaigns";
  EXPECT_EQ(g.state(n4).member->term(), 0u);
  auto a = g.change_members(leader, add("n4"));
  ASSERT_TRUE(a) << g.sys.render(a.error());
  auto took = g.run_until(
      [&] {
        return is_voter_on(g, leader, "n4") && is_voter_on(g, n4, "n4") &&
               g.at(n4).sm->applied_index() == g.at(leader).sm->applied_index();
      },
      3000ms);
  ASSERT_GE(took.count(), 0) << "n4 did not catch up and become a voter";
  EXPECT_GT(g.state(n4).member->snapshot().index, 0u) << "n4 should have installed a snapshot";
  EXPECT_EQ(g.state(n4).member->membership(), g.state(leader).member->membership());
  auto& st = g.state(n4);
  auto tasks = st.sm->applied_index();
  EXPECT_GE(tasks, 61u);
  // Writes commit with four voters, n4 included.
  ASSERT_NE(g.create_task(leader, "after"), 0u);
  g.run_until([&] { return g.at(n4).sm->applied_index() == g.at(leader).sm->applied_index(); },
              1000ms);
  EXPECT_EQ(g.at(n4).sm->applied_index(), g.at(leader).sm->applied_index());
  // A restart recovers the membership from its own state.
  auto before = g.state(n4).member->membership();
  g.stop(n4);
  g.start(n4);
  g.sched.run();  // the actor initializes its state when first run
  EXPECT_EQ(g.state(n4).member->membership(), before);
}

TEST(raft_membership_actor, a_removed_follower_no_longer_counts) {
  raft_group g(3);
  auto leader = elect(g);
  ASSERT_GE(leader, 0);
  size_t victim = leader == 2 ? 1 : 2;
  auto victim_id = g.at(victim).id;
  auto a = g.change_members(leader, remove(victim_id));
  ASSERT_TRUE(a) << g.sys.render(a.error());
  EXPECT_FALSE(is_voter_on(g, leader, victim_id));
  EXPECT_EQ(g.state(leader).peers.count(victim_id), 0u) << "the link to it is dropped";
  // Two voters left: the leader and the other one commit without the victim.
  g.stop(victim);
  ASSERT_NE(g.create_task(leader, "without-victim"), 0u);
  auto again = g.change_members(leader, remove(victim_id));
  ASSERT_FALSE(again);
  EXPECT_EQ(view(again.error()).code, errc::not_found);
}

TEST(raft_membership_actor, a_removed_leader_steps_down_and_the_rest_elect_a_new_one) {
  raft_group g(3);
  auto leader = elect(g);
  ASSERT_GE(leader, 0);
  auto old_id = g.at(leader).id;
  ASSERT_NE(g.create_task(leader, "before"), 0u);
  // Asked through a follower: forwarded to the leader like any write.
  size_t via = leader == 0 ? 1 : 0;
  auto a = g.change_members(via, remove(old_id));
  ASSERT_TRUE(a) << g.sys.render(a.error());
  int next = -1;
  auto took = g.run_until(
      [&] {
        next = g.agreed_leader();
        return next >= 0 && next != leader;
      },
      3000ms);
  ASSERT_GE(took.count(), 0) << "no new leader among the remaining members";
  EXPECT_NE(g.state(leader).member->current_role(), role::leader);
  EXPECT_FALSE(is_voter_on(g, next, old_id));
  ASSERT_NE(g.create_task(next, "after"), 0u);
  g.run_for(2000ms);
  EXPECT_EQ(g.agreed_leader(), next) << "the removed leader does not disrupt";
}

}  // namespace
}  // namespace aisched::raft
