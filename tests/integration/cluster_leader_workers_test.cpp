// Workers follow the leader of a three-member group: a worker node that joins a
// follower registers with the leader and runs its tasks; it keeps running them
// when the member it joined dies, and moves to the new leader when the leader
// dies. Every member's gateway lists the leader's workers, external HTTP
// workers register, heartbeat, drain and leave through any member, and a
// follower's built-in worker takes runs too. Every process is started by the harness in
// tests/support/ on free loopback ports with temporary dirs and killed by pid;
// all waiting is polling with deadlines.
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

std::unique_ptr<child_process> start_worker_node(const std::string& dir, const std::string& id,
                                                 uint16_t join_port) {
  auto p = std::make_unique<child_process>(
      std::vector<std::string>{AISCHED_BINARY, "--node-id", id, "--roles", "worker", "--join",
                               "127.0.0.1:" + std::to_string(join_port), "--data-dir",
                               dir + "/" + id, "--cluster-addr", "127.0.0.1:0"},
      dir + "/" + id + ".log");
  if (p->await_log(R"("msg":"worker node started")").empty())
    ADD_FAILURE() << "worker node " << id << " did not start; log:\n" << p->log();
  return p;
}

/// Ids of the workers GET /api/v1/workers lists online on the member at `port`.
std::set<std::string> online_workers(uint16_t port) {
  std::set<std::string> out;
  auto r = http_call(port, "GET", "/api/v1/workers", "", 2s);
  if (r.status != 200) return out;
  auto v = parse(r);
  if (!v.is_object() || !v.as_object().contains("items")) return out;
  for (auto& w : v.at("items").as_array())
    if (str(w.as_object(), "status") == "online") out.insert(str(w.as_object(), "id"));
  return out;
}

/// Whether task `task_id` has a successful run on `worker` whose slot is after `after_ms`.
bool ran_on_after(uint16_t port, int64_t task_id, const std::string& worker, int64_t after_ms) {
  auto r = http_call(port, "GET",
                     "/api/v1/instances?task_id=" + std::to_string(task_id) +
                         "&state=success&limit=500",
                     "", 2s);
  if (r.status != 200) return false;
  auto v = parse(r);
  if (!v.is_object() || !v.as_object().contains("items")) return false;
  for (auto& x : v.at("items").as_array()) {
    auto& o = x.as_object();
    if (str(o, "worker_id") == worker && rfc3339_ms(str(o, "slot")) > after_ms) return true;
  }
  return false;
}

}  // namespace

TEST(cluster_leader_workers, a_worker_node_follows_the_leader_across_failures) {
  temp_dir dir;
  raft_group g(dir.path(), 3, {"--roles", "scheduler,gateway"});  // no built-in workers
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  auto joined = (leader + 1) % 3;  // a follower

  auto worker = start_worker_node(dir.path(), "w1", g.cluster_port(joined));
  for (size_t i = 0; i < 3; ++i)
    ASSERT_TRUE(eventually([&] { return online_workers(g.port(i)).count("w1") == 1; }, 15s))
        << g.id(i) << " does not list w1 online\n"
        << g.dump() << "\nworker:\n" << tail(worker->log());

  auto id = create_task(g.port(joined), R"({"name":"tick","command":"true","schedule":"@every 1s"})");
  ASSERT_NE(id, 0) << g.dump();
  ASSERT_TRUE(eventually([&] { return ran_on_after(g.port(leader), id, "w1", 0); }, 15s))
      << "no run on the worker node\n" << g.dump() << "\nworker:\n" << tail(worker->log());

  // The member it joined dies: the worker is registered with the leader, not with it.
  auto t1 = wall_ms();
  ASSERT_EQ(g.kill(joined), SIGKILL);
  EXPECT_TRUE(eventually([&] { return ran_on_after(g.port(leader), id, "w1", t1 + 1000); }, 15s))
      << "no run on the worker node after " << g.id(joined) << " died\n"
      << g.dump() << "\nworker:\n" << tail(worker->log());

  // It comes back; then the leader dies: the worker moves to the new leader.
  g.start(joined);
  ASSERT_NE(g.await_leader({0, 1, 2}), none) << g.dump();
  auto t2 = wall_ms();
  ASSERT_EQ(g.kill(leader), SIGKILL);
  auto next = g.await_leader(g.running_members());
  ASSERT_NE(next, none) << g.dump();
  EXPECT_TRUE(eventually([&] { return online_workers(g.port(next)).count("w1") == 1; }, 15s))
      << "the new leader " << g.id(next) << " does not list w1\n"
      << g.dump() << "\nworker:\n" << tail(worker->log());
  EXPECT_TRUE(eventually([&] { return ran_on_after(g.port(next), id, "w1", t2 + 1000); }, 15s))
      << "no run on the worker node under the new leader\n"
      << g.dump() << "\nworker:\n" << tail(worker->log());
}

TEST(cluster_leader_workers, followers_built_in_workers_take_runs) {
  temp_dir dir;
  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  ASSERT_TRUE(eventually([&] { return online_workers(g.port(leader)).size() == 3; }, 15s))
      << "the leader does not list every member's built-in worker\n" << g.dump();

  // Sharded runs spread over the workers: every member's worker takes a shard.
  auto id = create_task(g.port(leader),
                        R"({"name":"wide","command":"true","schedule":"@every 1s","shards":3,)"
                        R"("route":"least_loaded"})");
  ASSERT_NE(id, 0) << g.dump();
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(eventually([&] { return ran_on_after(g.port(leader), id, g.id(i), 0); }, 15s))
        << "no run on " << g.id(i) << "'s built-in worker\n" << g.dump();
}

TEST(cluster_leader_workers, external_workers_register_through_any_member) {
  temp_dir dir;
  raft_group g(dir.path(), 3, {"--roles", "scheduler,gateway"});
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  auto f1 = (leader + 1) % 3, f2 = (leader + 2) % 3;

  // Registered through one follower, kept alive through the other: the leader holds it.
  auto r = http_call(g.port(f1), "POST", "/api/v1/workers",
                     R"({"id":"h1","callback_url":"http://127.0.0.1:9/","max_load":4})");
  ASSERT_EQ(r.status, 201) << r.body << "\n" << g.dump();
  EXPECT_EQ(online_workers(g.port(leader)), std::set<std::string>{"h1"});
  auto credential = str(parse(r).as_object(), "credential");
  r = http_call(g.port(f2), "POST", "/api/v1/workers/h1/heartbeat", R"({"load":1})", 10s,
                {{"X-Worker-Credential", credential}});
  EXPECT_EQ(r.status, 200) << r.body;
  r = http_call(g.port(f2), "POST", "/api/v1/workers/nobody/heartbeat", R"({"load":1})");
  EXPECT_EQ(r.status, 404) << "an unknown worker is told to register again: " << r.body;

  // Drained and removed through a follower as well.
  r = http_call(g.port(f2), "POST", "/api/v1/workers/h1/drain");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(online_workers(g.port(leader)).empty()) << "h1 should be draining";
  r = http_call(g.port(f1), "DELETE", "/api/v1/workers/h1");
  EXPECT_EQ(r.status, 204) << r.body;
  r = http_call(g.port(leader), "GET", "/api/v1/workers");
  EXPECT_EQ(r.body.find("\"h1\""), std::string::npos) << r.body;
}
