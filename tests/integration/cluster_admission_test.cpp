// Cluster admission (--cluster-secret-file) with real processes on loopback: a
// group of three with a secret elects and commits; a worker node without the
// secret or with another one never registers while one with it does;
// aisched-inspect is refused without the secret and served with it; a --join
// node without the secret is never admitted to the group; --auth on a cluster
// node without a secret or TLS, and a bad secret file, stop startup.
// Every process is started by the harness in tests/support/ and killed by pid;
// all waiting is polling with deadlines.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "support/node_process.hpp"
#include "support/raft_group_process.hpp"
#include "support/test_helpers.hpp"
#include "support/worker_nodes.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Writes a fresh secret like `openssl rand -hex 32` to `path` with `mode`.
std::string make_secret(const std::string& path, mode_t mode = 0600) {
  std::random_device rd;
  std::string hex;
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 64; ++i) hex += digits[rd() % 16];
  std::ofstream(path) << hex << "\n";
  ::chmod(path.c_str(), mode);
  return path;
}

std::vector<std::string> secret_flag(const std::string& path) {
  return {"--cluster-secret-file", path};
}

std::set<std::string> listed_workers(uint16_t port) {
  std::set<std::string> out;
  auto r = http_call(port, "GET", "/api/v1/workers");
  if (r.status != 200) return out;
  auto v = parse(r);
  for (auto& w : v.at("items").as_array()) out.insert(str(w.as_object(), "id"));
  return out;
}

std::unique_ptr<child_process> worker_node(const std::string& dir, const std::string& id,
                                           uint16_t cluster_port,
                                           const std::vector<std::string>& extra) {
  return std::make_unique<child_process>(
      std::vector<std::string>{AISCHED_BINARY, "--node-id", id, "--roles", "worker", "--join",
                               "127.0.0.1:" + std::to_string(cluster_port), "--data-dir",
                               dir + "/" + id} +
          extra,
      dir + "/" + id + ".log");
}

command_result inspect(uint16_t port, std::vector<std::string> extra = {}) {
  return run_command(std::vector<std::string>{AISCHED_INSPECT_BINARY, "--node",
                                              "127.0.0.1:" + std::to_string(port), "-o", "json"} +
                         extra,
                     20s);
}

/// What member `id` looks like in GET /api/v1/cluster on `port`.
struct member_seen {
  bool listed = false, reachable = false, voter = false;
};
member_seen member_in(uint16_t port, const std::string& id) {
  member_seen out;
  auto r = http_call(port, "GET", "/api/v1/cluster", "", 2s);
  if (r.status != 200) return out;
  auto v = parse(r);
  for (auto& m : v.at("members").as_array()) {
    auto& mo = m.as_object();
    if (str(mo, "id") != id) continue;
    out.listed = true;
    auto* reach = mo.if_contains("reachable");
    out.reachable = reach && reach->is_bool() && reach->get_bool();
    auto* voter = mo.if_contains("voter");
    out.voter = voter && voter->is_bool() && voter->get_bool();
  }
  return out;
}

command_result start_and_wait(const std::vector<std::string>& flags) {
  return run_command(std::vector<std::string>{AISCHED_BINARY, "--http-addr", "127.0.0.1:0",
                                              "--cluster-addr", "127.0.0.1:0"} +
                     flags);
}

}  // namespace

TEST(cluster_admission, three_members_with_a_secret_elect_and_commit) {
  temp_dir dir;
  auto secret = make_secret(dir.path() + "/cluster.secret");
  raft_group g(dir.path(), 3, secret_flag(secret));
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  // On the "cluster listening" line, which may follow the HTTP answer.
  EXPECT_TRUE(eventually([&] {
    return g.log(leader).find(R"("admission":"secret")") != std::string::npos;
  })) << g.dump();
  // Written through a follower (forwarded to the leader's endpoint, reached
  // through its gatekeeper) and replicated to every member.
  auto id = create_task(g.port((leader + 1) % 3), R"({"name":"admitted","kind":"noop"})");
  ASSERT_NE(id, 0) << g.dump();
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(eventually([&] {
      return http_call(g.port(i), "GET", "/api/v1/tasks/" + std::to_string(id)).status == 200;
    })) << g.id(i) << " lacks the task\n" << g.dump();
}

TEST(cluster_admission, only_worker_nodes_with_the_secret_register) {
  temp_dir dir;
  auto secret = make_secret(dir.path() + "/cluster.secret");
  auto other = make_secret(dir.path() + "/other.secret");
  node_process node(dir.path() + "/n1",
                    std::vector<std::string>{"--roles", "scheduler,gateway"} + secret_flag(secret));
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto cport = cluster_port_of(node);
  ASSERT_NE(cport, 0) << node.log();

  auto good = worker_node(dir.path(), "w-good", cport, secret_flag(secret));
  ASSERT_TRUE(eventually([&] { return listed_workers(port).count("w-good") > 0; }, 15s))
      << tail(good->log()) << "\n" << tail(node.log());
  auto none = worker_node(dir.path(), "w-none", cport, {});
  auto wrong = worker_node(dir.path(), "w-wrong", cport, secret_flag(other));
  auto logs = [&] {
    return "--- scheduler\n" + tail(node.log()) + "\n--- w-none\n" + tail(none->log()) +
           "\n--- w-wrong\n" + tail(wrong->log());
  };
  bool intruded = false;
  auto intruders_listed = [&] {
    auto ws = listed_workers(port);
    intruded = intruded || ws.count("w-none") || ws.count("w-wrong");
    return intruded;
  };
  // Both are turned away (their registrars say so) and are never listed meanwhile.
  const std::string refused = "cannot register with the cluster";
  ASSERT_TRUE(eventually([&] {
    intruders_listed();
    return none->log().find(refused) != std::string::npos &&
           wrong->log().find(refused) != std::string::npos;
  }, 15s)) << logs();
  EXPECT_NE(none->log().find("--cluster-secret-file"), std::string::npos) << logs();
  EXPECT_NE(wrong->log().find("does not prove the cluster secret"), std::string::npos) << logs();
  // They keep retrying; for a few more seconds none of them gets in.
  EXPECT_FALSE(eventually(intruders_listed, 4s)) << listed_workers(port).size() << "\n" << logs();
  EXPECT_TRUE(none->running() && wrong->running()) << logs();
  EXPECT_TRUE(listed_workers(port).count("w-good")) << logs();
}

TEST(cluster_admission, inspect_needs_the_secret_of_a_protected_node) {
  temp_dir dir;
  auto secret = make_secret(dir.path() + "/cluster.secret");
  auto other = make_secret(dir.path() + "/other.secret");
  node_process node(dir.path() + "/n1", secret_flag(secret));
  ASSERT_TRUE(node.running());
  auto cport = cluster_port_of(node);
  ASSERT_NE(cport, 0) << node.log();

  auto r = inspect(cport);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("requires the cluster secret"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("\"raft\""), std::string::npos) << r.out;

  r = inspect(cport, secret_flag(other));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("does not prove the cluster secret"), std::string::npos) << r.err;

  r = inspect(cport, secret_flag(secret));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"raft\""), std::string::npos) << r.out;
}

TEST(cluster_admission, a_join_node_without_the_secret_is_never_admitted) {
  temp_dir dir;
  auto secret = make_secret(dir.path() + "/cluster.secret");
  // n1 alone with the secret; n2 and n3 are spares on ports of their own.
  raft_group g(dir.path(), 1, secret_flag(secret), /*spares=*/2);
  ASSERT_TRUE(g.running(0)) << g.dump();
  ASSERT_EQ(g.await_leader({0}), 0u) << g.dump();
  auto add = [&](size_t i, uint16_t http_port) {
    auto body = R"({"id":")" + g.id(i) + R"(","cluster_addr":")" + g.cluster_addr(i) +
                R"(","http_addr":"127.0.0.1:)" + std::to_string(http_port) + R"("})";
    return http_call(g.port(0), "POST", "/api/v1/cluster/members", body, 15s);
  };

  // With the secret, n2 joins: the leader reaches it and makes it a voter.
  g.start_joiner(1);
  ASSERT_TRUE(g.running(1)) << g.dump();
  auto r = add(1, g.port(1));
  ASSERT_EQ(r.status, 201u) << r.body << "\n" << g.dump();
  ASSERT_TRUE(eventually([&] {
    auto n2 = member_in(g.port(0), "n2");
    return n2.reachable && n2.voter && view_of(g.port(1)).leader == "n1";
  }, 20s)) << g.dump();

  // Without it, n3 is added to the membership but nobody connects to it.
  node_process intruder(dir.path() + "/n3", {"--node-id", g.id(2), "--join"}, 20s,
                        g.cluster_addr(2));
  ASSERT_TRUE(intruder.running());
  r = add(2, intruder.http_port());
  ASSERT_EQ(r.status, 201u) << r.body << "\n" << g.dump();
  auto dump = [&] { return g.dump() + "--- n3 (no secret)\n" + tail(intruder.log()); };
  ASSERT_TRUE(eventually([&] {
    return g.log(0).find("raft n1: cannot connect to n3") != std::string::npos;
  }, 10s)) << dump();
  auto admitted = [&] {
    auto v = view_of(intruder.http_port());
    return member_in(g.port(0), "n3").reachable || !v.leader.empty() || v.applied > 0;
  };
  EXPECT_FALSE(eventually(admitted, 5s)) << dump();
  // The group goes on committing without it.
  EXPECT_NE(create_task(g.port(0), R"({"name":"still-working","kind":"noop"})"), 0) << dump();
}

TEST(cluster_admission, auth_on_a_cluster_node_needs_a_secret_or_tls) {
  temp_dir dir;
  std::ofstream(dir.path() + "/jwt") << "a-jwt-signing-secret-of-enough-bytes\n";
  auto jwt = std::vector<std::string>{"--auth", "--auth-secret-file", dir.path() + "/jwt"};
  auto peers = std::vector<std::string>{"--node-id", "n1", "--peers",
                                        "n1=127.0.0.1:1,n2=127.0.0.1:2", "--data-dir",
                                        dir.path() + "/n1"};
  auto r = start_and_wait(peers + jwt);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--cluster-secret-file"), std::string::npos) << r.err;

  r = start_and_wait(std::vector<std::string>{"--roles", "worker", "--join", "127.0.0.1:1",
                                              "--data-dir", dir.path() + "/w"} +
                     jwt);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--cluster-secret-file"), std::string::npos) << r.err;

  // Bad secret files name the problem.
  auto shared = make_secret(dir.path() + "/shared.secret", 0644);
  r = start_and_wait(peers + jwt + secret_flag(shared));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("chmod 600"), std::string::npos) << r.err;
  std::ofstream(dir.path() + "/short.secret") << "too-short\n";
  ::chmod((dir.path() + "/short.secret").c_str(), 0600);
  r = start_and_wait(peers + jwt + secret_flag(dir.path() + "/short.secret"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("at least 32"), std::string::npos) << r.err;
  r = start_and_wait(peers + jwt + secret_flag(dir.path() + "/missing.secret"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("missing.secret"), std::string::npos) << r.err;

  // With a secret, the same member starts (and serves HTTP while it waits for n2).
  auto secret = make_secret(dir.path() + "/cluster.secret");
  node_process member(dir.path() + "/n1b",
                      std::vector<std::string>{"--node-id", "n1", "--peers",
                                               "n1=127.0.0.1:" + std::to_string(free_port()) +
                                                   ",n2=127.0.0.1:" + std::to_string(free_port())} +
                          jwt + secret_flag(secret),
                      20s);
  EXPECT_TRUE(member.running()) << member.log();
}
