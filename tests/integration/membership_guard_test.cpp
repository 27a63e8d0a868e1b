// A data directory's membership wins over the --peers it is restarted with
// (issue 41 item 1): a member of a group of three restarted with --peers naming
// only itself exits 2 naming both memberships instead of electing itself beside
// the group, and restarts with the original --peers; a single node without
// --peers restarts as before and refuses a --peers naming a group; after a
// member was added with the membership API the original --peers still start.
// Nodes are started by the harness in tests/support/ on temporary dirs and free
// ports; all waiting is polling with deadlines.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <string>
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
