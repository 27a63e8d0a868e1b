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

struct member {
  std::string id;
  uint16_t cluster_port = 0;
  std::unique_ptr<node_process> proc;
  uint16_t http() const { return proc && proc->running() ? proc->http_port() : 0; }
  std::string cluster_addr() const { return "127.0.0.1:" + std::to_string(cluster_port); }
};

/// The member that every member in `among` names as leader and that says it leads.
int agreed_leader(std::vector<member>& ms, const std::vector<int>& among) {
  std::string leader;
  for (auto i : among) {
    auto a = ask_cluster(ms[i].http());
    if (!a.ok || a.leader.empty() || (!leader.empty() && a.leader != leader)) return -1;
    leader = a.leader;
  }
  for (auto i : among)
    if (ms[i].id == leader) return ask_cluster(ms[i].http()).self_role == "leader" ? i : -1;
  return -1;
}

std::string dump(std::vector<member>& ms) {
  std::string out;
  for (auto& m : ms) {
    out += "--- " + m.id + "\n";
    if (m.http()) out += http_call(m.http(), "GET", "/api/v1/cluster", "", 2s).body + "\n";
    if (m.proc) out += tail(m.proc->log(), 2000) + "\n";
  }
  return out;
}

}  // namespace

TEST(cluster_members, a_joined_node_gets_every_task_and_a_removed_leader_is_replaced) {
  temp_dir dir;
  std::vector<member> ms(4);
  std::string peers;
  std::set<uint16_t> ports;
  for (int tries = 0; ports.size() < ms.size() && tries < 100; ++tries)
    if (auto p = free_port(); p != 0) ports.insert(p);
  ASSERT_EQ(ports.size(), ms.size()) << "no free ports";
  auto port = ports.begin();
  for (size_t i = 0; i < ms.size(); ++i) {
    ms[i].id = "n" + std::to_string(i + 1);
    ms[i].cluster_port = *port++;
    if (i < 3) peers += (peers.empty() ? "" : ",") + ms[i].id + "=" + ms[i].cluster_addr();
  }
  for (size_t i = 0; i < 3; ++i)
    ms[i].proc = std::make_unique<node_process>(
        dir.path() + "/" + ms[i].id,
        // Compacting after 20 entries makes n4 catch up by a snapshot, which
        // must carry the membership.
        std::vector<std::string>{"--node-id", ms[i].id, "--peers", peers, "--snapshot-every", "20"},
        20s, ms[i].cluster_addr());
  int leader = -1;
  ASSERT_TRUE(eventually([&] { return (leader = agreed_leader(ms, {0, 1, 2})) >= 0; }, 15s))
      << dump(ms);
  constexpr int tasks = 30;
  for (int i = 0; i < tasks; ++i)
    ASSERT_NE(create_task(ms[(leader + 1 + i) % 3].http(),
                          R"({"name":"before-)" + std::to_string(i) + R"(","kind":"noop"})"),
              0);

  // n4 starts empty and waits; it must not elect itself.
  ms[3].proc = std::make_unique<node_process>(dir.path() + "/n4",
                                              std::vector<std::string>{"--node-id", "n4", "--join"},
                                              20s, ms[3].cluster_addr());
  ASSERT_TRUE(ms[3].proc->running()) << dump(ms);
  EXPECT_EQ(ask_cluster(ms[3].http()).self_role, "joining") << dump(ms);
  auto follower = (leader + 1) % 3;
  // Bad input names the field.
  auto bad = http_call(ms[follower].http(), "POST", "/api/v1/cluster/members",
                       R"({"id":"n4","cluster_addr":"nowhere"})");
  EXPECT_EQ(bad.status, 400u) << bad.body;
  EXPECT_NE(bad.body.find("cluster_addr"), std::string::npos) << bad.body;
  // Added through a follower: forwarded to the leader.
  auto body = R"({"id":"n4","cluster_addr":")" + ms[3].cluster_addr() +
              R"(","http_addr":"127.0.0.1:)" + std::to_string(ms[3].http()) + R"("})";
  auto added = http_call(ms[follower].http(), "POST", "/api/v1/cluster/members", body, 15s);
  ASSERT_EQ(added.status, 201u) << added.body << "\n" << dump(ms);
  ASSERT_TRUE(eventually(
      [&] {
        return task_count(ms[3].http()) == tasks && ask_cluster(ms[leader].http()).votes("n4") &&
               ask_cluster(ms[3].http()).votes("n4");
      },
      20s))
      << "n4 did not get every task and become a voter\n"
      << dump(ms);
  EXPECT_NE(ms[3].proc->log().find("installed snapshot"), std::string::npos) << dump(ms);
  auto again = http_call(ms[follower].http(), "POST", "/api/v1/cluster/members", body, 15s);
  EXPECT_EQ(again.status, 409u) << again.body;

  // Remove the leader, asked through another member.
  auto old = leader;
  auto removed = http_call(ms[3].http(), "DELETE", "/api/v1/cluster/members/" + ms[old].id, "", 15s);
  ASSERT_EQ(removed.status, 200u) << removed.body << "\n" << dump(ms);
  std::vector<int> rest;
  for (int i = 0; i < 4; ++i)
    if (i != old) rest.push_back(i);
  ASSERT_TRUE(eventually(
      [&] {
        leader = agreed_leader(ms, rest);
        return leader >= 0 && !ask_cluster(ms[leader].http()).lists(ms[old].id);
      },
      15s))
      << "no new leader among the remaining members\n"
      << dump(ms);
  EXPECT_NE(leader, old);
  EXPECT_TRUE(eventually([&] { return ask_cluster(ms[old].http()).self_role == "removed"; }, 5s))
      << dump(ms);
  ASSERT_NE(create_task(ms[rest[0]].http(), R"({"name":"after-removal","kind":"noop"})"), 0)
      << dump(ms);

  // Three voters remain: with the removed node and one more down, two of them
  // still commit (were the removed one counted, two of four would not).
  ms[old].proc->stop(SIGKILL);
  int down = rest[0] == leader ? rest[1] : rest[0];
  ms[down].proc->stop(SIGKILL);
  std::vector<int> up;
  for (auto i : rest)
    if (i != down) up.push_back(i);
  ASSERT_TRUE(eventually([&] { return (leader = agreed_leader(ms, up)) >= 0; }, 15s)) << dump(ms);
  bool written = eventually(
      [&] {
        auto r = http_call(ms[up[0]].http(), "POST", "/api/v1/tasks",
                           R"({"name":"two-of-three","kind":"noop"})", 5s);
        return r.status == 201u;
      },
      15s);
  EXPECT_TRUE(written) << dump(ms);
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
