// A data directory's membership wins over the --peers it is restarted with
// (issue 41 item 1): a member of a group of three restarted with --peers naming
// only itself exits 2 naming both memberships instead of electing itself beside
// the group, and restarts with the original --peers; a single node without
// --peers restarts as before and refuses a --peers naming a group; after a
// member was added with the membership API the original --peers still start.
// A data directory carries its cluster id: members of other clusters are
// refused when they link, and a member that joins learns the id. A survivor
// made a group of one with `aisched recover --force-new-cluster` takes its lost
// members back wiped with --join, whatever their ids.
// Nodes are started by the harness in tests/support/ on temporary dirs and free
// ports; all waiting is polling with deadlines.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/node_process.hpp"
#include "support/raft_group_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
using namespace std::chrono_literals;

namespace {

/// Starts `aisched` with `args` on free HTTP port and waits for it to exit
/// (a node that starts instead is killed at the deadline, failing the test).
command_result start_expecting_exit(std::vector<std::string> args) {
  args.insert(args.begin(), AISCHED_BINARY);
  args.insert(args.end(), {"--http-addr", "127.0.0.1:0"});
  return run_command(args, 20s);
}

/// Whether the node at `port` serves task `id`.
bool has_task(uint16_t port, int64_t id) {
  return http_call(port, "GET", "/api/v1/tasks/" + std::to_string(id), "", 2s).status == 200;
}

}  // namespace

TEST(membership_guard, a_member_restarted_with_peers_naming_only_itself_is_refused) {
  temp_dir dir;
  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  auto id = create_task(g.port(leader), R"({"name":"before","kind":"noop"})");
  ASSERT_NE(id, 0) << g.dump();
  for (size_t i = 0; i < 3; ++i)
    ASSERT_TRUE(eventually([&] { return has_task(g.port(i), id); }, 10s)) << g.dump();
  for (size_t i = 0; i < 3; ++i) g.kill(i);

  // The operator "recovering" n2 alone: refused, naming the flag's members and
  // the stored ones, before it could elect itself.
  auto alone = start_expecting_exit({"--node-id", g.id(1), "--peers",
                                     g.id(1) + "=" + g.cluster_addr(1), "--data-dir",
                                     g.data_dir(1), "--cluster-addr", g.cluster_addr(1)});
  EXPECT_EQ(alone.exit_code, 2) << alone.err;
  EXPECT_NE(alone.err.find("refusing to start"), std::string::npos) << alone.err;
  EXPECT_NE(alone.err.find("{n2}"), std::string::npos) << alone.err;
  EXPECT_NE(alone.err.find("{n1,n2,n3}"), std::string::npos) << alone.err;

  // With the original --peers the group comes back whole, the task in it, and
  // the next create gets a new id.
  for (size_t i = 0; i < 3; ++i) g.start(i);
  ASSERT_TRUE(g.all_running()) << g.dump();
  leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(eventually([&] { return has_task(g.port(i), id); }, 10s)) << g.dump();
  auto next = create_task(g.port(leader), R"({"name":"after","kind":"noop"})");
  EXPECT_GT(next, id) << g.dump();
}

TEST(membership_guard, a_single_node_without_peers_restarts_and_refuses_a_group_flag) {
  temp_dir dir;
  auto data = dir.path() + "/data";
  int64_t id = 0;
  {
    node_process node(data);
    ASSERT_TRUE(node.running());
    id = create_task(node.http_port(), R"({"name":"alone","kind":"noop"})");
    ASSERT_NE(id, 0) << tail(node.log());
    node.stop(SIGKILL);
  }
  // A flag edit does not turn its data into a member of a group.
  auto grown = start_expecting_exit(
      {"--peers",
       "n1=127.0.0.1:" + std::to_string(free_port()) + ",n2=127.0.0.1:" +
           std::to_string(free_port()),
       "--data-dir", data});
  EXPECT_EQ(grown.exit_code, 2) << grown.err;
  EXPECT_NE(grown.err.find("{n1,n2}"), std::string::npos) << grown.err;
  EXPECT_NE(grown.err.find("{n1}"), std::string::npos) << grown.err;

  node_process again(data);
  ASSERT_TRUE(again.running()) << again.log();
  EXPECT_TRUE(eventually([&] { return has_task(again.http_port(), id); }, 10s))
      << tail(again.log());
  EXPECT_GT(create_task(again.http_port(), R"({"name":"again","kind":"noop"})"), id);
}

TEST(membership_guard, the_original_peers_still_start_after_a_member_was_added) {
  temp_dir dir;
  raft_group g(dir.path(), 3, {}, /*spares=*/1);
  ASSERT_TRUE(g.running(0) && g.running(1) && g.running(2)) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  auto id = create_task(g.port(leader), R"({"name":"before","kind":"noop"})");
  ASSERT_NE(id, 0) << g.dump();
  g.start_joiner(3);
  ASSERT_TRUE(g.running(3)) << g.dump();
  auto body = R"({"id":"n4","cluster_addr":")" + g.cluster_addr(3) +
              R"(","http_addr":"127.0.0.1:)" + std::to_string(g.port(3)) + R"("})";
  auto added = http_call(g.port(leader), "POST", "/api/v1/cluster/members", body, 15s);
  ASSERT_EQ(added.status, 201u) << added.body << "\n" << g.dump();
  ASSERT_TRUE(eventually([&] { return has_task(g.port(3), id); }, 20s)) << g.dump();

  // Every member comes back: n1..n3 with the --peers they bootstrapped with, n4
  // with --join; together they elect one leader.
  for (size_t i = 0; i < 4; ++i) g.kill(i);
  for (size_t i = 0; i < 4; ++i) g.start(i);
  ASSERT_TRUE(g.all_running()) << g.dump();
  ASSERT_NE(g.await_leader({0, 1, 2, 3}), none) << g.dump();
  for (size_t i = 0; i < 4; ++i)
    EXPECT_TRUE(eventually([&] { return has_task(g.port(i), id); }, 10s)) << g.dump();
}

namespace {

/// The cluster id member `port` reports in GET /api/v1/cluster ("" if none).
std::string cluster_id_at(uint16_t port) {
  auto r = http_call(port, "GET", "/api/v1/cluster", "", 2s);
  if (r.status != 200) return "";
  auto v = boost::json::parse(r.body);
  auto* id = v.as_object().if_contains("cluster_id");
  return id && id->is_string() ? std::string(id->as_string()) : "";
}

/// What member `port` reports about peer `peer`: its "refused" reason ("" if none).
std::string refusal_at(uint16_t port, const std::string& peer) {
  auto r = http_call(port, "GET", "/api/v1/cluster", "", 2s);
  if (r.status != 200) return "";
  auto v = boost::json::parse(r.body);  // kept alive: the loop refers into it
  for (auto& m : v.as_object().at("members").as_array()) {
    auto& o = m.as_object();
    if (o.at("id").as_string() != peer) continue;
    if (auto* why = o.if_contains("refused"); why && why->is_string())
      return std::string(why->as_string());
  }
  return "";
}

}  // namespace

// Issue 41 item 1: a data directory carries its cluster id. The data of a
// member of another group with the same member ids (a copied directory, an
// operator's mix-up between two environments, each with its --cluster-token)
// is refused by the group: before cluster ids it linked, and its log (longer,
// of a higher term) could impose another cluster's tasks on this one, or the
// group's on it.
TEST(membership_guard, a_member_with_another_clusters_data_is_refused) {
  temp_dir dir_a, dir_b;
  raft_group a(dir_a.path(), 3);
  raft_group b(dir_b.path(), 3, {"--cluster-token", "staging"});
  ASSERT_TRUE(a.all_running() && b.all_running()) << a.dump() << b.dump();
  auto la = a.await_leader({0, 1, 2});
  auto lb = b.await_leader({0, 1, 2});
  ASSERT_NE(la, none) << a.dump();
  ASSERT_NE(lb, none) << b.dump();
  auto ours = create_task(a.port(la), R"({"name":"ours","kind":"noop"})");
  ASSERT_NE(ours, 0) << a.dump();
  int64_t theirs = 0;
  for (int i = 0; i < 5; ++i) {
    theirs = create_task(b.port(lb), R"({"name":"theirs","kind":"noop"})");
    ASSERT_NE(theirs, 0) << b.dump();
  }
  auto id_a = cluster_id_at(a.port(0));
  auto id_b = cluster_id_at(b.port(0));
  EXPECT_EQ(id_a.size(), 32u) << id_a;
  EXPECT_NE(id_a, id_b);
  for (size_t i = 1; i < 3; ++i) EXPECT_EQ(cluster_id_at(a.port(i)), id_a);
  ASSERT_TRUE(eventually([&] { return has_task(b.port(2), theirs); }, 10s)) << b.dump();

  // n3 of group a comes back on the data of n3 of group b (same member ids).
  for (size_t i = 0; i < 3; ++i) b.kill(i);
  a.kill(2);
  namespace fs = std::filesystem;
  fs::remove_all(a.data_dir(2));
  fs::copy(b.data_dir(2), a.data_dir(2), fs::copy_options::recursive);
  fs::permissions(a.data_dir(2), fs::perms::owner_all, fs::perm_options::replace);
  a.start(2);
  ASSERT_TRUE(a.running(2)) << a.dump();
  EXPECT_EQ(cluster_id_at(a.port(2)), id_b) << a.dump();

  // The group refuses it and says why; it never gets the group's task.
  std::string why;
  EXPECT_TRUE(eventually(
      [&] {
        la = a.await_leader({0, 1}, 5s);
        return la != none && !(why = refusal_at(a.port(la), "n3")).empty();
      },
      20s))
      << a.dump();
  EXPECT_NE(why.find(id_b), std::string::npos) << why;
  EXPECT_NE(a.log(2).find("another cluster"), std::string::npos) << a.dump();
  std::this_thread::sleep_for(3s);  // time a linked member would need to catch up
  // Both clusters numbered their tasks from 1: what n3 serves under our id is
  // the other cluster's task, not ours.
  auto got = http_call(a.port(2), "GET", "/api/v1/tasks/" + std::to_string(ours), "", 2s);
  EXPECT_EQ(got.body.find("\"ours\""), std::string::npos)
      << "another cluster's member got our task\n" << a.dump();
  // The group goes on with its two members, its task intact.
  ASSERT_NE(la, none) << a.dump();
  EXPECT_TRUE(has_task(a.port(la), ours)) << a.dump();
  EXPECT_GT(create_task(a.port(la), R"({"name":"after","kind":"noop"})"), ours) << a.dump();
}

// The id is derived, not drawn: every member of a group that bootstraps with
// the same --peers derives the same one, a restart keeps it, and a member added
// with --join learns it from the group.
TEST(membership_guard, members_agree_on_the_cluster_id_and_a_joiner_learns_it) {
  temp_dir dir;
  raft_group g(dir.path(), 3, {}, /*spares=*/1);
  ASSERT_TRUE(g.running(0) && g.running(1) && g.running(2)) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  auto id = cluster_id_at(g.port(0));
  ASSERT_EQ(id.size(), 32u) << g.dump();
  for (size_t i = 1; i < 3; ++i) EXPECT_EQ(cluster_id_at(g.port(i)), id);
  g.start_joiner(3);
  ASSERT_TRUE(g.running(3)) << g.dump();
  auto body = R"({"id":"n4","cluster_addr":")" + g.cluster_addr(3) +
              R"(","http_addr":"127.0.0.1:)" + std::to_string(g.port(3)) + R"("})";
  auto added = http_call(g.port(leader), "POST", "/api/v1/cluster/members", body, 15s);
  ASSERT_EQ(added.status, 201u) << added.body << "\n" << g.dump();
  EXPECT_TRUE(eventually([&] { return cluster_id_at(g.port(3)) == id; }, 20s)) << g.dump();
  // Kept across a restart of the joiner (recorded in its data directory).
  g.kill(3);
  g.start(3);
  ASSERT_TRUE(g.running(3)) << g.dump();
  EXPECT_EQ(cluster_id_at(g.port(3)), id) << g.dump();
}

// Issue 41: recovery from a lost quorum is an explicit command, not a flag
// edit. Two of three members are gone; `aisched recover --force-new-cluster` makes the
// survivor a group of its own on its data, with a new cluster id: it leads at
// once with every committed task, and a member of the old group that comes
// back with its old data is refused by the survivor.
TEST(membership_guard, recover_quorum_makes_a_survivor_a_group_and_fences_the_old_one) {
  temp_dir dir;
  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  auto before = create_task(g.port(leader), R"({"name":"before","kind":"noop"})");
  ASSERT_NE(before, 0) << g.dump();
  for (size_t i = 0; i < 3; ++i)
    ASSERT_TRUE(eventually([&] { return has_task(g.port(i), before); }, 10s)) << g.dump();
  auto old_id = cluster_id_at(g.port(1));
  for (size_t i = 0; i < 3; ++i) g.kill(i);

  // Refused without --force-new-cluster (the one flag that says what it does), on an
  // empty directory, and with --join.
  auto unforced = start_expecting_exit({"recover", "--node-id", g.id(1), "--data-dir",
                                        g.data_dir(1), "--cluster-addr", g.cluster_addr(1)});
  EXPECT_EQ(unforced.exit_code, 2) << unforced.err;
  EXPECT_NE(unforced.err.find("--force-new-cluster is required"), std::string::npos)
      << unforced.err;
  temp_dir empty;
  auto none_there = start_expecting_exit({"recover", "--force-new-cluster", "--node-id", "n2", "--data-dir",
                                          empty.path() + "/data"});
  EXPECT_EQ(none_there.exit_code, 2) << none_there.err;
  EXPECT_NE((none_there.out + none_there.err).find("holds no data"), std::string::npos)
      << none_there.err;
  EXPECT_FALSE(std::filesystem::exists(empty.path() + "/data/CURRENT"));
  auto joined = start_expecting_exit({"recover", "--force-new-cluster", "--join", "--node-id", g.id(1),
                                      "--data-dir", g.data_dir(1)});
  EXPECT_EQ(joined.exit_code, 2) << joined.err;
  auto stranger = start_expecting_exit({"recover", "--force-new-cluster", "--node-id", "n9", "--data-dir",
                                        g.data_dir(1)});
  EXPECT_EQ(stranger.exit_code, 2) << stranger.err;
  EXPECT_NE((stranger.out + stranger.err).find("not a voter"), std::string::npos)
      << stranger.err;
  auto rec = start_expecting_exit({"recover", "--force-new-cluster", "--node-id", g.id(1), "--data-dir",
                                   g.data_dir(1), "--cluster-addr", g.cluster_addr(1)});
  ASSERT_EQ(rec.exit_code, 0) << rec.out << rec.err;
  EXPECT_NE(rec.out.find("{n1,n2,n3}"), std::string::npos) << rec.out;
  EXPECT_NE(rec.out.find(old_id), std::string::npos) << rec.out;

  // The survivor alone: no --peers. It leads, keeps the task, takes writes.
  node_process survivor(g.data_dir(1), {"--node-id", g.id(1)}, 20s, g.cluster_addr(1));
  ASSERT_TRUE(survivor.running()) << survivor.log();
  EXPECT_TRUE(eventually([&] { return view_of(survivor.http_port()).role == "leader"; }, 10s))
      << tail(survivor.log());
  EXPECT_TRUE(has_task(survivor.http_port(), before)) << tail(survivor.log());
  auto after = create_task(survivor.http_port(), R"({"name":"after","kind":"noop"})");
  EXPECT_GT(after, before) << tail(survivor.log());
  auto new_id = cluster_id_at(survivor.http_port());
  EXPECT_EQ(new_id.size(), 32u);
  EXPECT_NE(new_id, old_id);
  // Its restart keeps it a group of one (the stored membership says so).
  survivor.stop(SIGKILL);
  node_process again(g.data_dir(1), {"--node-id", g.id(1)}, 20s, g.cluster_addr(1));
  ASSERT_TRUE(again.running()) << again.log();
  EXPECT_TRUE(eventually([&] { return view_of(again.http_port()).role == "leader"; }, 10s))
      << tail(again.log());

  // n1 and n3 come back on their old data and flags (what the README says not
  // to do: wipe them and add them back with --join). n2 refuses to link with
  // them: they never get the write made after the recovery, nor n2 theirs.
  g.start(0);
  g.start(2);
  ASSERT_TRUE(g.running(0) && g.running(2)) << g.dump();
  std::this_thread::sleep_for(4s);
  for (size_t i : {size_t{0}, size_t{2}}) {
    EXPECT_FALSE(has_task(g.port(i), after)) << g.id(i) << " got the recovered group's write\n"
                                             << g.dump();
    EXPECT_EQ(cluster_id_at(g.port(i)), old_id);
  }
  EXPECT_EQ(view_of(again.http_port()).role, "leader") << tail(again.log());
  // Said when n1's hello arrives: nothing above waited for it.
  EXPECT_TRUE(eventually([&] { return again.log().find("another cluster") != std::string::npos; }))
      << tail(again.log());
}

// Recovery is for a quorum lost for good: while the other members answer at
// their cluster addresses (a partition seen from one side, members restarting),
// the recovered member would lead a second group beside theirs. Refused,
// naming them, and the data is untouched: the member rejoins as it was.
TEST(membership_guard, recover_quorum_is_refused_while_the_others_answer) {
  temp_dir dir;
  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  auto before = create_task(g.port(leader), R"({"name":"before","kind":"noop"})");
  ASSERT_NE(before, 0) << g.dump();
  ASSERT_TRUE(eventually([&] { return has_task(g.port(1), before); }, 10s)) << g.dump();
  auto old_id = cluster_id_at(g.port(1));
  g.kill(1);

  auto refused = start_expecting_exit({"recover", "--force-new-cluster", "--node-id", g.id(1), "--data-dir",
                                       g.data_dir(1), "--cluster-addr", g.cluster_addr(1)});
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  auto said = refused.out + refused.err;
  EXPECT_NE(said.find("answer at their cluster addresses"), std::string::npos) << said;
  EXPECT_NE(said.find(g.id(0) + " (" + g.cluster_addr(0) + ")"), std::string::npos) << said;
  EXPECT_NE(said.find(g.id(2) + " (" + g.cluster_addr(2) + ")"), std::string::npos) << said;
  EXPECT_NE(said.find("--i-know-the-quorum-is-gone"), std::string::npos) << said;

  // Nothing changed: n2 restarts as it was, in the old group, and follows it.
  g.start(1);
  ASSERT_TRUE(g.running(1)) << g.dump();
  auto again = g.await_leader({0, 1, 2});
  ASSERT_NE(again, none) << g.dump();
  auto later = create_task(g.port(again), R"({"name":"later","kind":"noop"})");
  ASSERT_NE(later, 0) << g.dump();
  EXPECT_TRUE(eventually([&] { return has_task(g.port(1), later); }, 10s)) << g.dump();
  EXPECT_EQ(cluster_id_at(g.port(1)), old_id);

  // An operator who knows better (the others are being wiped) may insist.
  g.kill(1);
  auto forced = start_expecting_exit({"recover", "--force-new-cluster", "--i-know-the-quorum-is-gone",
                                      "--node-id", g.id(1), "--data-dir", g.data_dir(1),
                                      "--cluster-addr", g.cluster_addr(1)});
  EXPECT_EQ(forced.exit_code, 0) << forced.out << forced.err;
  EXPECT_NE(forced.out.find(old_id), std::string::npos) << forced.out;
}

namespace {

/// Whether member `port`'s GET /api/v1/cluster lists `id` as a voter.
bool lists_voter(uint16_t port, const std::string& id) {
  auto r = http_call(port, "GET", "/api/v1/cluster", "", 2s);
  if (r.status != 200) return false;
  boost::system::error_code ec;
  auto v = boost::json::parse(r.body, ec);
  if (ec || !v.is_object()) return false;
  auto* members = v.as_object().if_contains("members");
  if (!members || !members->is_array()) return false;
  for (auto& m : members->as_array()) {
    auto& o = m.as_object();
    if (str(o, "id") != id) continue;
    auto* voter = o.if_contains("voter");
    return voter && voter->is_bool() && voter->get_bool();
  }
  return false;
}

}  // namespace

// Issue 46 item 5: after `aisched recover --force-new-cluster` the survivor "accepts
// new members" as the README says: each lost member, wiped, started with --join under
// its old id and added with the members API catches up (the task written before the
// loss, the ones written after the recovery), becomes a voter, and writes commit with
// it. n1 sorts before the survivor n2 (issue 41: a member that joins dials nobody, so
// the group must dial it whatever its id); n3 after. The two then go on without the
// survivor.
TEST(membership_guard, a_recovered_survivor_takes_its_lost_members_back_wiped) {
  temp_dir dir;
  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  auto before = create_task(g.port(leader), R"({"name":"before","kind":"noop"})");
  ASSERT_NE(before, 0) << g.dump();
  ASSERT_TRUE(eventually([&] { return has_task(g.port(1), before); }, 10s)) << g.dump();
  for (size_t i = 0; i < 3; ++i) g.kill(i);

  auto rec = start_expecting_exit({"recover", "--force-new-cluster", "--node-id", g.id(1), "--data-dir",
                                   g.data_dir(1), "--cluster-addr", g.cluster_addr(1)});
  ASSERT_EQ(rec.exit_code, 0) << rec.out << rec.err;
  node_process survivor(g.data_dir(1), {"--node-id", g.id(1)}, 20s, g.cluster_addr(1));
  ASSERT_TRUE(survivor.running()) << survivor.log();
  auto port = survivor.http_port();
  ASSERT_TRUE(eventually([&] { return view_of(port).role == "leader"; }, 10s))
      << tail(survivor.log());
  auto recovered = create_task(port, R"({"name":"recovered","kind":"noop"})");
  ASSERT_GT(recovered, before) << tail(survivor.log());
  auto cluster = cluster_id_at(port);
  ASSERT_EQ(cluster.size(), 32u) << tail(survivor.log());

  // The lost members come back under their old ids, wiped, with --join, and are
  // added: n1 sorts before the survivor n2 (the leader dials a member that joins,
  // whatever its id), n3 after it.
  int64_t last = recovered;
  for (size_t i : {size_t{0}, size_t{2}}) {
    SCOPED_TRACE(g.id(i));
    std::filesystem::remove_all(g.data_dir(i));
    g.start_joiner(i);
    ASSERT_TRUE(g.running(i)) << g.dump();
    auto body = R"({"id":")" + g.id(i) + R"(","cluster_addr":")" + g.cluster_addr(i) +
                R"(","http_addr":"127.0.0.1:)" + std::to_string(g.port(i)) + R"("})";
    auto added = http_call(port, "POST", "/api/v1/cluster/members", body, 15s);
    ASSERT_EQ(added.status, 201u) << added.body << "\n" << tail(survivor.log()) << g.dump();
    auto caught_up = [&] {
      return has_task(g.port(i), before) && has_task(g.port(i), last) &&
             lists_voter(port, g.id(i)) && lists_voter(g.port(i), g.id(i));
    };
    ASSERT_TRUE(eventually(caught_up, 30s))
        << g.id(i) << " did not catch up and become a voter\n" << tail(survivor.log()) << g.dump();
    EXPECT_EQ(cluster_id_at(g.port(i)), cluster) << g.dump();
    EXPECT_EQ(view_of(g.port(i)).leader, g.id(1)) << g.dump();
    // A write commits (it needs the new member: a quorum of two of two, then of
    // two of three) and reaches it.
    auto joined = create_task(port, R"({"name":"after-join","kind":"noop"})");
    ASSERT_GT(joined, last) << tail(survivor.log()) << g.dump();
    EXPECT_TRUE(eventually([&] { return has_task(g.port(i), joined); }, 10s)) << g.dump();
    last = joined;
  }
  EXPECT_EQ(view_of(port).role, "leader") << tail(survivor.log());
  // The group of three again: the two that came back hold every write, and they
  // elect one of them once the survivor is SIGKILLed.
  survivor.stop(SIGKILL);
  auto next = g.await_leader({0, 2}, 20s);
  ASSERT_NE(next, none) << g.dump();
  auto after = create_task(g.port(next), R"({"name":"after-survivor","kind":"noop"})");
  ASSERT_GT(after, last) << g.dump();
  for (size_t i : {size_t{0}, size_t{2}})
    EXPECT_TRUE(eventually([&] { return has_task(g.port(i), after); }, 10s)) << g.id(i);
}
