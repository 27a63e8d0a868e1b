// DAG chains and trigger payloads on a real `aisched` node at default flags
// (issue 43, items 1 and 3): an upstream's success fires its dependents that
// have no schedule of their own, transitively (a chain, a diamond whose join
// runs once), a failure in the middle stops the chain and /api/v1/dag and the
// log say why; a manual trigger's payload is substituted into its run, and a
// body the trigger cannot take is a 400 naming the field. Free loopback ports,
// temporary dirs, polling with deadlines.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

/// The runs of task `id`, newest first as the API lists them (empty on an error).
std::vector<json::object> runs_of(uint16_t port, int64_t id) {
  std::vector<json::object> out;
  auto r = http_call(port, "GET", "/api/v1/instances?task_id=" + std::to_string(id) + "&limit=50");
  if (r.status != 200) return out;
  auto v = parse(r);
  for (auto& x : v.as_object().at("items").as_array()) out.push_back(x.as_object());
  return out;
}

bool ended(const json::object& x) {
  auto s = str(x, "state");
  return s == "success" || s == "failed" || s == "timed_out" || s == "cancelled";
}

/// Polls until task `id` has a run that ended; returns it (an empty object on timeout).
json::object await_ended_run(uint16_t port, int64_t id, std::chrono::milliseconds timeout) {
  json::object last;
  eventually(
      [&] {
        for (auto& x : runs_of(port, id))
          if (ended(x)) {
            last = x;
            return true;
          }
        return false;
      },
      timeout);
  return last;
}

std::string task_body(const std::string& name, const std::string& command,
                      const std::vector<int64_t>& depends_on = {}) {
  json::object t{{"name", name}, {"command", command}};
  if (!depends_on.empty()) {
    json::array deps;
    for (auto d : depends_on) deps.push_back(d);
    t["depends_on"] = std::move(deps);
  }
  return json::serialize(t);
}

std::string trigger_path(int64_t id) { return "/api/v1/tasks/" + std::to_string(id) + "/trigger"; }

std::string output_of(const json::object& x) {
  auto out = str(x, "output");
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

/// Checks that the run `later` started no earlier than the run `earlier` finished.
void expect_after(const json::object& later, const json::object& earlier) {
  auto started = time_ms(later.at("started_at"));
  auto finished = time_ms(earlier.at("finished_at"));
  EXPECT_GE(started, 0) << json::serialize(later);
  EXPECT_GE(finished, 0) << json::serialize(earlier);
  EXPECT_GE(started, finished) << str(later, "id") << " started before " << str(earlier, "id")
                               << " ended";
}

/// The node of task `id` in GET /api/v1/dag (an empty object if absent).
json::object dag_node(uint16_t port, int64_t id) {
  auto r = http_call(port, "GET", "/api/v1/dag");
  EXPECT_EQ(r.status, 200u) << r.body;
  auto v = parse(r);
  for (auto& n : v.as_object().at("nodes").as_array())
    if (num(n.as_object(), "id") == id) return n.as_object();
  return {};
}

}  // namespace

TEST(dag_chain, an_upstream_success_fires_an_unscheduled_chain_of_three) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto a = create_task(port, task_body("chain-a", "echo a"));
  auto b = create_task(port, task_body("chain-b", "echo b", {a}));
  auto c = create_task(port, task_body("chain-c", "echo c", {b}));
  ASSERT_TRUE(a && b && c);

  auto r = http_call(port, "POST", trigger_path(a), "");
  ASSERT_EQ(r.status, 201u) << r.body;
  auto ra = await_ended_run(port, a, 20s);
  auto rb = await_ended_run(port, b, 20s);
  auto rc = await_ended_run(port, c, 20s);
  ASSERT_EQ(str(ra, "state"), "success") << json::serialize(ra);
  ASSERT_EQ(str(rb, "state"), "success") << "B never ran after A succeeded\n" << tail(node.log());
  ASSERT_EQ(str(rc, "state"), "success") << "C never ran after B succeeded\n" << tail(node.log());
  EXPECT_EQ(output_of(rc), "c");
  expect_after(rb, ra);
  expect_after(rc, rb);

  std::this_thread::sleep_for(1500ms);  // nothing more fires on its own
  EXPECT_EQ(runs_of(port, b).size(), 1u);
  EXPECT_EQ(runs_of(port, c).size(), 1u);

  // A second success of A runs the chain again, once.
  ASSERT_EQ(http_call(port, "POST", trigger_path(a), "").status, 201u);
  EXPECT_TRUE(eventually(
      [&] {
        auto xs = runs_of(port, c);
        return xs.size() == 2 && ended(xs[0]) && ended(xs[1]);
      },
      20s))
      << "C did not run again after A's second success";
  EXPECT_EQ(runs_of(port, b).size(), 2u);
}

TEST(dag_chain, a_diamond_runs_its_join_once_after_both_branches) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto a = create_task(port, task_body("diamond-a", "echo a"));
  auto b = create_task(port, task_body("diamond-b", "sleep 0.2; echo b", {a}));
  auto c = create_task(port, task_body("diamond-c", "sleep 1.5; echo c", {a}));
  auto d = create_task(port, task_body("diamond-d", "echo d", {b, c}));
  ASSERT_TRUE(a && b && c && d);

  ASSERT_EQ(http_call(port, "POST", trigger_path(a), "").status, 201u);
  auto rd = await_ended_run(port, d, 30s);
  ASSERT_EQ(str(rd, "state"), "success") << "D never ran\n" << tail(node.log());
  auto rb = await_ended_run(port, b, 1s);
  auto rc = await_ended_run(port, c, 1s);
  EXPECT_EQ(str(rb, "state"), "success");
  EXPECT_EQ(str(rc, "state"), "success");
  expect_after(rd, rb);
  expect_after(rd, rc);  // the slower branch: D waited for it

  std::this_thread::sleep_for(2s);
  EXPECT_EQ(runs_of(port, d).size(), 1u) << "the join ran once per success of both branches";
  EXPECT_EQ(runs_of(port, b).size(), 1u);
  EXPECT_EQ(runs_of(port, c).size(), 1u);
}

TEST(dag_chain, a_failure_in_the_middle_stops_the_chain_and_says_why) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto a = create_task(port, task_body("stop-a", "echo a"));
  auto b = create_task(port, task_body("stop-b", "exit 3", {a}));
  auto c = create_task(port, task_body("stop-c", "echo c", {b}));
  ASSERT_TRUE(a && b && c);

  ASSERT_EQ(http_call(port, "POST", trigger_path(a), "").status, 201u);
  auto rb = await_ended_run(port, b, 20s);
  ASSERT_EQ(str(rb, "state"), "failed") << "B must run and fail\n" << tail(node.log());
  std::this_thread::sleep_for(2s);
  EXPECT_TRUE(runs_of(port, c).empty()) << "C ran though its upstream failed";

  // Why: C's node names B and the state of B's latest run; B's names nothing.
  auto nc = dag_node(port, c);
  auto* w = nc.if_contains("waiting_for");
  ASSERT_TRUE(w && w->is_array()) << json::serialize(nc);
  ASSERT_EQ(w->as_array().size(), 1u) << json::serialize(nc);
  auto& why = w->as_array()[0].as_object();
  EXPECT_EQ(num(why, "id"), b);
  EXPECT_EQ(str(why, "last_state"), "failed");
  auto nb = dag_node(port, b);
  auto* wb = nb.if_contains("waiting_for");
  ASSERT_TRUE(wb && wb->is_array()) << json::serialize(nb);
  EXPECT_TRUE(wb->as_array().empty()) << "A succeeded: " << json::serialize(nb);
  // And the log says it when it happens (the trigger actor, once it hears of B's end).
  EXPECT_TRUE(eventually([&] {
    return node.log().find("dag: an upstream run did not succeed") != std::string::npos;
  })) << tail(node.log());
}

TEST(trigger_payload, a_manual_trigger_substitutes_its_payload_into_the_run) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto id = create_task(port, task_body("greet", "echo to={{event.payload.to}}"));
  ASSERT_NE(id, 0);

  auto r = http_call(port, "POST", trigger_path(id), R"({"payload":{"to":"x; echo injected"}})");
  ASSERT_EQ(r.status, 201u) << r.body;
  auto answered = parse(r);
  ASSERT_EQ(answered.as_object().at("instances").as_array().size(), 1u) << r.body;
  auto run = await_ended_run(port, id, 20s);
  EXPECT_EQ(str(run, "state"), "success") << json::serialize(run);
  EXPECT_EQ(output_of(run), "to=x; echo injected") << "the payload was dropped or run as code";

  // Without a payload (no body, or {}) a trigger still runs the task.
  for (auto body : {"", "{}"}) {
    auto plain = http_call(port, "POST", trigger_path(id), body);
    EXPECT_EQ(plain.status, 201u) << "body '" << body << "': " << plain.body;
    std::this_thread::sleep_for(5ms);  // a new instant, a new run id
  }
}

TEST(trigger_payload, a_body_the_trigger_cannot_take_is_a_400_naming_the_field) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto up = create_task(port, task_body("up", "echo up"));
  auto id = create_task(port, task_body("plain", "echo {{event.payload.to}}"));
  auto down = create_task(port, task_body("down", "echo down", {up}));
  auto sharded = create_task(port, R"({"name":"sharded","kind":"noop","shards":3})");
  ASSERT_TRUE(up && id && down && sharded);

  struct bad_case {
    int64_t task;
    std::string body;
    std::string field;
  };
  std::vector<bad_case> cases{
      {id, R"({"payload":7})", "payload"},
      {id, R"({"payload":"x"})", "payload"},
      {id, R"({"payloads":[{"to":"x"}]})", "payloads"},
      {id, R"({"to":"x"})", "to"},
      {id, R"([{"to":"x"}])", "body"},
      {down, R"({"payload":{"to":"x"}})", "payload"},
      {sharded, R"({"payload":{"to":"x"}})", "payload"},
  };
  for (auto& c : cases) {
    auto r = http_call(port, "POST", trigger_path(c.task), c.body);
    EXPECT_EQ(r.status, 400u) << c.body << ": " << r.body;
    auto v = parse(r);
    auto* e = v.is_object() ? v.as_object().if_contains("error") : nullptr;
    ASSERT_TRUE(e && e->is_object()) << r.body;
    EXPECT_EQ(str(e->as_object(), "field"), c.field) << c.body << ": " << r.body;
  }
  for (auto t : {id, down, sharded})
    EXPECT_TRUE(runs_of(port, t).empty()) << "a refused trigger started a run of task " << t;
}
