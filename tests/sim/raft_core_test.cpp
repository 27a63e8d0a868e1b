// Unit tests of raft::core, one behaviour each, with small groups driven by
// hand: the test decides which messages are delivered, dropped or held back,
// when members tick, crash and restart. Covers elections and vote rules,
// pre-vote and check-quorum, log matching and truncation, fast backtracking,
// the commit rule for entries of earlier terms (Figure 8), flow control,
// compaction with snapshot hand-off and the ready/advance contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <caf/sum_type.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/raft/core.hpp"
#include "proto/codec.hpp"
#include "proto/errors.hpp"

namespace aisched::raft {
namespace {

proto::command cmd(std::string key) {
  proto::cancel x;
  x.tenant = "test";
  x.instance_id = std::move(key);
  return proto::command{std::move(x)};
}

std::string key_of(const proto::command& c) {
  if (caf::holds_alternative<proto::noop>(c)) return "noop";
  if (auto* x = caf::get_if<proto::cancel>(&c)) return x->instance_id;
  return "?";
}

proto::log_entry entry(uint64_t index, uint64_t term, std::string key = "") {
  return proto::log_entry{index, term, key.empty() ? proto::command{proto::noop{}} : cmd(key)};
}

std::vector<std::string> ids(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 1; i <= n; ++i) out.push_back("n" + std::to_string(i));
  return out;
}

// -- a hand-driven group -----------------------------------------------------

/// N cores, a FIFO network the test controls, and per-member durable state
/// filled only from readies (so restart() recovers exactly what was persisted).
class group {
 public:
  struct member {
    std::unique_ptr<core> c;
    hard_state hard;
    snapshot_meta snap;
    std::vector<proto::log_entry> log;
    uint64_t applied = 0;
    std::vector<proto::log_entry> applied_entries;
    std::vector<ready> readies;  // every ready taken, for inspection
  };

  explicit group(size_t n, std::function<void(config&)> tweak = nullptr)
      : tweak_(std::move(tweak)) {
    for (auto& id : ids(n)) {
      members_[id].c = std::make_unique<core>(make_config(id, n), seed_for(id));
    }
    n_ = n;
  }

  /// Builds a member from explicit durable state (for log-shape scenarios).
  void restore(const std::string& id, hard_state hard, std::vector<proto::log_entry> log) {
    auto& m = members_.at(id);
    m.hard = hard;
    m.log = log;
    m.snap = {};
    m.applied = 0;
    m.c = std::make_unique<core>(make_config(id, n_), hard, snapshot_meta{}, std::move(log), 0,
                                 seed_for(id));
  }

  core& operator[](const std::string& id) { return *members_.at(id).c; }
  member& at(const std::string& id) { return members_.at(id); }

  /// Drains one member's ready: persist, queue messages, apply, advance.
  void process(const std::string& id) {
    auto& m = members_.at(id);
    if (!m.c) return;
    while (m.c->has_ready()) {
      auto rd = m.c->take_ready();
      if (rd.snapshot) {
        m.log.clear();
        m.snap = *rd.snapshot;
        m.applied = rd.snapshot->index;
      }
      if (rd.truncate_from) {
        auto from = *rd.truncate_from;
        if (from <= m.snap.index + m.log.size()) m.log.resize(from - m.snap.index - 1);
      }
      for (auto& e : rd.entries) {
        EXPECT_EQ(e.index, m.snap.index + m.log.size() + 1) << id << ": durable log gap";
        m.log.push_back(e);
      }
      if (rd.hard) m.hard = *rd.hard;
      for (auto& msg : rd.messages) {
        if (!cut_.count({msg.from, msg.to}) && !(drop_if_ && drop_if_(msg))) net_.push_back(msg);
      }
      for (auto& e : rd.committed) {
        EXPECT_EQ(e.index, m.applied + 1) << id << ": apply gap";
        m.applied = e.index;
        m.applied_entries.push_back(e);
      }
      m.c->advance(rd);
      m.readies.push_back(std::move(rd));
    }
  }

  void process_all() {
    for (auto& [id, m] : members_) process(id);
  }

  /// Delivers queued messages (FIFO) until the network is quiet.
  void deliver_all(size_t limit = 100'000) {
    process_all();
    for (size_t i = 0; !net_.empty() && i < limit; ++i) {
      auto msg = std::move(net_.front());
      net_.pop_front();
      deliver(msg);
    }
    ASSERT_TRUE(net_.empty()) << "the network did not quiesce";
  }

  /// Delivers one message now (if the destination is up and not cut off).
  void deliver(const message& msg) {
    auto& dst = members_.at(msg.to);
    if (!dst.c || cut_.count({msg.from, msg.to})) return;
    dst.c->step(msg);
    dst.c->check_invariants();
    process(msg.to);
  }

  /// Removes and returns the queued messages matching `pred`.
  std::vector<message> take(std::function<bool(const message&)> pred) {
    process_all();
    std::vector<message> out;
    std::deque<message> rest;
    for (auto& m : net_) {
      if (pred(m))
        out.push_back(m);
      else
        rest.push_back(m);
    }
    net_ = std::move(rest);
    return out;
  }

  void drop_all() { net_.clear(); }

  void tick(const std::string& id, int n = 1) {
    for (int i = 0; i < n; ++i) {
      if (members_.at(id).c) members_.at(id).c->tick();
      process(id);
    }
  }

  /// Ticks every member once and delivers everything, `n` times.
  void tick_all(int n = 1) {
    for (int i = 0; i < n; ++i) {
      for (auto& [id, m] : members_)
        if (m.c) m.c->tick();
      deliver_all();
    }
  }

  void elect(const std::string& id) {
    members_.at(id).c->campaign();
    deliver_all();
    ASSERT_EQ(members_.at(id).c->current_role(), role::leader) << id << " did not win";
  }

  void isolate(const std::string& id) {
    for (auto& [other, m] : members_) {
      cut_.insert({id, other});
      cut_.insert({other, id});
    }
  }

  void cut(const std::string& a, const std::string& b) {
    cut_.insert({a, b});
    cut_.insert({b, a});
  }

  void cut_one_way(const std::string& from, const std::string& to) { cut_.insert({from, to}); }

  void heal() { cut_.clear(); }

  void crash(const std::string& id) { members_.at(id).c.reset(); }

  void restart(const std::string& id) {
    auto& m = members_.at(id);
    m.c = std::make_unique<core>(make_config(id, n_), m.hard, m.snap, m.log, m.applied,
                                 seed_for(id) + 1000);
  }

  void set_drop_if(std::function<bool(const message&)> f) { drop_if_ = std::move(f); }

  std::deque<message>& net() { return net_; }

 private:
  config make_config(const std::string& id, size_t n) const {
    config cfg;
    cfg.id = id;
    cfg.peers = ids(n);
    if (tweak_) tweak_(cfg);
    return cfg;
  }

  static uint64_t seed_for(const std::string& id) { return std::hash<std::string>{}(id) ^ 0x5eed; }

  size_t n_ = 0;
  std::function<void(config&)> tweak_;
  std::map<std::string, member> members_;
  std::deque<message> net_;
  std::set<std::pair<std::string, std::string>> cut_;
  std::function<bool(const message&)> drop_if_;
};

template <class T>
std::vector<T> payloads_of(const std::vector<message>& msgs) {
  std::vector<T> out;
  for (auto& m : msgs)
    if (auto* x = caf::get_if<T>(&m.body)) out.push_back(*x);
  return out;
}

/// Steps `m` into a lone core and returns what it answered.
std::vector<message> answer(core& c, payload body, const std::string& from) {
  c.step(message{c.id(), from, std::move(body)});
  auto rd = c.take_ready();
  c.advance(rd);
  return rd.messages;
}

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
