// Membership changes on real `aisched` processes: three scheduler nodes (`--peers`)
// hold tasks; a fourth started empty with `--join` is added with POST
// /api/v1/cluster/members, receives every task (by a snapshot: the log was
// compacted) and becomes a voter; then the
// current leader is removed with DELETE /api/v1/cluster/members/{id}: the
// remaining members elect a new leader, writes still commit, and the removed
// node no longer counts for the quorum. Every process is started by the harness
// in tests/support/ with a temporary data dir and killed by pid; all waiting is
// polling with deadlines.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "support/node_process.hpp"
#include "support/raft_group_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

/// What GET /api/v1/cluster on one node says: the leader it knows, and for each
/// member id in its membership whether it votes.
struct cluster_answer {
  bool ok = false;
  std::string leader, self_role;
  uint64_t self_applied = 0;
  std::vector<std::pair<std::string, bool>> members;  // id, voter
  bool votes(const std::string& id) const {
    for (auto& [m, v] : members)
      if (m == id) return v;
    return false;
  }
  bool lists(const std::string& id) const {
    for (auto& m : members)
      if (m.first == id) return true;
    return false;
  }
};

cluster_answer ask_cluster(uint16_t port) {
  cluster_answer out;
  auto r = http_call(port, "GET", "/api/v1/cluster", "", 2s);
  if (r.status != 200) return out;
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object()) return out;
  auto& o = v.as_object();
  out.leader = str(o, "leader");
  for (auto& m : o.at("members").as_array()) {
    auto& mo = m.as_object();
    auto* voter = mo.if_contains("voter");
    out.members.emplace_back(str(mo, "id"), voter != nullptr && voter->is_bool() && voter->get_bool());
    auto* self = mo.if_contains("self");
    if (self != nullptr && self->is_bool() && self->get_bool()) {
      out.self_role = str(mo, "role");
      out.self_applied = uint64_t(num(mo, "applied_index"));
      out.ok = true;
    }
  }
  return out;
}

/// Number of tasks a node lists (first page of 200); -1 if it did not answer.
long task_count(uint16_t port) {
  auto r = http_call(port, "GET", "/api/v1/tasks?limit=200", "", 2s);
  if (r.status != 200) return -1;
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object()) return -1;
  return long(v.as_object().at("items").as_array().size());
}

}  // namespace

TEST(cluster_members, a_joined_node_gets_every_task_and_a_removed_leader_is_replaced) {
  temp_dir dir;
  // Compacting after 20 entries makes n4 catch up by a snapshot, which must
  // carry the membership. n4 is a spare: not in --peers.
  raft_group g(dir.path(), 3, {"--snapshot-every", "20"}, /*spares=*/1);
  ASSERT_TRUE(g.running(0) && g.running(1) && g.running(2)) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  constexpr int tasks = 30;
  for (int i = 0; i < tasks; ++i)
    ASSERT_NE(create_task(g.port((leader + 1 + i) % 3),
                          R"({"name":"before-)" + std::to_string(i) + R"(","kind":"noop"})"),
              0);

  // n4 starts empty and waits; it must not elect itself.
  g.start_joiner(3);
  ASSERT_TRUE(g.running(3)) << g.dump();
  EXPECT_EQ(ask_cluster(g.port(3)).self_role, "joining") << g.dump();
  auto follower = (leader + 1) % 3;
  // Bad input names the field.
  auto bad = http_call(g.port(follower), "POST", "/api/v1/cluster/members",
                       R"({"id":"n4","cluster_addr":"nowhere"})");
  EXPECT_EQ(bad.status, 400u) << bad.body;
  EXPECT_NE(bad.body.find("cluster_addr"), std::string::npos) << bad.body;
  // Added through a follower: forwarded to the leader.
  auto body = R"({"id":"n4","cluster_addr":")" + g.cluster_addr(3) +
              R"(","http_addr":"127.0.0.1:)" + std::to_string(g.port(3)) + R"("})";
  auto added = http_call(g.port(follower), "POST", "/api/v1/cluster/members", body, 15s);
  ASSERT_EQ(added.status, 201u) << added.body << "\n" << g.dump();
  ASSERT_TRUE(eventually(
      [&] {
        return task_count(g.port(3)) == tasks && ask_cluster(g.port(leader)).votes("n4") &&
               ask_cluster(g.port(3)).votes("n4");
      },
      20s))
      << "n4 did not get every task and become a voter\n"
      << g.dump();
  EXPECT_NE(g.log(3).find("installed snapshot"), std::string::npos) << g.dump();
  auto again = http_call(g.port(follower), "POST", "/api/v1/cluster/members", body, 15s);
  EXPECT_EQ(again.status, 409u) << again.body;

  // Remove the leader, asked through another member.
  auto old = leader;
  auto removed = http_call(g.port(3), "DELETE", "/api/v1/cluster/members/" + g.id(old), "", 15s);
  ASSERT_EQ(removed.status, 200u) << removed.body << "\n" << g.dump();
  std::vector<size_t> rest;
  for (size_t i = 0; i < 4; ++i)
    if (i != old) rest.push_back(i);
  ASSERT_TRUE(eventually(
      [&] {
        leader = g.agreed_leader(rest);
        return leader != none && !ask_cluster(g.port(leader)).lists(g.id(old));
      },
      15s))
      << "no new leader among the remaining members\n"
      << g.dump();
  EXPECT_NE(leader, old);
  EXPECT_TRUE(eventually([&] { return ask_cluster(g.port(old)).self_role == "removed"; }, 5s))
      << g.dump();
  ASSERT_NE(create_task(g.port(rest[0]), R"({"name":"after-removal","kind":"noop"})"), 0)
      << g.dump();

  // Three voters remain: with the removed node and one more down, two of them
  // still commit (were the removed one counted, two of four would not).
  g.kill(old);
  auto down = rest[0] == leader ? rest[1] : rest[0];
  g.kill(down);
  std::vector<size_t> up;
  for (auto i : rest)
    if (i != down) up.push_back(i);
  ASSERT_NE(leader = g.await_leader(up), none) << g.dump();
  bool written = eventually(
      [&] {
        auto r = http_call(g.port(up[0]), "POST", "/api/v1/tasks",
                           R"({"name":"two-of-three","kind":"noop"})", 5s);
        return r.status == 201u;
      },
      15s);
  EXPECT_TRUE(written) << g.dump();
}

TEST(cluster_members, join_without_an_address_refuses_other_peers_and_shows_in_help) {
  temp_dir dir;
  auto bad = run_command({AISCHED_BINARY, "--node-id", "n5", "--join", "--peers",
                          "n1=127.0.0.1:7401,n5=127.0.0.1:7405", "--data-dir", dir.path() + "/n5"},
                         10s);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--join"), std::string::npos) << bad.err;
  auto help = run_command({AISCHED_BINARY, "--help"}, 10s);
  EXPECT_NE(help.out.find("--join alone"), std::string::npos) << help.out;
}
