// Raft actors on CAF's test coordinator (virtual time, no threads): groups of
// three and five real raft actors over RocksDB in temporary directories
// (tests/actors/raft/raft_group.*). A leader is elected after the election
// timeout; proposals commit and are applied on every member; killing the
// leader elects another within the timeout bound; a restarted member catches
// up (from the log, or from a snapshot when the log was compacted meanwhile);
// a deposed leader's proposal and a decision of an older term are rejected;
// messages delayed and reordered on every link still commit everywhere; a
// member whose disk fails ends, and catches up once restarted.
#define CAF_GTEST_DSL_IMPL
#include "raft_group.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "proto/errors.hpp"
#include "storage/format_version.hpp"
#include "storage/membership_store.hpp"
#include "storage/state_machine.hpp"

namespace aisched::raft {
namespace {

using namespace std::chrono_literals;
using test::raft_group;

// raft_options' defaults: ticks of 50 ms, election timeout 10-20 ticks.
constexpr auto election_timeout_max = 1000ms;
// After a leader is lost: a follower's timeout runs out (at most the maximum
// above, counted from the last heartbeat), then a pre-vote and a vote round
// (messages only, no virtual time); the failover target is 1.5 s.
constexpr auto failover_bound = 1500ms;

class raft_actor_test : public ::testing::TestWithParam<size_t> {};

/// Waits for an agreed leader; its index, or -1 (and a failure).
int elect(raft_group& g, std::chrono::milliseconds limit) {
  int leader = -1;
  auto took = g.run_until([&] { return (leader = g.agreed_leader()) >= 0; }, limit);
  EXPECT_GE(took.count(), 0) << "no agreed leader within " << limit.count() << " ms";
  return leader;
}

/// True once every running member applied what member `i` applied.
bool caught_up_with(raft_group& g, size_t i) {
  auto applied = g.at(i).sm->applied_index();
  for (size_t j = 0; j < g.size(); ++j)
    if (g.running(j) && g.at(j).sm->applied_index() != applied) return false;
  return true;
}

size_t other_than(raft_group& g, int leader, size_t skip = ~size_t{0}) {
  for (size_t i = 0; i < g.size(); ++i)
    if (static_cast<int>(i) != leader && i != skip && g.running(i)) return i;
  return 0;
}

TEST_P(raft_actor_test, elects_one_leader_after_the_election_timeout) {
  raft_group g(GetParam());
  // Nobody leads before the shortest election timeout ran out.
  g.run_for(450ms);
  EXPECT_EQ(g.agreed_leader(), -1);
  auto took = g.run_until([&] { return g.agreed_leader() >= 0; }, 2 * election_timeout_max);
  ASSERT_GE(took.count(), 0) << "no leader";
  auto leader = g.agreed_leader();
  auto term = g.state(leader).member->term();
  // Stays leader with every member connected (heartbeats hold the followers).
  g.run_for(3s);
  EXPECT_EQ(g.agreed_leader(), leader);
  EXPECT_EQ(g.state(leader).member->term(), term);
  for (size_t i = 0; i < g.size(); ++i)
    for (auto& [id, p] : g.state(i).peers) EXPECT_TRUE(p.handle) << g.at(i).id << " -> " << id;
}

TEST_P(raft_actor_test, proposals_commit_and_apply_on_every_member) {
  raft_group g(GetParam());
  auto leader = elect(g, 3s);
  ASSERT_GE(leader, 0);
  std::vector<uint64_t> ids;
  for (int k = 0; k < 20; ++k) ids.push_back(g.create_task(leader, "t" + std::to_string(k)));
  // Through a follower too: it forwards to the leader.
  ids.push_back(g.create_task(other_than(g, leader), "via-follower"));
  ASSERT_EQ(g.run_until([&] { return caught_up_with(g, leader); }, 1s).count() >= 0, true);
  auto commit = g.state(leader).member->commit_index();
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_EQ(g.state(i).member->commit_index(), commit) << g.at(i).id;
    EXPECT_EQ(g.at(i).sm->applied_index(), commit) << g.at(i).id;
    for (auto id : ids) EXPECT_TRUE(g.at(i).sm->get_task("default", id)) << g.at(i).id << " lacks " << id;
  }
}

// Issue 41: the membership a group bootstraps with is replicated configuration,
// the first leader's first entry, in every member's log and applied state (a
// restart reads it from there, not from its flags).
TEST_P(raft_actor_test, the_first_leader_replicates_the_bootstrap_membership) {
  raft_group g(GetParam());
  auto leader = elect(g, 3s);
  ASSERT_GE(leader, 0);
  g.create_task(leader, "after");
  ASSERT_GE(g.run_until([&] { return caught_up_with(g, leader); }, 1s).count(), 0);
  for (size_t i = 0; i < g.size(); ++i) {
    auto& st = g.state(i);
    ASSERT_GE(st.log->last_index(), 1u);
    auto first = st.log->read(1, 1);
    ASSERT_TRUE(first && first->size() == 1) << g.at(i).id;
    auto m = proto::command_as<proto::set_membership>(first->front().cmd);
    ASSERT_TRUE(m.has_value()) << g.at(i).id << ": the first entry is not the membership";
    EXPECT_EQ(m->members.size(), g.size()) << g.at(i).id;
    auto applied = storage::read_membership(*g.at(i).db);
    ASSERT_TRUE(applied && *applied) << g.at(i).id << ": no membership applied";
    EXPECT_EQ(**applied, m->members) << g.at(i).id;
    EXPECT_EQ(st.member->membership(), m->members) << g.at(i).id;
  }
  // A later leader's first entry is a no-op again.
  g.stop(static_cast<size_t>(leader));
  if (g.size() > 1) {
    auto next = elect(g, 5s);
    ASSERT_GE(next, 0);
    auto& st = g.state(static_cast<size_t>(next));
    auto last = st.log->read(st.log->last_index(), st.log->last_index());
    ASSERT_TRUE(last && last->size() == 1);
    EXPECT_TRUE(proto::holds<proto::noop>(last->front().cmd));
  }
}

TEST_P(raft_actor_test, killing_the_leader_elects_another_within_the_bound) {
  raft_group g(GetParam());
  auto old = elect(g, 3s);
  ASSERT_GE(old, 0);
  auto before = g.create_task(old, "before");
  g.run_for(200ms);  // the commit index reaches the followers with the next heartbeat
  auto old_term = g.state(old).member->term();
  g.stop(old);
  int leader = -1;
  auto took = g.run_until([&] { return (leader = g.agreed_leader()) >= 0; }, 5s);
  ASSERT_GE(took.count(), 0) << "no new leader";
  EXPECT_LE(took, failover_bound) << "failover took " << took.count() << " ms of virtual time";
  RecordProperty("failover_virtual_ms", std::to_string(took.count()));
  EXPECT_NE(leader, old);
  EXPECT_GT(g.state(leader).member->term(), old_term);
  // The committed task survived, and the new leader commits.
  EXPECT_TRUE(g.at(leader).sm->get_task("default", before));
  EXPECT_NE(g.create_task(leader, "after"), 0u);
}

/// Stops a follower of `leader`, commits `n` tasks without it, restarts it and
/// waits until it applied them all; the follower's index, or -1 (and a failure).
int miss_and_catch_up(raft_group& g, int leader, int n, bool expect_compaction) {
  auto down = other_than(g, leader);
  g.stop(down);
  std::vector<uint64_t> ids;
  for (int k = 0; k < n; ++k) ids.push_back(g.create_task(leader, "while-down"));
  // With compaction the leader's log no longer has what the follower needs.
  auto compacted = g.state(leader).member->snapshot().index;
  EXPECT_EQ(compacted > 0, expect_compaction) << "log compacted up to " << compacted;
  g.start(down);
  auto took = g.run_until([&] { return caught_up_with(g, leader); }, 3s);
  EXPECT_GE(took.count(), 0) << g.at(down).id << " applied " << g.at(down).sm->applied_index()
                             << " of " << g.at(leader).sm->applied_index();
  if (took.count() < 0) return -1;
  for (auto id : ids) EXPECT_TRUE(g.at(down).sm->get_task("default", id));
  return static_cast<int>(down);
}

TEST_P(raft_actor_test, a_restarted_member_catches_up_from_the_log) {
  raft_group g(GetParam());
  auto leader = elect(g, 3s);
  ASSERT_GE(leader, 0);
  ASSERT_GE(miss_and_catch_up(g, leader, 30, false), 0);
  EXPECT_EQ(g.agreed_leader(), leader);  // a returning follower does not disrupt (pre-vote)
}

TEST_P(raft_actor_test, a_restarted_member_catches_up_from_a_snapshot) {
  raft_group g(GetParam(), /*snapshot_every=*/20);
  auto leader = elect(g, 3s);
  ASSERT_GE(leader, 0);
  auto down = miss_and_catch_up(g, leader, 60, true);
  ASSERT_GE(down, 0);
  // And it keeps replicating after the snapshot.
  auto last = g.create_task(leader, "after");
  ASSERT_GE(g.run_until([&] { return caught_up_with(g, leader); }, 1s).count(), 0);
  EXPECT_TRUE(g.at(down).sm->get_task("default", last));
}

TEST_P(raft_actor_test, a_deposed_leaders_proposal_is_rejected) {
  raft_group g(GetParam());
  auto old = elect(g, 3s);
  ASSERT_GE(old, 0);
  g.run_for(200ms);
  auto old_term = g.state(old).member->term();
  // The leader takes a proposal, then is paused before it can replicate it
  // (like SIGSTOP): the others elect a new leader meanwhile.
  proto::task t;
  t.kind = proto::task_kind::noop;
  t.name = "from-the-deposed";
  auto answer = g.self->request(caf::actor_cast<proto::raft_actor>(g.at(old).raft), caf::infinite,
                                proto::propose_atom::value, proto::command{proto::create_task{t, ""}});
  g.freeze(old);
  int leader = -1;
  ASSERT_GE(g.run_until([&] { return (leader = g.agreed_leader()) >= 0; }, 5s).count(), 0);
  ASSERT_NE(leader, old);
  auto committed = g.create_task(leader, "from-the-new-leader");
  // The old leader wakes up, still leading in its term: it appends the proposal
  // to its log, hears of the newer term, steps down, and the entry is replaced.
  g.thaw(old);
  ASSERT_GE(g.run_until([&] { return g.agreed_leader() == leader && caught_up_with(g, leader); },
                        3s).count(), 0);
  ASSERT_FALSE(g.self->mailbox().empty()) << "the deposed leader never answered";
  bool rejected = false;
  answer.receive([&](proto::applied&) { ADD_FAILURE() << "the deposed leader's proposal committed"; },
                 [&](caf::error& e) { rejected = view(e).code == errc::not_leader; });
  EXPECT_TRUE(rejected);
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_TRUE(g.at(i).sm->get_task("default", committed)) << g.at(i).id;
    auto page = g.at(i).sm->list_tasks(proto::task_query{});
    ASSERT_TRUE(page);
    for (auto& x : page->items) EXPECT_NE(x.name, "from-the-deposed") << g.at(i).id;
  }
  // Fencing: a decision of the old term is refused by the old leader (now a
  // follower, decisions are never forwarded) and, proposed to the new leader,
  // rejected by every state machine when it commits.
  auto stale = g.propose(old, proto::fire{old_term, 0, {}});
  ASSERT_FALSE(stale);
  EXPECT_EQ(view(stale.error()).code, errc::not_leader);
  stale = g.propose(leader, proto::fire{old_term, 0, {}});
  ASSERT_FALSE(stale);
  EXPECT_EQ(view(stale.error()).code, errc::not_leader);
}

// A link seen to go on one side only: n2 gets a down message for n1 (its
// dialer) while n1 keeps its handle to n2, as when CAF carries n1's messages
// over a newer connection between the two nodes. n1 has no reason to say hello
// again; n2 must answer it anyway. With the third member frozen the two are a
// majority only if they hear each other both ways.
TEST(raft_actor_links, a_link_lost_on_the_waiting_side_only_comes_back_from_the_dialers_messages) {
  raft_group g(3);
  ASSERT_GE(elect(g, 3s), 0);
  auto n1 = caf::actor_cast<caf::actor>(g.at(0).raft);
  caf::anon_send(caf::actor_cast<caf::actor>(g.at(1).raft),
                 caf::down_msg{n1.address(), caf::exit_reason::remote_link_unreachable});
  g.sched.run();
  ASSERT_FALSE(g.state(1).peers.at("n1").handle) << "n2 did not drop its handle for n1";
  ASSERT_TRUE(g.state(0).peers.at("n2").handle);
  g.freeze(2);
  int leader = -1;
  ASSERT_GE(g.run_until([&] { return (leader = g.agreed_leader()) >= 0; }, 10s).count(), 0)
      << "n1 and n2 elect nobody: n2 never answers n1";
  EXPECT_TRUE(g.state(1).peers.at("n1").handle);
  auto id = g.create_task(static_cast<size_t>(leader), "after-one-sided-loss");
  ASSERT_NE(id, 0u);
  ASSERT_GE(g.run_until([&] { return g.at(0).sm->get_task("default", id) &&
                                     g.at(1).sm->get_task("default", id); }, 2s).count(), 0);
}

// raft_group::delay holds every message between members back by a delay of
// its own (10-400 ms here, on every link both ways), so they arrive late and
// out of order: appends after later appends, acks after later acks. The
// group still commits what is proposed through any member (a follower
// forwards), and once healed every member has applied it. (Heartbeats go
// every tick: no gap between arrivals reaches the shortest election
// timeout, so the leader stays.)
TEST(raft_actor_links, messages_late_and_reordered_on_every_link_still_commit_everywhere) {
  raft_group g(3);
  ASSERT_GE(elect(g, 3s), 0);
  for (size_t from = 0; from < g.size(); ++from)
    for (size_t to = 0; to < g.size(); ++to)
      if (from != to) g.delay(from, to, 10ms, 400ms);
  ASSERT_TRUE(g.is_delayed(2, 0));
  // From client actors while virtual time runs: the answers come late.
  constexpr size_t asked = 9;
  auto ids = std::make_shared<std::vector<uint64_t>>();
  auto failures = std::make_shared<std::vector<std::string>>();
  for (size_t k = 0; k < asked; ++k) {
    proto::task t;
    t.kind = proto::task_kind::noop;
    t.name = "late-" + std::to_string(k);
    auto raft = caf::actor_cast<proto::raft_actor>(g.at(k % g.size()).raft);
    g.sys.spawn([=](caf::event_based_actor* self) {
      self->request(raft, 20s, proto::propose_atom::value, proto::command{proto::create_task{t, ""}})
          .then(
              [=](proto::applied& a) {
                if (a.tasks.size() == 1) ids->push_back(a.tasks[0].id);
                else failures->push_back("no task in the answer");
              },
              [=](caf::error& e) { failures->push_back(caf::to_string(e)); });
    });
  }
  auto all_answered = [&] { return ids->size() + failures->size() == asked; };
  ASSERT_GE(g.run_until(all_answered, 30s).count(), 0) << "proposals unanswered";
  EXPECT_TRUE(failures->empty()) << failures->size() << " failed, the first: " << failures->front();
  g.heal_all();
  EXPECT_FALSE(g.is_delayed(2, 0));
  auto leader = elect(g, 3s);
  ASSERT_GE(leader, 0);
  ASSERT_GE(g.run_until([&] { return caught_up_with(g, static_cast<size_t>(leader)); }, 3s).count(),
            0);
  for (size_t i = 0; i < g.size(); ++i)
    for (auto id : *ids)
      EXPECT_TRUE(g.at(i).sm->get_task("default", id)) << g.at(i).id << " lacks " << id;
}

// A member's disk that fails every write (raft_group's disk_fault hook, EIO):
// its raft actor fences itself at the first write that fails and, RocksDB
// marking an EIO on its log fatal, ends at its first probe of the disk
// (errc::internal: only a reopen mends it), as a node's does before its node
// exits. The others go on; restarted with a working disk, it catches up.
// (scheduler_sim's disk_fault models a node on exactly this.)
TEST(raft_actor_disk, a_member_whose_disk_fails_ends_and_catches_up_once_restarted) {
  auto disks = std::make_shared<std::vector<std::atomic<storage::fault_kind>>>(3);
  raft_group g(3, 10'000, 1000, [disks](size_t i) { return disks->at(i).load(); });
  auto leader = elect(g, 3s);
  ASSERT_GE(leader, 0);
  auto victim = other_than(g, leader);
  disks->at(victim).store(storage::fault_kind::io_error);
  ASSERT_NE(g.create_task(static_cast<size_t>(leader), "while-it-fails"), 0u);
  ASSERT_GE(g.run_until([&] { return g.ended(victim).has_value(); }, 3s).count(), 0)
      << "the member went on without its disk";
  EXPECT_FALSE(g.running(victim));
  EXPECT_EQ(view(*g.ended(victim)).code, errc::internal) << g.sys.render(*g.ended(victim));
  auto id = g.create_task(static_cast<size_t>(leader), "without-it");
  ASSERT_NE(id, 0u);
  disks->at(victim).store(storage::fault_kind::none);
  g.stop(victim);
  g.start(victim);
  ASSERT_GE(g.run_until([&] { return caught_up_with(g, static_cast<size_t>(leader)); }, 3s).count(),
            0);
  EXPECT_TRUE(g.at(victim).sm->get_task("default", id));
}

// Members exchange log entries and snapshots in their data format's encoding:
// a member of another format (another build) says so in its hello and is
// refused, naming both formats, before anything it sends is read.
TEST(raft_actor_links, a_member_that_speaks_another_data_format_is_refused) {
  raft_group g(3);
  ASSERT_GE(elect(g, 3s), 0);
  auto n2 = caf::actor_cast<caf::actor>(g.at(1).raft);
  auto hello = [&](uint32_t format) {
    caf::expected<std::string> out{caf::make_error(caf::sec::runtime_error, "no answer")};
    // "n0" sorts before every member: it dials them, as a new member would.
    auto h = g.self->request(n2, caf::infinite, hello_atom::value, std::string("n0"),
                             g.state(1).opts.cluster_id, format, caf::actor_cast<caf::actor>(g.self),
                             caf::actor{});
    g.sched.run();
    if (g.self->mailbox().empty()) return out;
    h.receive([&](std::string& cluster) { out = std::move(cluster); },
              [&](caf::error& e) { out = std::move(e); });
    return out;
  };
  auto refused = hello(storage::current_format + 1);
  ASSERT_FALSE(refused) << "a member of a newer format was accepted";
  EXPECT_EQ(view(refused.error()).code, errc::forbidden);
  auto why = view(refused.error()).message;
  EXPECT_NE(why.find("format " + std::to_string(storage::current_format + 1)), std::string::npos)
      << why;
  EXPECT_NE(why.find("format " + std::to_string(storage::current_format)), std::string::npos)
      << why;
  auto p = g.state(1).peers.find("n0");
  EXPECT_TRUE(p == g.state(1).peers.end() || !p->second.handle)
      << "n2 holds a link to a member it refused";
  // The same member speaking this build's format links.
  auto accepted = hello(storage::current_format);
  ASSERT_TRUE(accepted) << view(accepted.error()).message;
  EXPECT_EQ(*accepted, g.state(1).opts.cluster_id);
}

// A snapshot's records are in its leader's data format: a chunk of another
// format is refused before any of it is staged, naming both formats.
TEST(raft_actor_links, a_snapshot_of_another_data_format_is_refused) {
  raft_group g(3);
  ASSERT_GE(elect(g, 3s), 0);
  auto n2 = caf::actor_cast<caf::actor>(g.at(1).raft);
  auto send = [&](uint32_t format) {
    caf::expected<uint64_t> out{caf::make_error(caf::sec::runtime_error, "no answer")};
    snapshot_chunk c;
    c.to = g.state(1).opts.node_id;
    c.from = "n9";  // a leader n2 does not know yet: its chunks are read
    c.term = 1'000;
    c.index = 1'000'000;
    c.last_term = 1'000;
    c.format = format;
    c.data = "not records";
    auto h = g.self->request(n2, caf::infinite, snap_chunk_atom::value, std::move(c));
    g.sched.run();
    if (g.self->mailbox().empty()) return out;
    h.receive([&](uint64_t next) { out = next; }, [&](caf::error& e) { out = std::move(e); });
    return out;
  };
  auto applied = g.state(1).sm->applied_index();
  auto refused = send(storage::current_format + 1);
  ASSERT_FALSE(refused) << "a snapshot of a newer format was read";
  EXPECT_EQ(view(refused.error()).code, errc::forbidden);
  auto why = view(refused.error()).message;
  EXPECT_NE(why.find("format " + std::to_string(storage::current_format + 1)), std::string::npos)
      << why;
  EXPECT_NE(why.find("format " + std::to_string(storage::current_format)), std::string::npos)
      << why;
  EXPECT_FALSE(g.state(1).receiving) << "a chunk of another format was staged";
  EXPECT_EQ(g.state(1).sm->applied_index(), applied);
  // This build's format is read: its first chunk starts a transfer.
  auto read = send(storage::current_format);
  if (read) EXPECT_TRUE(g.state(1).receiving.has_value() || *read == snapshot_complete);
  else EXPECT_NE(view(read.error()).code, errc::forbidden) << view(read.error()).message;
}

INSTANTIATE_TEST_SUITE_P(members, raft_actor_test, ::testing::Values(3, 5),
                         [](const auto& info) { return std::to_string(info.param) + "_members"; });

}  // namespace
}  // namespace aisched::raft
