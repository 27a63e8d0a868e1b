// Unit tests of raft::core, one behaviour each, with small groups driven by
// hand: the test decides which messages are delivered, dropped or held back,
// when members tick, crash and restart. Covers configuration, elections and
// vote rules, pre-vote and check-quorum (replication, crashes and compaction:
// raft_core_replication_test).
#include "sim/raft_core_fixture.hpp"

namespace aisched::raft {
namespace {

using namespace testing_support;

// -- configuration -----------------------------------------------------------

TEST(raft_core, validate_names_the_bad_field) {
  config cfg;
  cfg.id = "n1";
  cfg.peers = {"n1", "n2", "n3"};
  EXPECT_FALSE(validate(cfg));
  auto bad = cfg;
  bad.peers = {"n2", "n3"};
  EXPECT_EQ(view(validate(bad)).field, "peers");
  bad = cfg;
  bad.peers = {"n1", "n2", "n2"};
  EXPECT_EQ(view(validate(bad)).field, "peers");
  bad = cfg;
  bad.election_ticks = 1;
  EXPECT_EQ(view(validate(bad)).field, "election_ticks");
  bad = cfg;
  bad.max_inflight_appends = 0;
  EXPECT_EQ(view(validate(bad)).code, errc::invalid_argument);
}

TEST(raft_core, messages_round_trip_through_the_caf_binary_codec) {
  append_request req{7, "n1", 3, 6, {entry(4, 6, "a"), entry(5, 7)}, 3};
  message m{"n2", "n1", req};
  auto back = proto::decode<message>(proto::encode(m));
  ASSERT_TRUE(back) << to_string(back.error());
  EXPECT_EQ(back->to, "n2");
  auto* got = caf::get_if<append_request>(&back->body);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->term, 7u);
  EXPECT_EQ(got->prev_index, 3u);
  ASSERT_EQ(got->entries.size(), 2u);
  EXPECT_EQ(key_of(got->entries[0].cmd), "a");
  EXPECT_EQ(got->leader_commit, 3u);
  message v{"n3", "n2", vote_response{4, "n2", true, true}};
  auto vb = proto::decode<message>(proto::encode(v));
  ASSERT_TRUE(vb);
  EXPECT_TRUE(caf::get<vote_response>(vb->body).pre_vote);
}

// -- elections ---------------------------------------------------------------

TEST(raft_core, a_group_of_one_leads_at_once_and_commits_its_proposals) {
  group g{1};
  g["n1"].campaign();
  g.process_all();
  EXPECT_EQ(g["n1"].current_role(), role::leader);
  EXPECT_EQ(g["n1"].term(), 1u);
  auto idx = g["n1"].propose(cmd("x"));
  ASSERT_TRUE(idx);
  EXPECT_EQ(*idx, 2u);  // after the leader's no-op
  g.process_all();
  EXPECT_EQ(g["n1"].commit_index(), 2u);
  ASSERT_EQ(g.at("n1").applied_entries.size(), 2u);
  EXPECT_EQ(key_of(g.at("n1").applied_entries[1].cmd), "x");
  // The role change was reported with the term and the leader.
  auto& first = g.at("n1").readies.front();
  ASSERT_TRUE(first.role);
  EXPECT_EQ(first.role->role, role::leader);
  EXPECT_EQ(first.role->leader, "n1");
}

TEST(raft_core, a_campaign_elects_a_leader_whose_noop_commits_everywhere) {
  group g{3};
  g.elect("n1");
  EXPECT_EQ(g["n1"].term(), 1u);  // pre-vote did not bump any term on its own
  g.tick_all();                   // a heartbeat carries the commit index
  for (auto id : {"n1", "n2", "n3"}) {
    EXPECT_EQ(g[id].term(), 1u) << id;
    EXPECT_EQ(g[id].leader(), "n1") << id;
    EXPECT_EQ(g[id].commit_index(), 1u) << id;
    ASSERT_EQ(g.at(id).applied_entries.size(), 1u) << id;
    EXPECT_EQ(key_of(g.at(id).applied_entries[0].cmd), "noop");
  }
  EXPECT_EQ(g["n2"].voted_for(), "n1");
  EXPECT_EQ(g.at("n2").hard.voted_for, "n1");  // the vote was persisted
}

TEST(raft_core, a_follower_campaigns_after_a_randomized_timeout_in_range) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    config cfg;
    cfg.id = "n1";
    cfg.peers = {"n1", "n2", "n3"};
    core c{cfg, seed};
    auto timeout = c.randomized_election_timeout();
    EXPECT_GE(timeout, 10);
    EXPECT_LT(timeout, 20);
    for (int i = 1; i < timeout; ++i) {
      c.tick();
      ASSERT_EQ(c.current_role(), role::follower) << "seed " << seed << " tick " << i;
    }
    c.tick();
    EXPECT_EQ(c.current_role(), role::pre_candidate) << "seed " << seed;
    auto rd = c.take_ready();
    EXPECT_EQ(payloads_of<vote_request>(rd.messages).size(), 2u);
  }
}

TEST(raft_core, the_same_seed_draws_the_same_timeouts) {
  config cfg;
  cfg.id = "n1";
  cfg.peers = {"n1", "n2", "n3"};
  std::vector<int> a;
  std::vector<int> b;
  core x{cfg, 99};
  core y{cfg, 99};
  for (int i = 0; i < 20; ++i) {
    x.campaign();
    y.campaign();
    a.push_back(x.randomized_election_timeout());
    b.push_back(y.randomized_election_timeout());
  }
  EXPECT_EQ(a, b);
  EXPECT_GT(std::set<int>(a.begin(), a.end()).size(), 1u);
}

TEST(raft_core, a_voter_refuses_a_candidate_whose_log_is_less_up_to_date) {
  config cfg;
  cfg.id = "n1";
  cfg.peers = {"n1", "n2", "n3"};
  cfg.pre_vote = false;
  // n1 holds entries up to index 3, last term 2.
  core c{cfg, hard_state{2, "", 0}, snapshot_meta{}, {entry(1, 1), entry(2, 2), entry(3, 2)}, 0, 1};
  // An older last term loses even with a longer log.
  auto out = answer(c, vote_request{3, "n2", 10, 1, false}, "n2");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(caf::get<vote_response>(out[0].body).granted);
  EXPECT_EQ(c.term(), 3u);  // the higher term was still adopted
  // Same last term but a shorter log loses.
  out = answer(c, vote_request{4, "n2", 2, 2, false}, "n2");
  EXPECT_FALSE(caf::get<vote_response>(out[0].body).granted);
  // Same last term, same length wins.
  out = answer(c, vote_request{5, "n2", 3, 2, false}, "n2");
  EXPECT_TRUE(caf::get<vote_response>(out[0].body).granted);
  EXPECT_EQ(c.voted_for(), "n2");
}

TEST(raft_core, a_voter_grants_one_vote_per_term) {
  config cfg;
  cfg.id = "n1";
  cfg.peers = {"n1", "n2", "n3"};
  cfg.pre_vote = false;
  core c{cfg, 1};
  auto out = answer(c, vote_request{1, "n2", 0, 0, false}, "n2");
  EXPECT_TRUE(caf::get<vote_response>(out[0].body).granted);
  out = answer(c, vote_request{1, "n3", 0, 0, false}, "n3");
  EXPECT_FALSE(caf::get<vote_response>(out[0].body).granted);
  // A retransmitted request of the same candidate is granted again.
  out = answer(c, vote_request{1, "n2", 0, 0, false}, "n2");
  EXPECT_TRUE(caf::get<vote_response>(out[0].body).granted);
  // A new term frees the vote.
  out = answer(c, vote_request{2, "n3", 0, 0, false}, "n3");
  EXPECT_TRUE(caf::get<vote_response>(out[0].body).granted);
}

TEST(raft_core, a_restarted_member_remembers_its_vote) {
  group g{3, [](config& c) { c.pre_vote = false; }};
  g["n2"].campaign();  // n2 asks n1 and n3 for term 1
  auto reqs = g.take([](const message& m) { return m.to == "n1"; });
  ASSERT_EQ(reqs.size(), 1u);
  g.deliver(reqs[0]);  // n1 votes for n2 and persists it
  g.drop_all();
  g.crash("n1");
  g.restart("n1");
  EXPECT_EQ(g["n1"].voted_for(), "n2");
  auto out = answer(g["n1"], vote_request{1, "n3", 5, 1, false}, "n3");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(caf::get<vote_response>(out[0].body).granted);
}

TEST(raft_core, a_candidate_steps_down_on_an_append_of_its_term) {
  group g{3, [](config& c) { c.pre_vote = false; }};
  g["n2"].campaign();  // n2 is candidate of term 1
  g.drop_all();
  EXPECT_EQ(g["n2"].current_role(), role::candidate);
  answer(g["n2"], append_request{1, "n1", 0, 0, {}, 0}, "n1");
  EXPECT_EQ(g["n2"].current_role(), role::follower);
  EXPECT_EQ(g["n2"].leader(), "n1");
  EXPECT_EQ(g["n2"].term(), 1u);
}

TEST(raft_core, a_higher_term_in_any_message_makes_a_leader_follow) {
  group g{3};
  g.elect("n1");
  answer(g["n1"], append_response{5, "n2", false, 0, 0, 0}, "n2");
  EXPECT_EQ(g["n1"].current_role(), role::follower);
  EXPECT_EQ(g["n1"].term(), 5u);
  EXPECT_EQ(g["n1"].leader(), "");
}

// -- pre-vote and check-quorum -----------------------------------------------

TEST(raft_core, pre_vote_keeps_an_isolated_members_term) {
  group g{3};
  g.elect("n1");
  g.isolate("n3");
  g.tick_all(100);  // many election timeouts for n3
  EXPECT_EQ(g["n3"].term(), 1u);
  EXPECT_NE(g["n3"].current_role(), role::leader);
  // Without pre-vote the same isolation inflates the term.
  group plain{3, [](config& c) { c.pre_vote = false; }};
  plain.elect("n1");
  plain.isolate("n3");
  plain.tick_all(100);
  EXPECT_GT(plain["n3"].term(), 3u);
}

TEST(raft_core, a_rejoining_member_does_not_disrupt_a_healthy_leader) {
  group g{3};
  g.elect("n1");
  g.isolate("n3");
  g.tick_all(100);
  g.heal();
  g.tick_all(50);
  EXPECT_EQ(g["n1"].current_role(), role::leader);
  EXPECT_EQ(g["n1"].term(), 1u);
  EXPECT_EQ(g["n3"].leader(), "n1");
  EXPECT_EQ(g["n3"].current_role(), role::follower);
  // Contrast: without pre-vote the rejoining member's higher term deposes the leader.
  group plain{3, [](config& c) { c.pre_vote = false; }};
  plain.elect("n1");
  plain.isolate("n3");
  plain.tick_all(100);
  plain.heal();
  plain.tick_all(50);
  EXPECT_GT(plain["n1"].term(), 1u);
}

TEST(raft_core, a_member_that_hears_a_leader_refuses_pre_votes) {
  group g{3};
  g.elect("n1");
  // n3 asks for a pre-vote while n2 heard from n1 within the election timeout.
  auto out = answer(g["n2"], vote_request{2, "n3", 100, 1, true}, "n3");
  // Under check-quorum the request is ignored outright, term untouched.
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(g["n2"].term(), 1u);
  // Without check-quorum it is answered, but refused.
  group nq{3, [](config& c) { c.check_quorum = false; }};
  nq.elect("n1");
  out = answer(nq["n2"], vote_request{2, "n3", 100, 1, true}, "n3");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(caf::get<vote_response>(out[0].body).granted);
  EXPECT_EQ(nq["n2"].term(), 1u);
  // Once the leader is silent for an election timeout the pre-vote is granted,
  // and still changes nothing durable.
  nq.isolate("n1");
  nq.tick("n2", 10);
  out = answer(nq["n2"], vote_request{2, "n3", 100, 1, true}, "n3");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(caf::get<vote_response>(out[0].body).granted);
  EXPECT_EQ(nq["n2"].term(), 1u);
  EXPECT_EQ(nq["n2"].voted_for(), "n1");
}

TEST(raft_core, check_quorum_makes_an_isolated_leader_step_down) {
  group g{3};
  g.elect("n1");
  g.isolate("n1");
  g.tick("n1", 9);
  EXPECT_EQ(g["n1"].current_role(), role::leader);
  g.tick("n1", 11);  // at most two check-quorum rounds
  EXPECT_EQ(g["n1"].current_role(), role::follower);
  EXPECT_EQ(g["n1"].term(), 1u);
  auto& last = g.at("n1").readies.back();
  ASSERT_TRUE(last.role);
  EXPECT_EQ(last.role->role, role::follower);
  EXPECT_EQ(last.role->leader, "");
  // Proposals are refused from then on.
  EXPECT_FALSE(g["n1"].propose(cmd("late")));
  // Contrast: without check-quorum it would lead on, alone.
  group nq{3, [](config& c) { c.check_quorum = false; }};
  nq.elect("n1");
  nq.isolate("n1");
  nq.tick("n1", 100);
  EXPECT_EQ(nq["n1"].current_role(), role::leader);
}

TEST(raft_core, a_deposed_leader_learns_the_new_term_and_loses_its_uncommitted_entries) {
  // Without check-quorum an isolated leader leads on; the rest moves on.
  group g{3, [](config& c) { c.check_quorum = false; }};
  g.elect("n1");
  g.tick_all();
  g.isolate("n1");
  ASSERT_TRUE(g["n1"].propose(cmd("lost")));
  g.tick_all(60);
  auto new_leader = g["n2"].current_role() == role::leader ? "n2" : "n3";
  ASSERT_EQ(g[new_leader].current_role(), role::leader);
  ASSERT_EQ(g["n1"].current_role(), role::leader);  // still believes it leads term 1
  ASSERT_TRUE(g[new_leader].propose(cmd("kept")));
  g.deliver_all();
  // A stale append is refused with the current term ...
  auto out = answer(g["n2"], append_request{1, "n1", 1, 1, {}, 1}, "n1");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(caf::get<append_response>(out[0].body).success);
  EXPECT_EQ(caf::get<append_response>(out[0].body).term, g["n2"].term());
  // ... and once healed, n1 follows and its uncommitted entry is replaced.
  g.heal();
  g.tick_all(5);
  EXPECT_EQ(g["n1"].current_role(), role::follower);
  EXPECT_EQ(g["n1"].leader(), new_leader);
  EXPECT_EQ(g["n1"].commit_index(), g[new_leader].commit_index());
  std::vector<std::string> applied;
  for (auto& e : g.at("n1").applied_entries) applied.push_back(key_of(e.cmd));
  EXPECT_EQ(std::count(applied.begin(), applied.end(), "lost"), 0);
  EXPECT_EQ(std::count(applied.begin(), applied.end(), "kept"), 1);
}

TEST(raft_core, propose_on_a_follower_returns_not_leader_with_the_hint) {
  group g{3};
  g.elect("n1");
  auto res = g["n2"].propose(cmd("x"));
  ASSERT_FALSE(res);
  auto v = view(res.error());
  EXPECT_EQ(v.code, errc::not_leader);
  EXPECT_NE(v.message.find("n1"), std::string::npos) << v.message;
  EXPECT_EQ(g["n2"].leader(), "n1");
  group fresh{3};
  auto none = fresh["n1"].propose(cmd("y"));
  ASSERT_FALSE(none);
  EXPECT_EQ(view(none.error()).code, errc::not_leader);
}

}  // namespace
}  // namespace aisched::raft
