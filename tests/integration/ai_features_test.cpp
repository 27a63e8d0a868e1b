// The AI structured features on a real single node without any LLM: runs made
// to fail for real (missing command, timeout, SIGKILL, SIGKILL under a memory
// cap, an HTTP call to a closed loopback port) get their cause named by the
// rule engine, and every AI feature route answers 200 with its computed facts
// and `llm_not_configured`. Each test starts its own node and polls.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <set>
#include <string>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

/// Triggers task `id` and waits for its run to end; returns the run.
json::object run_to_end(uint16_t port, int64_t id) {
  auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger");
  if (r.status != 201) {
    ADD_FAILURE() << "trigger failed (" << r.status << "): " << r.body;
    return {};
  }
  auto inst = std::string(parse(r).at("instances").at(0).at("id").as_string());
  json::object last;
  bool ended = eventually(
      [&] {
        auto g = http_call(port, "GET", "/api/v1/instances/" + inst);
        if (g.status != 200) return false;
        last = parse(g).as_object();
        auto s = str(last, "state");
        return s == "success" || s == "failed" || s == "timed_out" || s == "cancelled";
      },
      30s);
  EXPECT_TRUE(ended) << "run " << inst << " did not end: " << json::serialize(last);
  return last;
}

json::object get_json(uint16_t port, const std::string& target, unsigned want = 200,
                      const std::string& method = "GET", const std::string& body = "") {
  auto r = http_call(port, method, target, body, 30s);
  EXPECT_EQ(r.status, want) << method << " " << target << ": " << r.body;
  auto v = parse(r);
  return v.is_object() ? v.as_object() : json::object{};
}

bool llm_marker(const json::object& o) {
  auto* m = o.if_contains("llm_not_configured");
  return m && m->is_bool() && m->as_bool();
}

class ai_features : public ::testing::Test {
 protected:
  void SetUp() override { node_ = std::make_unique<node_process>(dir_.path() + "/data"); }
  uint16_t port() const { return node_->http_port(); }
  std::string log() const { return tail(node_->log()); }

  /// Creates `body` as a task, runs it once, and returns the analysis of the run.
  json::object analysis_of(const std::string& body, const std::string& expected_state) {
    auto id = create_task(port(), body);
    if (!id) return {};
    auto run = run_to_end(port(), id);
    EXPECT_EQ(str(run, "state"), expected_state) << json::serialize(run);
    auto a = get_json(port(), "/api/v1/instances/" + str(run, "id") + "/analysis");
    EXPECT_EQ(str(a, "instance_id"), str(run, "id"));
    EXPECT_EQ(str(a, "source"), "rules");
    EXPECT_TRUE(llm_marker(a)) << json::serialize(a);
    return a;
  }

  static std::string cause(const json::object& a) {
    auto* c = a.if_contains("categories");
    if (!c || !c->is_array() || c->as_array().empty()) return "";
    return std::string(c->as_array().at(0).as_string());
  }

  temp_dir dir_;
  std::unique_ptr<node_process> node_;
};

}  // namespace

TEST_F(ai_features, rules_name_the_cause_of_real_failures) {
  ASSERT_TRUE(node_->running());
  auto missing = analysis_of(R"({"name":"missing","command":"nonexistent_cmd_aisched --x"})",
                             "failed");
  EXPECT_EQ(cause(missing), "command_not_found") << json::serialize(missing);
  EXPECT_NE(str(missing, "root_cause").find("nonexistent_cmd_aisched"), std::string::npos)
      << json::serialize(missing);
  EXPECT_EQ(str(missing, "severity"), "high");

  auto exit127 = analysis_of(R"({"name":"exit127","command":"exit 127"})", "failed");
  EXPECT_EQ(cause(exit127), "command_not_found");

  auto slow = analysis_of(R"({"name":"slow","command":"exec sleep 30","timeout":"500ms"})",
                          "timed_out");
  EXPECT_EQ(cause(slow), "timeout") << json::serialize(slow);

  auto killed = analysis_of(R"({"name":"killed","command":"kill -9 $$"})", "failed");
  EXPECT_EQ(cause(killed), "killed") << json::serialize(killed);

  auto oom = analysis_of(R"({"name":"capped","command":"kill -9 $$","memory_mb":256})", "failed");
  EXPECT_EQ(cause(oom), "out_of_memory") << json::serialize(oom);

  auto closed = free_port();
  auto refused = analysis_of(R"({"name":"refused","kind":"http","http":{"url":"http://127.0.0.1:)" +
                                 std::to_string(closed) + R"(/health"}})",
                             "failed");
  EXPECT_EQ(cause(refused), "connection_refused") << json::serialize(refused);

  auto ok = analysis_of(R"({"name":"fine","command":"true"})", "success");
  EXPECT_EQ(cause(ok), "none");
}

TEST_F(ai_features, analyze_stores_the_analysis_and_get_serves_it) {
  ASSERT_TRUE(node_->running());
  auto id = create_task(port(), R"({"name":"missing","command":"nonexistent_cmd_aisched"})");
  auto run = run_to_end(port(), id);
  auto inst = str(run, "id");
  auto before = get_json(port(), "/api/v1/instances/" + inst + "/analysis");
  EXPECT_FALSE(before.contains("analyzed_at")) << "computed on read, not stored yet";
  auto made = get_json(port(), "/api/v1/ai/analyze/" + inst, 200, "POST");
  EXPECT_EQ(cause(made), "command_not_found");
  EXPECT_TRUE(llm_marker(made));
  ASSERT_TRUE(made.contains("analyzed_at")) << json::serialize(made);
  auto after = get_json(port(), "/api/v1/instances/" + inst + "/analysis");
  EXPECT_EQ(after.at("analyzed_at"), made.at("analyzed_at"));

  get_json(port(), "/api/v1/instances/999999-1000-0/analysis", 404);
  get_json(port(), "/api/v1/ai/analyze/999999-1000-0", 404, "POST");
  get_json(port(), "/api/v1/ai/analyze/" + inst, 405, "GET");
}

TEST_F(ai_features, every_feature_route_answers_with_facts_without_an_llm) {
  ASSERT_TRUE(node_->running());
  auto good = create_task(port(), R"({"name":"quick","command":"echo hi"})");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(str(run_to_end(port(), good), "state"), "success");
  auto bad = create_task(port(), R"({"name":"broken","command":"exit 3"})");
  EXPECT_EQ(str(run_to_end(port(), bad), "state"), "failed");

  // Advice: the facts of the last hour and the rules' recommendations.
  auto advice = get_json(port(), "/api/v1/ai/advice");
  EXPECT_TRUE(llm_marker(advice)) << json::serialize(advice);
  EXPECT_EQ(str(advice, "source"), "rules");
  auto& facts = advice.at("facts").as_object();
  EXPECT_EQ(num(facts, "runs_last_hour"), 4) << json::serialize(facts);
  EXPECT_EQ(num(facts, "failures_last_hour"), 1);
  EXPECT_EQ(facts.at("workers").as_array().size(), 1u);
  EXPECT_EQ(str(facts, "backpressure"), "green");
  EXPECT_TRUE(advice.at("recommendations").is_array());

  // Duration: statistics of the three successful runs.
  auto d = get_json(port(), "/api/v1/ai/tasks/" + std::to_string(good) + "/duration");
  EXPECT_TRUE(llm_marker(d)) << json::serialize(d);
  EXPECT_EQ(num(d, "count"), 3);
  for (auto k : {"mean_ms", "p50_ms", "p95_ms", "max_ms"}) EXPECT_TRUE(d.at(k).is_number()) << k;
  EXPECT_LE(d.at("p50_ms").to_number<double>(), d.at("max_ms").to_number<double>());
  EXPECT_EQ(str(d, "trend_source"), "regression");
  EXPECT_TRUE(std::set<std::string>({"rising", "stable", "falling"}).count(str(d, "trend")));
  get_json(port(), "/api/v1/ai/tasks/999999/duration", 404);
  get_json(port(), "/api/v1/ai/tasks/abc/duration", 400);

  // Trends: twelve slices over the window, the runs above in them.
  auto t = get_json(port(), "/api/v1/ai/trends?window=24h");
  EXPECT_TRUE(llm_marker(t)) << json::serialize(t);
  EXPECT_EQ(t.at("slices").as_array().size(), 12u);
  EXPECT_EQ(num(t, "runs"), 4);
  EXPECT_EQ(num(t, "failures"), 1);
  EXPECT_EQ(str(t, "load_source"), "run_time");
  get_json(port(), "/api/v1/ai/trends?window=5m", 400);
  get_json(port(), "/api/v1/ai/trends?window=soon", 400);

  // Task draft: validated like a create, never created.
  auto tasks_before = get_json(port(), "/api/v1/tasks").at("items").as_array().size();
  auto draft = get_json(port(), "/api/v1/ai/task-draft", 200, "POST",
                        R"({"text":"every 5 minutes run /usr/bin/env true"})");
  EXPECT_TRUE(llm_marker(draft)) << json::serialize(draft);
  EXPECT_TRUE(draft.at("valid").as_bool()) << json::serialize(draft);
  EXPECT_FALSE(draft.at("created").as_bool());
  EXPECT_EQ(str(draft.at("task").as_object(), "schedule"), "@every 5m");
  EXPECT_EQ(str(draft.at("task").as_object(), "command"), "/usr/bin/env true");
  EXPECT_EQ(draft.at("task").at("next_fire_times").as_array().size(), 5u);
  auto daily = get_json(port(), "/api/v1/ai/task-draft", 200, "POST",
                        R"({"text":"run backup.sh daily at 3am"})");
  EXPECT_EQ(str(daily.at("task").as_object(), "schedule"), "0 3 * * *");
  auto vague = get_json(port(), "/api/v1/ai/task-draft", 200, "POST",
                        R"({"text":"make it faster"})");
  EXPECT_FALSE(vague.at("valid").as_bool());
  EXPECT_FALSE(str(vague, "notes").empty());
  get_json(port(), "/api/v1/ai/task-draft", 400, "POST", R"({"words":"x"})");
  EXPECT_EQ(get_json(port(), "/api/v1/tasks").at("items").as_array().size(), tasks_before);
}
