// Nothing stays stuck on a dead worker (issue 41, item 5): a native worker node
// SIGKILLed under a long run is dead once silent for --worker-dead-after (default
// 45 s), and the leader ends its attempt `worker_lost`, retried on another worker
// only then; DELETE /api/v1/workers/{id} does the same at once. At most one
// attempt of the run executes at any time (the run's processes are counted by a
// unique argument). An external (HTTP) worker that stops its heartbeats is dead
// by the same bound. A scheduler node at default flags and worker nodes
// (`--roles worker --join`) on free loopback ports and temporary dirs, all
// killed by pid; every wait polls with a deadline.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/http_receiver.hpp"
#include "support/node_process.hpp"
#include "support/prometheus_text.hpp"
#include "support/test_helpers.hpp"
#include "support/worker_nodes.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr auto dead_after = 45s;         // --worker-dead-after's default
constexpr auto offline_after = 30s;      // an external worker's offline bound, below it
constexpr auto registration_every = 5s;  // a native worker's heartbeat

/// A scheduler node (its own worker n1 has zone=a, so zone=b runs avoid it) and
/// worker nodes w2 and w3 (zone=b), both online.
struct cluster {
  temp_dir dir;
  std::unique_ptr<node_process> node;
  std::unique_ptr<child_process> w2, w3;
  uint16_t port = 0;

  void start() {
    node = std::make_unique<node_process>(dir.path() + "/n1",
                                          std::vector<std::string>{"--worker-label", "zone=a"});
    ASSERT_TRUE(node->running()) << tail(node->log());
    port = node->http_port();
    auto cport = cluster_port_of(*node);
    ASSERT_NE(cport, 0) << tail(node->log());
    w2 = start_worker_node(dir.path(), "w2", cport, "zone=b");
    w3 = start_worker_node(dir.path(), "w3", cport, "zone=b");
    for (auto id : {"w2", "w3"})
      ASSERT_TRUE(eventually([&] { return worker_status(port, id) == "online"; }, 15s))
          << id << ": " << http_call(port, "GET", "/api/v1/workers").body;
  }

  child_process& worker(const std::string& id) { return id == "w2" ? *w2 : *w3; }

  /// Starts a zone=b run of `sleep <arg>` retried once after `interval`, and
  /// waits until it runs (its process too); returns its instance id.
  std::string start_run(const std::string& arg, const std::string& interval) {
    auto task = create_task(port, R"({"name":"long","command":"sleep )" + arg +
                                      R"(","labels":{"zone":"b"},"retry":{"policy":"fixed",)"
                                      R"("interval":")" +
                                      interval + R"(","max_attempts":2}})");
    if (task == 0) return "";
    http_result r;
    eventually(
        [&] {
          r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(task) + "/trigger");
          return r.status != 503;
        },
        10s);
    if (r.status != 201) {
      ADD_FAILURE() << "trigger failed (" << r.status << "): " << r.body;
      return "";
    }
    auto id = str(parse(r).at("instances").as_array().at(0).as_object(), "id");
    json::object x;
    if (!eventually([&] { return str(x = instance_of(port, id), "state") == "running"; }, 15s) ||
        !eventually([&] { return pids_with_arg(arg).size() == 1; }, 10s)) {
      ADD_FAILURE() << "the run never ran: " << json::serialize(x) << tail(node->log());
      return "";
    }
    return id;
  }
};

}  // namespace

TEST(dead_worker,
     a_killed_worker_nodes_run_ends_worker_lost_within_dead_after_then_runs_elsewhere) {
  cluster c;
  ASSERT_NO_FATAL_FAILURE(c.start());
  auto arg = unique_sleep_arg(600);
  auto id = c.start_run(arg, "200ms");
  ASSERT_FALSE(id.empty());
  auto victim = str(instance_of(c.port, id), "worker_id");
  ASSERT_TRUE(victim == "w2" || victim == "w3") << victim;
  auto survivor = victim == "w2" ? "w3" : "w2";

  auto killed_ms = wall_ms();
  auto killed = std::chrono::steady_clock::now();
  EXPECT_EQ(c.worker(victim).stop(SIGKILL), SIGKILL);
  // The run moves within the bound: dead_after from the victim's last
  // registration, plus a tick; never two of its executions at once.
  size_t most_at_once = 0;
  json::object x;
  bool moved = eventually(
      [&] {
        most_at_once = std::max(most_at_once, pids_with_arg(arg).size());
        x = instance_of(c.port, id);
        return num(x, "attempt") == 2 && str(x, "state") == "running";
      },
      dead_after + 20s);
  RecordProperty("seconds_kill_to_second_attempt", std::to_string(seconds_since(killed)));
  ASSERT_TRUE(moved) << "the run stayed on the dead worker: " << json::serialize(x) << "\n"
                     << tail(c.node->log());
  EXPECT_LE(most_at_once, 1u) << "two executions of the run at once";
  EXPECT_EQ(str(x, "worker_id"), survivor) << json::serialize(x);

  auto history = attempts_of(c.port, id);
  ASSERT_EQ(history.size(), 2u) << json::serialize(x);
  auto& first = history[0];
  EXPECT_EQ(str(first, "worker_id"), victim) << json::serialize(first);
  EXPECT_EQ(str(first, "state"), "failed") << json::serialize(first);
  EXPECT_EQ(str(first, "error").rfind("worker_lost: worker " + victim + " ", 0), 0u)
      << json::serialize(first);
  // Ended only once the worker was surely gone (past the offline bound), and
  // the next attempt placed only after it ended.
  auto ended = time_ms(first.at("finished_at"));
  EXPECT_GE(ended - killed_ms,
            std::chrono::duration_cast<std::chrono::milliseconds>(offline_after).count())
      << json::serialize(first);
  EXPECT_LE(ended - killed_ms,
            std::chrono::duration_cast<std::chrono::milliseconds>(dead_after + 5s).count())
      << json::serialize(first);
  EXPECT_GE(time_ms(history[1].at("dispatched_at")), ended) << json::serialize(history[1]);
  EXPECT_EQ(worker_status(c.port, victim), "offline");

  // Logged and counted.
  EXPECT_NE(c.node->log().find("worker dead"), std::string::npos) << tail(c.node->log());
  auto metrics = parse_prometheus_text(http_call(c.port, "GET", "/metrics").body);
  EXPECT_EQ(metrics.value("scheduler_attempts_lost_total", {{"cause", "silent"}}), 1.0);

  c.worker(survivor).stop(SIGKILL);
  EXPECT_TRUE(all_gone(arg));
}

TEST(dead_worker, deleting_a_worker_ends_its_runs_at_once) {
  cluster c;
  ASSERT_NO_FATAL_FAILURE(c.start());
  auto arg = unique_sleep_arg(600);
  // A removed worker that is still up is told to cancel the attempt; the retry
  // interval leaves that cancel time to land before the next attempt starts.
  auto id = c.start_run(arg, "1s");
  ASSERT_FALSE(id.empty());
  auto victim = str(instance_of(c.port, id), "worker_id");
  ASSERT_TRUE(victim == "w2" || victim == "w3") << victim;

  auto removed = std::chrono::steady_clock::now();
  ASSERT_EQ(http_call(c.port, "DELETE", "/api/v1/workers/" + victim).status, 204u);
  std::vector<json::object> history;
  size_t most_at_once = 0;
  bool moved = eventually(
      [&] {
        most_at_once = std::max(most_at_once, pids_with_arg(arg).size());
        history = attempts_of(c.port, id);
        return history.size() == 2 && str(history[1], "state") == "running";
      },
      registration_every + 5s);
  RecordProperty("seconds_delete_to_second_attempt", std::to_string(seconds_since(removed)));
  ASSERT_TRUE(moved) << "the removed worker kept the run: "
                     << json::serialize(instance_of(c.port, id)) << "\n"
                     << tail(c.node->log());
  EXPECT_LE(most_at_once, 1u) << "two executions of the run at once";
  auto& first = history[0];
  EXPECT_EQ(str(first, "worker_id"), victim) << json::serialize(first);
  EXPECT_EQ(str(first, "state"), "failed") << json::serialize(first);
  EXPECT_EQ(str(first, "error"), "worker_lost: worker " + victim + " was removed")
      << json::serialize(first);
  EXPECT_GE(time_ms(history[1].at("dispatched_at")), time_ms(first.at("finished_at")))
      << json::serialize(history[1]);
  auto metrics = parse_prometheus_text(http_call(c.port, "GET", "/metrics").body);
  EXPECT_EQ(metrics.value("scheduler_attempts_lost_total", {{"cause", "removed"}}), 1.0);

  c.w2->stop(SIGKILL);
  c.w3->stop(SIGKILL);
  EXPECT_TRUE(all_gone(arg));
}

TEST(dead_worker, an_external_worker_that_falls_silent_loses_its_run_after_dead_after) {
  temp_dir dir;
  node_process node(dir.path() + "/n1", {"--roles", "scheduler,gateway"});
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  ASSERT_TRUE(await_ready(port)) << tail(node.log());
  http_receiver rx;  // takes the run, then the worker never sends a heartbeat
  auto r = http_call(
      port, "POST", "/api/v1/workers",
      json::serialize(json::object{{"id", "ext"}, {"callback_url", rx.url("")}, {"max_load", 4}}));
  ASSERT_EQ(r.status, 201u) << r.body;
  auto registered_ms = wall_ms();
  auto task = create_task(port, R"({"name":"long","command":"sleep 600"})");
  ASSERT_NE(task, 0);
  r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(task) + "/trigger");
  ASSERT_EQ(r.status, 201u) << r.body;
  auto id = str(parse(r).at("instances").as_array().at(0).as_object(), "id");
  auto delivered = [&](const std::string& what) {
    for (auto& q : rx.requests())
      if (q.body.find(id) != std::string::npos && q.head.find(what) != std::string::npos)
        return true;
    return false;
  };
  ASSERT_TRUE(eventually([&] { return delivered("POST"); }, 10s)) << tail(node.log());

  json::object x;
  bool ended = eventually([&] { return str(x = instance_of(port, id), "state") == "failed"; },
                          dead_after + 15s);
  ASSERT_TRUE(ended) << "the run stayed on the silent worker: " << json::serialize(x) << "\n"
                     << tail(node.log());
  EXPECT_EQ(str(x, "error"), "worker_lost: worker ext was not heard from for 45s")
      << json::serialize(x);
  EXPECT_GE(time_ms(x.at("finished_at")) - registered_ms,
            std::chrono::duration_cast<std::chrono::milliseconds>(dead_after - 1s).count())
      << json::serialize(x);
  EXPECT_EQ(worker_status(port, "ext"), "offline");
  // The worker is told to cancel it, should it still be running it.
  EXPECT_TRUE(eventually([&] { return delivered("/cancel"); }, 10s));
}
