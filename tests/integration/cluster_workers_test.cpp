// Runs across several workers of one scheduler node: native worker nodes that join
// its cluster port (`--roles worker --join`), external HTTP workers
// (tools/example-worker/worker.py) and the built-in worker. Checks label routing of
// sharded runs, that killing a worker node mid-run loses no run, and that a worker
// node re-registers after the scheduler restarts. Every process is started by the
// harness in tests/support/ on free loopback ports with temporary dirs and killed
// by pid; all waiting is polling with deadlines.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"
#include "support/worker_nodes.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {


/// A scheduler node on a cluster port of our choosing (node_process always passes
/// --cluster-addr 127.0.0.1:0, and the flag may be given once only).
struct fixed_port_node {
  std::unique_ptr<child_process> proc;
  uint16_t http_port = 0;
};

/// Starts `aisched` (all roles) on `data_dir` with its cluster port at `cluster_port`
/// plus `extra_args`, logging to `log_path`; waits until it serves /healthz. Fails
/// the current test (http_port 0) if it does not come up.
fixed_port_node start_fixed_port_node(const std::string& data_dir, uint16_t cluster_port,
                                      const std::string& log_path,
                                      std::vector<std::string> extra_args = {}) {
  std::vector<std::string> args{AISCHED_BINARY,
                                "--data-dir",
                                data_dir,
                                "--http-addr",
                                "127.0.0.1:0",
                                "--cluster-addr",
                                "127.0.0.1:" + std::to_string(cluster_port)};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  fixed_port_node n;
  n.proc = std::make_unique<child_process>(args, log_path);
  auto port = n.proc->await_log(R"re("msg":"http listening","addr":"127\.0\.0\.1:(\d+)")re");
  if (!port.empty()) {
    auto p = static_cast<uint16_t>(std::stoi(port));
    if (eventually([&] { return http_call(p, "GET", "/healthz").status == 200; }, 20s))
      n.http_port = p;
  }
  if (n.http_port == 0) ADD_FAILURE() << "aisched did not start; log:\n" << n.proc->log();
  return n;
}

/// Starts a worker node `id` joining 127.0.0.1:`cluster_port` with label `label`
/// (KEY=VALUE) and `slots` run slots; data under `dir`/`id`, log in `dir`/`id`.log.
/// Fails the current test if it does not log "worker node started".
std::unique_ptr<child_process> start_worker_node(const std::string& dir, const std::string& id,
                                                 uint16_t cluster_port, const std::string& label,
                                                 int slots) {
  auto p = std::make_unique<child_process>(
      std::vector<std::string>{AISCHED_BINARY, "--node-id", id, "--roles", "worker", "--join",
                               "127.0.0.1:" + std::to_string(cluster_port), "--data-dir",
                               dir + "/" + id, "--worker-label", label, "--worker-slots",
                               std::to_string(slots)},
      dir + "/" + id + ".log");
  if (p->await_log(R"("msg":"worker node started")").empty())
    ADD_FAILURE() << "worker node " << id << " did not start; log:\n" << p->log();
  return p;
}

/// Starts tools/example-worker/worker.py as external worker `id` of the node on
/// `http_port`; fails the current test if it does not print "listening on PORT".
std::unique_ptr<child_process> start_python_worker(const std::string& dir, const std::string& id,
                                                   uint16_t http_port, const std::string& label,
                                                   int max_load) {
  auto p = std::make_unique<child_process>(
      std::vector<std::string>{"/usr/bin/python3", AISCHED_EXAMPLE_WORKER, "--server",
                               "http://127.0.0.1:" + std::to_string(http_port), "--id", id,
                               "--label", label, "--max-load", std::to_string(max_load)},
      dir + "/" + id + ".log");
  if (p->await_log(R"(listening on (\d+))").empty())
    ADD_FAILURE() << "python worker " << id << " did not start; log:\n" << p->log();
  return p;
}

/// GET /api/v1/workers as id -> worker document.
std::map<std::string, json::object> workers_of(uint16_t port) {
  std::map<std::string, json::object> out;
  auto r = http_call(port, "GET", "/api/v1/workers");
  if (r.status != 200) return out;
  auto v = parse(r);
  if (!v.is_object() || !v.as_object().contains("items")) return out;
  for (auto& w : v.at("items").as_array()) out[str(w.as_object(), "id")] = w.as_object();
  return out;
}

/// Status ("online", "offline") of worker `id` as the node lists it; "" if unlisted.
std::string worker_status(uint16_t port, const std::string& id) {
  auto all = workers_of(port);
  auto i = all.find(id);
  return i == all.end() ? "" : str(i->second, "status");
}

std::string workers_dump(uint16_t port) { return http_call(port, "GET", "/api/v1/workers").body; }

/// Triggers task `id` now; returns the ids of the instances it created. A node
/// answers 503 (nothing fired) until its trigger actor leads and has rebuilt its
/// state, which may be after /healthz and task creation already work: retry that.
std::vector<std::string> trigger(uint16_t port, int64_t id) {
  http_result r;
  eventually(
      [&] {
        r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger");
        return r.status != 503;
      },
      10s);
  std::vector<std::string> out;
  if (r.status != 201) {
    ADD_FAILURE() << "trigger of task " << id << " failed (" << r.status << "): " << r.body;
    return out;
  }
  auto v = parse(r);
  for (auto& x : v.at("instances").as_array()) out.push_back(str(x.as_object(), "id"));
  return out;
}

/// All instances of task `id`; `ok` turns false if a page could not be read.
std::vector<json::object> instances_of(uint16_t port, int64_t id, bool* ok = nullptr) {
  std::vector<json::object> out;
  std::string cursor;
  if (ok) *ok = true;
  for (int page = 0; page < 1000; ++page) {
    auto target = "/api/v1/instances?task_id=" + std::to_string(id) + "&limit=100" +
                  (cursor.empty() ? "" : "&cursor=" + cursor);
    auto r = http_call(port, "GET", target);
    if (r.status != 200) {
      if (ok) *ok = false;
      return out;
    }
    auto v = parse(r).as_object();
    for (auto& x : v.at("items").as_array()) out.push_back(x.as_object());
    cursor = str(v, "next_cursor");
    if (cursor.empty()) return out;
  }
  if (ok) *ok = false;
  return out;
}

json::object get_instance(uint16_t port, const std::string& id) {
  auto r = http_call(port, "GET", "/api/v1/instances/" + id);
  if (r.status != 200) return {};
  return parse(r).as_object();
}

bool terminal(const std::string& state) {
  return state == "success" || state == "failed" || state == "timed_out" || state == "cancelled";
}

/// Polls until every instance of every task in `ids` is terminal and there are
/// `expected` of them; returns the last read, by task.
std::map<int64_t, std::vector<json::object>> await_all_terminal(uint16_t port,
                                                                const std::vector<int64_t>& ids,
                                                                size_t expected,
                                                                std::chrono::milliseconds timeout) {
  std::map<int64_t, std::vector<json::object>> last;
  eventually(
      [&] {
        std::map<int64_t, std::vector<json::object>> now;
        size_t done = 0, n = 0;
        for (auto id : ids) {
          bool ok = true;
          now[id] = instances_of(port, id, &ok);
          if (!ok) return false;
          for (auto& x : now[id]) {
            ++n;
            if (terminal(str(x, "state"))) ++done;
          }
        }
        last = std::move(now);
        return n == expected && done == n;
      },
      timeout);
  return last;
}

std::string dump(const std::vector<json::object>& xs, size_t n = 5) {
  std::string out;
  for (size_t i = 0; i < xs.size() && i < n; ++i) out += json::serialize(xs[i]) + "\n";
  return out;
}

/// Polls until worker `id` is listed with `status`; returns whether it was.
bool await_worker(uint16_t port, const std::string& id, const std::string& status,
                  std::chrono::milliseconds timeout = 15s) {
  return eventually([&] { return worker_status(port, id) == status; }, timeout);
}

}  // namespace

TEST(cluster_workers, sharded_runs_land_on_matching_workers) {
  auto started = steady::now();
  temp_dir dir;
  node_process node(dir.path() + "/n1", {"--worker-label", "zone=a", "--worker-slots", "8"});
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  auto cport = cluster_port_of(node);
  ASSERT_NE(cport, 0) << tail(node.log());

  auto w2 = start_worker_node(dir.path(), "w2", cport, "zone=b", 8);
  auto py1 = start_python_worker(dir.path(), "py-1", port, "zone=c", 8);
  auto py2 = start_python_worker(dir.path(), "py-2", port, "zone=c", 8);
  for (auto id : {"n1", "w2", "py-1", "py-2"})
    ASSERT_TRUE(await_worker(port, id, "online"))
        << id << " never online: " << workers_dump(port) << "\n"
        << tail(w2->log()) << tail(node.log());
  auto listed = workers_of(port);
  EXPECT_EQ(str(listed["w2"], "protocol"), "native") << json::serialize(listed["w2"]);
  EXPECT_EQ(str(listed["py-1"], "protocol"), "http") << json::serialize(listed["py-1"]);
  EXPECT_EQ(str(listed["n1"], "protocol"), "native") << json::serialize(listed["n1"]);

  const std::string cmd = R"("command":"echo shard $SHARD_NO of $SHARD_TOTAL")";
  struct expectation {
    int64_t id;
    int shards;
    std::set<std::string> workers;  // the workers allowed to run it
  };
  std::vector<expectation> tasks{
      {create_task(port, R"({"name":"on-b",)" + cmd + R"(,"labels":{"zone":"b"},"shards":50})"),
       50,
       {"w2"}},
      {create_task(port, R"({"name":"on-c",)" + cmd +
                             R"(,"labels":{"zone":"c"},"shards":100,"route":"round_robin"})"),
       100,
       {"py-1", "py-2"}},
      {create_task(port, R"({"name":"on-a",)" + cmd + R"(,"labels":{"zone":"a"},"shards":50})"),
       50,
       {"n1"}}};
  std::vector<int64_t> ids;
  size_t triggered = 0;
  for (auto& t : tasks) {
    ASSERT_NE(t.id, 0);
    ids.push_back(t.id);
    auto created = trigger(port, t.id);
    EXPECT_EQ(created.size(), size_t(t.shards)) << "task " << t.id;
    triggered += created.size();
  }
  ASSERT_EQ(triggered, 200u);

  auto fired = steady::now();
  auto all = await_all_terminal(port, ids, 200, 60s);
  RecordProperty("seconds_to_200_terminal", std::to_string(seconds_since(fired)));

  std::set<std::string> seen_ids;
  for (auto& t : tasks) {
    auto& xs = all[t.id];
    ASSERT_EQ(xs.size(), size_t(t.shards)) << "task " << t.id << "\n"
                                           << dump(xs) << tail(node.log());
    std::set<int64_t> shards;
    std::map<std::string, int> per_worker;
    for (auto& x : xs) {
      auto xid = str(x, "id");
      EXPECT_TRUE(seen_ids.insert(xid).second) << "instance id twice: " << xid;
      auto shard = num(x, "shard");
      EXPECT_TRUE(shards.insert(shard).second) << "shard twice: " << json::serialize(x);
      EXPECT_EQ(str(x, "state"), "success") << json::serialize(x);
      EXPECT_EQ(num(x, "attempt"), 1) << json::serialize(x);
      auto worker = str(x, "worker_id");
      EXPECT_TRUE(t.workers.count(worker))
          << "ran on a worker without the label: " << json::serialize(x);
      ++per_worker[worker];
      auto line = "shard " + std::to_string(shard) + " of " + std::to_string(t.shards);
      EXPECT_NE(str(x, "output").find(line), std::string::npos)
          << "output lacks '" << line << "': " << json::serialize(x);
    }
    EXPECT_EQ(shards.size(), size_t(t.shards));
    EXPECT_EQ(shards.empty() ? -1 : *shards.rbegin(), t.shards - 1);
    for (auto& w : t.workers)
      EXPECT_GT(per_worker[w], 0) << "task " << t.id << " never ran on " << w;
    for (auto& [w, n] : per_worker) RecordProperty("task_" + std::to_string(t.id) + "_on_" + w, n);
  }
  EXPECT_EQ(seen_ids.size(), 200u);

  // broadcast: one run per matching worker (zone=c: the two python workers).
  auto bid = create_task(port, R"({"name":"everywhere",)" + cmd +
                                   R"(,"labels":{"zone":"c"},"route":"broadcast"})");
  ASSERT_NE(bid, 0);
  EXPECT_EQ(trigger(port, bid).size(), 2u);
  auto bcast = await_all_terminal(port, {bid}, 2, 30s)[bid];
  std::set<std::string> ran_on;
  for (auto& x : bcast) {
    EXPECT_EQ(str(x, "state"), "success") << json::serialize(x);
    ran_on.insert(str(x, "worker_id"));
  }
  EXPECT_EQ(ran_on, (std::set<std::string>{"py-1", "py-2"})) << dump(bcast);
  RecordProperty("seconds_total", std::to_string(seconds_since(started)));
}

TEST(cluster_workers, killing_a_worker_mid_run_loses_nothing) {
  auto started = steady::now();
  temp_dir dir;
  node_process node(dir.path() + "/n1", {"--worker-label", "zone=a"});
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  auto cport = cluster_port_of(node);
  ASSERT_NE(cport, 0) << tail(node.log());
  auto survivor = start_worker_node(dir.path(), "w2", cport, "zone=b", 10);
  auto victim = start_worker_node(dir.path(), "w3", cport, "zone=b", 10);
  for (auto id : {"w2", "w3"})
    ASSERT_TRUE(await_worker(port, id, "online")) << id << ": " << workers_dump(port);

  // Each shard takes 2 s; a run that loses its worker times out at its deadline
  // (dispatch + 5 s timeout + 30 s grace) and is retried 200 ms later.
  auto id = create_task(port, R"({"name":"spread","command":"sleep 2; echo shard $SHARD_NO",
      "labels":{"zone":"b"},"shards":20,"timeout":"5s",
      "retry":{"policy":"fixed","interval":"200ms","max_attempts":3}})");
  ASSERT_NE(id, 0);
  ASSERT_EQ(trigger(port, id).size(), 20u);

  // Kill w3 while its runs are running: every run placed, none of w3's finished.
  std::set<std::string> on_victim, on_survivor;
  std::vector<json::object> xs;
  bool placed = eventually(
      [&] {
        xs = instances_of(port, id);
        if (xs.size() != 20) return false;
        std::set<std::string> v, s;
        for (auto& x : xs) {
          auto state = str(x, "state");
          auto w = str(x, "worker_id");
          if (state == "pending" || state == "dispatched" || w.empty()) return false;
          if (w == "w3") {
            if (state != "running") return false;
            v.insert(str(x, "id"));
          } else {
            s.insert(str(x, "id"));
          }
        }
        on_victim = v;
        on_survivor = s;
        return !v.empty();
      },
      10s);
  ASSERT_TRUE(placed) << "w3 never ran its share at once:\n" << dump(xs, 20) << tail(node.log());
  auto killed = steady::now();
  EXPECT_EQ(victim->stop(SIGKILL), SIGKILL);
  RecordProperty("runs_on_killed_worker", int(on_victim.size()));
  RecordProperty("runs_on_surviving_worker", int(on_survivor.size()));

  // The monitor notices at once; its runs stay `running` until their deadline.
  EXPECT_TRUE(await_worker(port, "w3", "offline", 10s)) << workers_dump(port);
  RecordProperty("seconds_to_offline", std::to_string(seconds_since(killed)));
  for (auto& v : on_victim) {
    auto x = get_instance(port, v);
    EXPECT_FALSE(terminal(str(x, "state"))) << "ended before its deadline: " << json::serialize(x);
  }

  auto all = await_all_terminal(port, {id}, 20, 55s);
  RecordProperty("seconds_kill_to_all_terminal", std::to_string(seconds_since(killed)));
  auto& ys = all[id];
  ASSERT_EQ(ys.size(), 20u) << dump(ys, 20) << tail(node.log());
  std::set<std::string> ids;
  std::set<int64_t> shards;
  for (auto& x : ys) {
    auto xid = str(x, "id");
    EXPECT_TRUE(ids.insert(xid).second) << "listed twice: " << xid;
    auto shard = num(x, "shard");
    EXPECT_TRUE(shards.insert(shard).second) << json::serialize(x);
    EXPECT_EQ(str(x, "state"), "success") << json::serialize(x) << "\n" << tail(node.log());
    EXPECT_EQ(str(x, "worker_id"), "w2") << "only w2 is left to finish it: " << json::serialize(x);
    EXPECT_NE(str(x, "output").find("shard " + std::to_string(shard)), std::string::npos)
        << json::serialize(x);
    if (on_survivor.count(xid)) {
      EXPECT_EQ(num(x, "attempt"), 1)
          << "a run on the surviving worker was retried: " << json::serialize(x);
    } else {
      EXPECT_TRUE(on_victim.count(xid)) << json::serialize(x);
      EXPECT_EQ(num(x, "attempt"), 2) << "a run of the killed worker: " << json::serialize(x);
    }
  }
  EXPECT_EQ(shards.size(), 20u);
  // The list and the single reads agree: one committed final state per run.
  for (auto& x : ys) {
    auto one = get_instance(port, str(x, "id"));
    EXPECT_EQ(str(one, "state"), str(x, "state")) << json::serialize(one);
    EXPECT_EQ(num(one, "attempt"), num(x, "attempt")) << json::serialize(one);
  }
  RecordProperty("seconds_total", std::to_string(seconds_since(started)));
}

TEST(cluster_workers, worker_node_reconnects_after_scheduler_restart) {
  auto started = steady::now();
  temp_dir dir;
  auto cport = free_port();
  ASSERT_NE(cport, 0);
  auto data = dir.path() + "/n1";
  const std::vector<std::string> args{"--worker-label", "zone=a"};
  auto node = start_fixed_port_node(data, cport, dir.path() + "/n1.1.log", args);
  ASSERT_NE(node.http_port, 0);
  auto port = node.http_port;
  auto w2 = start_worker_node(dir.path(), "w2", cport, "zone=b", 4);
  ASSERT_TRUE(await_worker(port, "w2", "online")) << workers_dump(port) << "\n" << w2->log();

  auto id = create_task(port, R"({"name":"on-b","command":"echo ran on b",
      "labels":{"zone":"b"}})");
  ASSERT_NE(id, 0);
  auto before = trigger(port, id);
  ASSERT_EQ(before.size(), 1u);
  json::object x;
  ASSERT_TRUE(eventually([&] { return terminal(str(x = get_instance(port, before[0]), "state")); }))
      << json::serialize(x);
  EXPECT_EQ(str(x, "state"), "success") << json::serialize(x);
  EXPECT_EQ(str(x, "worker_id"), "w2") << json::serialize(x);

  EXPECT_EQ(node.proc->stop(SIGTERM), 0) << "no clean exit on SIGTERM\n" << tail(node.proc->log());
  auto restarted_at = steady::now();
  node = start_fixed_port_node(data, cport, dir.path() + "/n1.2.log", args);
  ASSERT_NE(node.http_port, 0);
  port = node.http_port;
  ASSERT_EQ(cluster_port_of(*node.proc), cport) << tail(node.proc->log());
  EXPECT_TRUE(w2->running()) << "the worker node exited with its scheduler\n" << w2->log();

  ASSERT_TRUE(await_worker(port, "w2", "online", 20s))
      << "w2 never re-registered: " << workers_dump(port) << "\n"
      << tail(w2->log()) << "\n"
      << tail(node.proc->log());
  RecordProperty("seconds_restart_to_w2_online", std::to_string(seconds_since(restarted_at)));

  auto after = trigger(port, id);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_NE(after[0], before[0]);
  ASSERT_TRUE(eventually([&] { return terminal(str(x = get_instance(port, after[0]), "state")); }))
      << json::serialize(x) << "\n"
      << tail(node.proc->log());
  EXPECT_EQ(str(x, "state"), "success") << json::serialize(x);
  EXPECT_EQ(str(x, "worker_id"), "w2") << json::serialize(x);
  EXPECT_NE(str(x, "output").find("ran on b"), std::string::npos) << json::serialize(x);
  // The run before the restart is still recorded, once.
  EXPECT_EQ(instances_of(port, id).size(), 2u);
  RecordProperty("seconds_total", std::to_string(seconds_since(started)));
}

TEST(cluster_workers, sigterm_drains_a_worker_node_without_losing_its_run) {
  temp_dir dir;
  node_process node(dir.path() + "/n1", {"--roles", "scheduler,gateway"});
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  auto cport = cluster_port_of(node);
  ASSERT_NE(cport, 0) << tail(node.log());
  auto w = start_worker_node(dir.path(), "w1", cport, "zone=a", 2);
  ASSERT_TRUE(await_worker(port, "w1", "online")) << workers_dump(port);

  // The run holds until the test opens the gate, so SIGTERM arrives mid-run.
  auto gate = dir.path() + "/gate";
  auto id = create_task(port, R"({"name":"held","command":"while [ ! -f )" + gate +
                                  R"( ]; do sleep 0.05; done; echo finished",
      "at":"2099-01-01T00:00:00Z","timeout":"60s"})");
  ASSERT_NE(id, 0);
  auto runs = trigger(port, id);
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_TRUE(eventually([&] { return str(get_instance(port, runs[0]), "state") == "running"; },
                         10s))
      << json::serialize(get_instance(port, runs[0]));

  ASSERT_EQ(kill(w->pid(), SIGTERM), 0);
  EXPECT_TRUE(await_worker(port, "w1", "draining", 10s)) << workers_dump(port);
  // It waits for its run instead of exiting.
  EXPECT_FALSE(eventually([&] { return !w->running(); }, 1s)) << w->log();

  std::ofstream(gate) << "open\n";
  EXPECT_TRUE(eventually([&] { return !w->running(); }, 20s)) << w->log();
  auto x = get_instance(port, runs[0]);
  EXPECT_EQ(str(x, "state"), "success") << json::serialize(x);
  EXPECT_EQ(num(x, "attempt"), 1) << "the run was not finished by the draining worker";
  EXPECT_NE(str(x, "output").find("finished"), std::string::npos) << json::serialize(x);
}
