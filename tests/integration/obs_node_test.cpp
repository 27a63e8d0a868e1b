// Observability on a real single `aisched` node: a run's trace id travels from
// fire to result (log lines, TRACE_ID, traceparent), the log level changes at
// runtime, final failures POST alerts to a webhook (retried), and the leader's
// worker load history is queryable. Each test owns its node and receivers.
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/http_receiver.hpp"
#include "support/node_process.hpp"
#include "support/prometheus_text.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

/// Triggers task `id` and returns the id of its (first) run.
std::string trigger(uint16_t port, int64_t id) {
  auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger");
  EXPECT_EQ(r.status, 201u) << r.body;
  if (r.status != 201) return "";
  return str(parse(r).at("instances").as_array().at(0).as_object(), "id");
}

/// Waits until run `id` is in a final state; returns its JSON (empty on timeout).
json::object await_end(uint16_t port, const std::string& id) {
  json::object out;
  eventually(
      [&] {
        auto r = http_call(port, "GET", "/api/v1/instances/" + id);
        if (r.status != 200) return false;
        auto o = parse(r).as_object();
        auto s = str(o, "state");
        if (s != "success" && s != "failed" && s != "timed_out" && s != "cancelled") return false;
        out = o;
        return true;
      },
      30s);
  return out;
}

/// The JSON log lines of a node that mention `needle`.
std::vector<json::object> log_lines(const std::string& log, const std::string& needle) {
  std::vector<json::object> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) == std::string::npos) continue;
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (!ec && v.is_object()) out.push_back(v.as_object());
  }
  return out;
}

const std::regex trace_id_form("[0-9a-f]{32}");

}  // namespace

TEST(obs_node, a_runs_trace_id_reaches_its_log_lines_and_its_environment) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto id = create_task(port, R"({"name":"traced","kind":"shell","command":"echo trace=$TRACE_ID"})");
  auto run = trigger(port, id);
  auto x = await_end(port, run);
  ASSERT_EQ(str(x, "state"), "success") << tail(node.log());
  auto trace = str(x, "trace_id");
  EXPECT_TRUE(std::regex_match(trace, trace_id_form)) << trace;
  EXPECT_NE(str(x, "output").find("trace=" + trace), std::string::npos) << str(x, "output");

  // fire (trigger), dispatch (router), start (worker), result (worker_proxy).
  std::map<std::string, json::object> by_msg;
  ASSERT_TRUE(eventually([&] {
    for (auto& l : log_lines(node.log(), run)) by_msg[str(l, "msg")] = l;
    return by_msg.count("run result") > 0;
  })) << tail(node.log());
  for (auto [msg, actor] : std::vector<std::pair<std::string, std::string>>{
           {"run fired", "trigger"},
           {"run dispatched", "router"},
           {"run started", "worker"},
           {"run result", "worker_proxy"}}) {
    ASSERT_TRUE(by_msg.count(msg)) << "no '" << msg << "' line\n" << tail(node.log());
    auto& l = by_msg[msg];
    EXPECT_EQ(str(l, "instance_id"), run) << msg;
    EXPECT_EQ(str(l, "task_id"), std::to_string(id)) << msg;
    EXPECT_EQ(str(l, "trace_id"), trace) << msg;
    EXPECT_EQ(str(l, "actor"), actor) << msg;
    EXPECT_FALSE(str(l, "node").empty()) << msg;
  }
  EXPECT_EQ(str(by_msg["run result"], "state"), "success");
}

TEST(obs_node, an_http_task_sends_a_w3c_traceparent_with_the_runs_trace_id) {
  http_receiver target;
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto id = create_task(port, R"({"name":"traced-http","kind":"http","http":{"method":"GET","url":")" +
                                  target.url("/ping") + R"("}})");
  auto x = await_end(port, trigger(port, id));
  ASSERT_EQ(str(x, "state"), "success") << tail(node.log());
  auto got = target.requests();
  ASSERT_EQ(got.size(), 1u);
  auto tp = got[0].header("traceparent");
  ASSERT_TRUE(tp) << got[0].head;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(*tp, m, std::regex("00-([0-9a-f]{32})-([0-9a-f]{16})-01"))) << *tp;
  EXPECT_EQ(m[1].str(), str(x, "trace_id"));
  EXPECT_NE(m[2].str(), std::string(16, '0'));
}

TEST(obs_node, the_execute_call_to_an_external_worker_carries_the_traceparent) {
  http_receiver worker({202});
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  ASSERT_TRUE(await_ready(port)) << http_call(port, "GET", "/readyz").body;
  auto reg = http_call(port, "POST", "/api/v1/workers",
                       R"({"id":"ext-1","callback_url":")" + worker.url("") +
                           R"(","labels":{"pool":"ext"},"max_load":2})");
  ASSERT_EQ(reg.status / 100, 2u) << reg.body;
  auto id = create_task(port, R"({"name":"remote","kind":"shell","command":"true","labels":{"pool":"ext"}})");
  auto run = trigger(port, id);
  ASSERT_TRUE(eventually([&] { return !worker.requests().empty(); }, 20s)) << tail(node.log());
  auto got = worker.requests().front();
  EXPECT_EQ(got.head.rfind("POST /internal/tasks/execute ", 0), 0u) << got.head;
  auto body = json::parse(got.body).as_object();
  EXPECT_EQ(str(body, "instance_id"), run);
  auto trace = str(body, "trace_id");
  EXPECT_TRUE(std::regex_match(trace, trace_id_form)) << trace;
  auto tp = got.header("traceparent");
  ASSERT_TRUE(tp) << got.head;
  EXPECT_TRUE(std::regex_match(*tp, std::regex("00-" + trace + "-[0-9a-f]{16}-01"))) << *tp;
}

TEST(obs_node, the_log_level_changes_at_runtime) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto level = [&] {
    auto r = http_call(port, "GET", "/api/v1/admin/log-level");
    EXPECT_EQ(r.status, 200u) << r.body;
    return str(parse(r).as_object(), "level");
  };
  EXPECT_EQ(level(), "info");
  auto bad = http_call(port, "PUT", "/api/v1/admin/log-level", R"({"level":"loud"})");
  EXPECT_EQ(bad.status, 400u) << bad.body;
  EXPECT_EQ(http_call(port, "PUT", "/api/v1/admin/log-level", "[]").status, 400u);
  EXPECT_EQ(level(), "info");

  // At warn, a successful run writes none of its info lines.
  auto put = http_call(port, "PUT", "/api/v1/admin/log-level", R"({"level":"warn"})");
  ASSERT_EQ(put.status, 200u) << put.body;
  EXPECT_EQ(str(parse(put).as_object(), "level"), "warn");
  EXPECT_EQ(level(), "warn");
  auto id = create_task(port, R"({"name":"quiet","kind":"shell","command":"true"})");
  auto quiet = trigger(port, id);
  ASSERT_EQ(str(await_end(port, quiet), "state"), "success");
  EXPECT_TRUE(log_lines(node.log(), quiet).empty()) << tail(node.log());

  // Back at info, the next run is logged again: no restart, no signal.
  ASSERT_EQ(http_call(port, "PUT", "/api/v1/admin/log-level", R"({"level":"info"})").status, 200u);
  auto loud = trigger(port, id);
  ASSERT_EQ(str(await_end(port, loud), "state"), "success");
  EXPECT_TRUE(eventually([&] { return !log_lines(node.log(), loud).empty(); }))
      << tail(node.log());
}

TEST(obs_node, a_final_failure_posts_one_alert_retried_until_the_webhook_accepts) {
  http_receiver hook({500, 200});  // refuses the first POST
  temp_dir dir;
  node_process node(dir.path() + "/data", {"--alert-webhook", hook.url("/alerts")});
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  // Two attempts: the first failure is retried (no alert), the second is final.
  auto id = create_task(port, R"({"name":"doomed","kind":"shell","command":"exit 3",
      "retry":{"policy":"fixed","interval":"100ms","max_attempts":2}})");
  auto run = trigger(port, id);
  auto x = await_end(port, run);
  ASSERT_EQ(str(x, "state"), "failed") << tail(node.log());
  ASSERT_TRUE(eventually([&] { return hook.requests().size() >= 2; }, 20s))
      << hook.requests().size() << " POSTs\n" << tail(node.log());
  auto got = hook.requests();
  ASSERT_EQ(got.size(), 2u) << "the refused POST is retried once, then accepted";
  EXPECT_EQ(got[0].body, got[1].body) << "a retry sends the same alert";
  EXPECT_EQ(got[1].head.rfind("POST /alerts ", 0), 0u) << got[1].head;
  EXPECT_EQ(got[1].header("idempotency-key").value_or(""), run + "#2");
  auto a = json::parse(got[1].body).as_object();
  EXPECT_EQ(str(a, "type"), "run_failed");
  EXPECT_EQ(num(a, "task_id"), id);
  EXPECT_EQ(str(a, "task_name"), "doomed");
  EXPECT_EQ(str(a, "instance_id"), run);
  EXPECT_EQ(str(a, "state"), "failed");
  EXPECT_EQ(num(a, "attempt"), 2);
  EXPECT_EQ(num(a, "exit_code"), 3);
  EXPECT_TRUE(a.contains("error"));
  EXPECT_EQ(str(a, "trace_id"), str(x, "trace_id"));
  EXPECT_EQ(rfc3339_ms(str(a, "finished_at")), rfc3339_ms(str(x, "finished_at")));
  EXPECT_EQ(str(a, "node"), "n1");

  auto m = parse_prometheus_text(http_call(port, "GET", "/metrics").body);
  EXPECT_EQ(m.value("alerts_sent_total", {{"result", "ok"}}).value_or(-1), 1);
  EXPECT_EQ(m.value("alerts_sent_total", {{"result", "retried"}}).value_or(-1), 1);
  EXPECT_EQ(m.value("alerts_sent_total", {{"result", "failed"}}).value_or(-1), 0);

  // A success alerts nobody. The alerter handles commits in order, so the alert
  // of a later final failure is the barrier: once it arrived, a wrong alert for
  // the success would have been sent too.
  auto fine = create_task(port, R"({"name":"fine","kind":"shell","command":"true"})");
  ASSERT_EQ(str(await_end(port, trigger(port, fine)), "state"), "success");
  auto last = create_task(port, R"({"name":"last","kind":"shell","command":"exit 4"})");
  auto last_run = trigger(port, last);
  ASSERT_EQ(str(await_end(port, last_run), "state"), "failed") << tail(node.log());
  auto alerted = [&](const std::string& instance) {
    for (auto& q : hook.requests())
      if (str(json::parse(q.body).as_object(), "instance_id") == instance) return true;
    return false;
  };
  ASSERT_TRUE(eventually([&] { return alerted(last_run); }, 20s)) << tail(node.log());
  for (auto& q : hook.requests())
    EXPECT_NE(str(json::parse(q.body).as_object(), "task_name"), "fine") << q.body;
  EXPECT_EQ(hook.requests().size(), 3u);
}

TEST(obs_node, worker_load_is_sampled_and_queryable_by_time_range) {
  temp_dir dir;
  node_process node(dir.path() + "/data", {"--load-sample-interval", "200ms", "--node-id", "lh1"});
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  json::array items;
  ASSERT_TRUE(eventually(
      [&] {
        auto r = http_call(port, "GET", "/api/v1/workers/lh1/load-history");
        if (r.status != 200) return false;
        items = parse(r).at("items").as_array();
        return items.size() >= 3;
      },
      20s))
      << tail(node.log());
  int64_t prev = 0;
  for (auto& v : items) {
    auto& s = v.as_object();
    auto at = rfc3339_ms(str(s, "at"));
    EXPECT_GT(at, prev) << "oldest first, one sample per round";
    prev = at;
    EXPECT_EQ(num(s, "max_load"), 64);  // the built-in worker's default slot count
    EXPECT_GE(num(s, "load"), 0);
    EXPECT_GE(num(s, "cpu_percent"), 0);
    EXPECT_GE(num(s, "memory_percent"), 0);
  }
  // The all-workers form, and a range that selects nothing.
  auto all = http_call(port, "GET", "/api/v1/workers/load-history");
  ASSERT_EQ(all.status, 200u) << all.body;
  EXPECT_GE(parse(all).at("workers").at("lh1").as_array().size(), items.size());
  auto future = http_call(port, "GET",
                          "/api/v1/workers/lh1/load-history?since=2099-01-01T00:00:00Z&until=2099-01-02T00:00:00Z");
  ASSERT_EQ(future.status, 200u) << future.body;
  EXPECT_TRUE(parse(future).at("items").as_array().empty());
  auto first = str(items.front().as_object(), "at");
  auto one = http_call(port, "GET", "/api/v1/workers/lh1/load-history?since=" + first + "&until=" + first);
  ASSERT_EQ(one.status, 200u) << one.body;
  EXPECT_EQ(parse(one).at("items").as_array().size(), 1u);
  EXPECT_EQ(http_call(port, "GET", "/api/v1/workers/lh1/load-history?since=yesterday").status, 400u);
  EXPECT_EQ(http_call(port, "GET", "/api/v1/workers/nobody/load-history").status, 404u);

  // Durable: replicated state, there again after a restart.
  ASSERT_EQ(node.stop(SIGTERM), 0);
  node_process again(dir.path() + "/data", {"--load-sample-interval", "1h", "--node-id", "lh1"});
  ASSERT_TRUE(again.running());
  auto after = http_call(again.http_port(), "GET", "/api/v1/workers/lh1/load-history");
  ASSERT_EQ(after.status, 200u) << after.body;
  EXPECT_GE(parse(after).at("items").as_array().size(), items.size());
}
