// Run-history retention on real `aisched` nodes started as `make run` starts
// them: a task's `retention` keeps its newest runs and removes the rest through
// the log, so a removed run answers 404 `gone` (its attempts too) on every
// member; bad retention input is a clear 400; and the cluster-wide defaults
// (--retention-keep-runs, --retention-keep-for) apply to a task that sets none,
// a bad value refusing to start. Free loopback ports, temporary dirs, polling
// with deadlines.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <csignal>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/node_process.hpp"
#include "support/raft_group_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

/// The ids and states of task `id`'s runs on the member at `port` (one page
/// of up to 1000), or nullopt when the read failed.
std::optional<std::vector<std::pair<std::string, std::string>>> runs_of(uint16_t port,
                                                                        int64_t id) {
  auto r = http_call(port, "GET", "/api/v1/instances?limit=1000&task_id=" + std::to_string(id));
  if (r.status != 200) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> out;
  auto v = parse(r);
  for (auto& x : v.as_object().at("items").as_array())
    out.emplace_back(str(x.as_object(), "id"), str(x.as_object(), "state"));
  return out;
}

bool all_succeeded(const std::vector<std::pair<std::string, std::string>>& runs, size_t n) {
  if (runs.size() != n) return false;
  for (auto& [id, state] : runs)
    if (state != "success") return false;
  return true;
}

/// Polls (up to `timeout`) until task `id` on the member at `port` holds
/// exactly `n` runs, all succeeded; `last` is what it held at the last read.
bool await_succeeded(uint16_t port, int64_t id, size_t n,
                     std::vector<std::pair<std::string, std::string>>& last,
                     std::chrono::milliseconds timeout) {
  return eventually(
      [&] {
        auto runs = runs_of(port, id);
        if (!runs) return false;
        last = *runs;
        return all_succeeded(last, n);
      },
      timeout);
}

/// The error code a GET of `path` answers with 404, or what it answered instead.
std::string code_404(uint16_t port, const std::string& path) {
  auto r = http_call(port, "GET", path);
  if (r.status != 404) return "status " + std::to_string(r.status) + ": " + r.body;
  auto v = parse(r);
  auto* e = v.is_object() ? v.as_object().if_contains("error") : nullptr;
  return e && e->is_object() ? str(e->as_object(), "code") : r.body;
}

std::string run_id(int64_t task, const std::vector<std::pair<std::string, std::string>>& runs,
                   size_t k) {
  return k < runs.size() ? runs[k].first : "task-" + std::to_string(task) + "-missing";
}

/// The value of the metric line that starts with `series` (name and labels),
/// or -1 when /metrics does not answer or has no such line.
double metric(uint16_t port, const std::string& series) {
  auto r = http_call(port, "GET", "/metrics");
  if (r.status != 200) return -1;
  auto at = r.body.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(r.body.substr(at + series.size() + 2));
}

/// Enqueues `n` runs of task `id`; their ids, or none when the node did not answer 202.
std::vector<std::string> enqueue(uint16_t port, int64_t id, size_t n) {
  auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/runs",
                     payloads_body(n));
  std::vector<std::string> out;
  if (r.status != 202) return out;
  auto v = parse(r);
  for (auto& x : v.as_object().at("instance_ids").as_array()) out.emplace_back(x.as_string());
  return out;
}

}  // namespace

TEST(retention, a_task_keeps_its_newest_runs_and_a_removed_run_answers_gone) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto id = create_task(port, R"({"name":"keep3","command":"true","retention":{"keep_runs":3}})");
  ASSERT_NE(id, 0);
  auto t = parse(http_call(port, "GET", "/api/v1/tasks/" + std::to_string(id))).as_object();
  EXPECT_EQ(num(t.at("retention").as_object(), "keep_runs"), 3) << json::serialize(t);

  auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/runs",
                     payloads_body(10));
  ASSERT_EQ(r.status, 202u) << r.body;
  std::vector<std::string> all;
  auto answered = parse(r);
  for (auto& x : answered.as_object().at("instance_ids").as_array())
    all.emplace_back(x.as_string());
  ASSERT_EQ(all.size(), 10u);

  // Ten runs end; the leader's sweep (every 10 s by default) removes seven.
  std::vector<std::pair<std::string, std::string>> kept;
  EXPECT_TRUE(await_succeeded(port, id, 3, kept, 60s))
      << kept.size() << " runs left\n" << tail(node.log());
  // The newest three (a bulk enqueue's runs are shards of one slot, in order).
  ASSERT_EQ(kept.size(), 3u);
  std::set<std::string> kept_ids, newest(all.begin() + 7, all.end());
  for (auto& [run, state] : kept) kept_ids.insert(run);
  EXPECT_EQ(kept_ids, newest);
  for (size_t k = 0; k < 7; ++k) {
    EXPECT_EQ(code_404(port, "/api/v1/instances/" + all[k]), "gone") << all[k];
    EXPECT_EQ(code_404(port, "/api/v1/instances/" + all[k] + "/attempts"), "gone") << all[k];
  }
  auto present = http_call(port, "GET", "/api/v1/instances/" + all[9]);
  EXPECT_EQ(present.status, 200u) << present.body;
  auto metrics = http_call(port, "GET", "/metrics");
  EXPECT_NE(metrics.body.find("scheduler_runs_pruned_total 7"), std::string::npos)
      << tail(metrics.body);
}

TEST(retention, bad_retention_input_is_a_clear_error) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  struct bad_case {
    std::string retention;
    std::string field;
  };
  std::vector<bad_case> cases{
      {R"({"keep_runs":-1})", "retention.keep_runs"},
      {R"({"keep_runs":10000001})", "retention.keep_runs"},
      {R"({"keep_for":"500ms"})", "retention.keep_for"},
      {R"({"keep_for":"87601h"})", "retention.keep_for"},
      {R"({"keep_for":"soon"})", "retention.keep_for"},
      {R"({"keep":"7d"})", "retention.keep"},
      {R"(7)", "retention"},
  };
  for (auto& c : cases) {
    auto body = R"({"name":"r","command":"true","retention":)" + c.retention + "}";
    auto r = http_call(port, "POST", "/api/v1/tasks", body);
    EXPECT_EQ(r.status, 400u) << c.retention << ": " << r.body;
    auto v = parse(r);
    auto* e = v.is_object() ? v.as_object().if_contains("error") : nullptr;
    ASSERT_TRUE(e && e->is_object()) << r.body;
    EXPECT_EQ(str(e->as_object(), "field"), c.field) << c.retention << ": " << r.body;
  }
  auto list = http_call(port, "GET", "/api/v1/tasks");
  ASSERT_EQ(list.status, 200u);
  EXPECT_TRUE(parse(list).as_object().at("items").as_array().empty())
      << "a refused task was created: " << list.body;
}

TEST(retention, every_member_removes_the_same_runs) {
  temp_dir dir;
  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  auto id = create_task(g.port(leader),
                        R"({"name":"keep2","command":"true","retention":{"keep_runs":2}})");
  ASSERT_NE(id, 0) << g.dump();
  auto r = http_call(g.port(leader), "POST", "/api/v1/tasks/" + std::to_string(id) + "/runs",
                     payloads_body(6));
  ASSERT_EQ(r.status, 202u) << r.body;
  auto first = std::string(parse(r).as_object().at("instance_ids").as_array()[0].as_string());

  std::vector<std::pair<std::string, std::string>> on_leader;
  ASSERT_TRUE(await_succeeded(g.port(leader), id, 2, on_leader, 60s))
      << on_leader.size() << " runs left on the leader\n" << g.dump();
  for (size_t m = 0; m < 3; ++m) {
    std::vector<std::pair<std::string, std::string>> here;
    EXPECT_TRUE(eventually(
        [&] {
          auto runs = runs_of(g.port(m), id);
          if (!runs) return false;
          here = *runs;
          return here == on_leader;
        },
        20s))
        << "member " << m << " holds " << here.size() << " runs";
    EXPECT_EQ(code_404(g.port(m), "/api/v1/instances/" + first), "gone") << "member " << m;
  }
}

// A node SIGKILLed while its sweeps remove runs, four times over: a prune is
// one write (and replayed from the log when it did not land), so after each
// restart no run is half removed, and in the end exactly the newest runs stay,
// every other answers `gone`, and the state counts agree with what is listed.
// The sweep runs every 100 ms here (the flag under test: at the default 10 s
// the kills would meet few prunes); runs are enqueued all along, so the node
// prunes while it is killed.
TEST(retention, a_node_killed_while_it_prunes_keeps_exactly_the_newest_runs) {
  temp_dir dir;
  const auto data = dir.path() + "/data";
  const std::vector<std::string> args{"--retention-interval", "100ms"};
  std::mt19937 rng(std::random_device{}());
  int64_t id = 0;
  std::vector<std::string> known;  // every run id a 202 answered
  for (int life = 0; life < 4; ++life) {
    node_process node(data, args);
    ASSERT_TRUE(node.running());
    auto port = node.http_port();
    ASSERT_TRUE(await_ready(port, 30s)) << tail(node.log());
    if (id == 0) {
      id = create_task(port, R"({"name":"keep5","command":"true","retention":{"keep_runs":5}})");
      ASSERT_NE(id, 0);
    }
    // Enqueue until this life has pruned, and a random while longer.
    auto extra = std::chrono::milliseconds(rng() % 400);
    std::optional<std::chrono::steady_clock::time_point> pruned_at;
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
      auto ids = enqueue(port, id, 100);
      known.insert(known.end(), ids.begin(), ids.end());
      if (!pruned_at && metric(port, "scheduler_runs_pruned_total") > 0)
        pruned_at = std::chrono::steady_clock::now();
      if (pruned_at && std::chrono::steady_clock::now() - *pruned_at >= extra) break;
      std::this_thread::sleep_for(20ms);
    }
    ASSERT_TRUE(pruned_at) << "life " << life << " pruned nothing\n" << tail(node.log());
    node.stop(SIGKILL);
  }
  node_process node(data, args);
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  ASSERT_TRUE(await_ready(port, 30s)) << tail(node.log());
  // The newest five: runs enqueued now, once every earlier one has ended.
  auto newest = enqueue(port, id, 5);
  ASSERT_EQ(newest.size(), 5u);
  std::vector<std::pair<std::string, std::string>> kept;
  ASSERT_TRUE(await_succeeded(port, id, 5, kept, 90s))
      << kept.size() << " runs left\n" << tail(node.log());
  std::set<std::string> kept_ids;
  for (auto& [run, state] : kept) kept_ids.insert(run);
  EXPECT_EQ(kept_ids, std::set<std::string>(newest.begin(), newest.end()));
  ASSERT_GT(known.size(), 400u);
  for (size_t k = 0; k < known.size(); k += 7)  // a sample: every read is a request
    EXPECT_EQ(code_404(port, "/api/v1/instances/" + known[k]), "gone") << known[k];
  // The counts are the state's, kept across the kills: exactly what is listed.
  EXPECT_EQ(metric(port, "scheduler_instances{state=\"success\"}"), 5) << tail(node.log());
  for (auto* s : {"pending", "dispatched", "running", "failed", "timed_out"})
    EXPECT_EQ(metric(port, std::string("scheduler_instances{state=\"") + s + "\"}"), 0) << s;
}

TEST(retention, the_cluster_defaults_apply_to_a_task_that_sets_none) {
  temp_dir dir;
  node_process node(dir.path() + "/data", {"--retention-keep-runs", "2"});
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto plain = create_task(port, R"({"name":"plain","command":"true"})");
  auto own = create_task(port, R"({"name":"own","command":"true","retention":{"keep_runs":4}})");
  ASSERT_NE(plain, 0);
  ASSERT_NE(own, 0);
  for (auto id : {plain, own}) {
    auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/runs",
                       payloads_body(6));
    ASSERT_EQ(r.status, 202u) << r.body;
  }
  std::vector<std::pair<std::string, std::string>> a, b;
  EXPECT_TRUE(eventually(
      [&] {
        auto x = runs_of(port, plain);
        auto y = runs_of(port, own);
        if (!x || !y) return false;
        a = *x;
        b = *y;
        return all_succeeded(a, 2) && all_succeeded(b, 4);
      },
      60s))
      << a.size() << " and " << b.size() << " runs left\n" << tail(node.log());
  auto kept = http_call(port, "GET", "/api/v1/instances/" + run_id(plain, a, 0));
  EXPECT_EQ(kept.status, 200u) << kept.body;
}

TEST(retention, a_bad_default_refuses_to_start) {
  temp_dir dir;
  for (auto args : std::vector<std::vector<std::string>>{{"--retention-keep-for", "500ms"},
                                                         {"--retention-keep-for", "forever"},
                                                         {"--retention-keep-runs", "10000001"},
                                                         {"--retention-interval", "1ms"}}) {
    std::vector<std::string> cmd{AISCHED_BINARY, "--data-dir", dir.path() + "/data", "--http-addr",
                                 "127.0.0.1:0", "--cluster-addr", "127.0.0.1:0"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    auto r = run_command(cmd, 20s);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find(args[0]), std::string::npos) << r.err;
  }
}
