// The AI structured features with a model: a scripted OpenAI-compatible server
// on loopback (tests/support/scripted_llm) stands in for the LLM. A run that
// fails for the last time is analysed automatically by the model (source
// "llm"), the stored analysis is served after a node restart, and judgements
// that are not the expected JSON fall back to the facts with `llm_error` and
// count as ai_requests_total{result="invalid"}, not "ok".
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <csignal>
#include <string>

#include "support/node_process.hpp"
#include "support/prometheus_text.hpp"
#include "support/scripted_llm.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

const char* analysis_answer =
    "Sure, here is the analysis:\n```json\n{\"summary\": \"The backup tool is not installed\", "
    "\"severity\": \"critical\", \"categories\": [\"command_not_found\", \"missing_dependency\"], "
    "\"root_cause\": \"pg_dump_x is not on the worker's PATH\", \"fix\": \"install it\", "
    "\"confidence\": 0.8}\n```\nAnything else?";

const char* advice_answer =
    R"({"summary": "One task keeps failing", "recommendations": [{"type": "config", )"
    R"("priority": "high", "target": "task:1", "reason": "it failed", "action": "fix it"}]})";

json::object get_json(uint16_t port, const std::string& target, const std::string& method = "GET",
                      const std::string& body = "") {
  auto r = http_call(port, method, target, body, 30s);
  EXPECT_EQ(r.status, 200u) << method << " " << target << ": " << r.body;
  auto v = parse(r);
  return v.is_object() ? v.as_object() : json::object{};
}

std::vector<std::string> llm_args(const scripted_llm& llm) {
  return {"--llm-endpoint", llm.endpoint(), "--llm-model", "scripted", "--llm-timeout", "10"};
}

}  // namespace

TEST(ai_features_llm, final_failure_is_analysed_by_the_model_and_kept_across_a_restart) {
  temp_dir dir;
  json::array script{scripted_llm::say(analysis_answer), scripted_llm::say(advice_answer),
                     scripted_llm::say("I would rather not answer in JSON.")};
  scripted_llm llm(dir.path(), script);
  auto data = dir.path() + "/data";
  std::string inst;
  {
    node_process node(data, llm_args(llm));
    ASSERT_TRUE(node.running());
    auto port = node.http_port();
    auto created = http_call(port, "POST", "/api/v1/tasks",
                             R"({"name":"backup","command":"pg_dump_x shop"})");
    ASSERT_EQ(created.status, 201u) << created.body;
    auto id = num(parse(created).as_object(), "id");
    auto fired = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger");
    ASSERT_EQ(fired.status, 201u) << fired.body;
    inst = std::string(parse(fired).at("instances").at(0).at("id").as_string());
    json::object a;
    ASSERT_TRUE(eventually(
        [&] {
          auto r = http_call(port, "GET", "/api/v1/instances/" + inst + "/analysis");
          if (r.status != 200) return false;
          a = parse(r).as_object();
          return str(a, "source") == "llm";
        },
        30s))
        << json::serialize(a) << "\n" << tail(node.log());
    EXPECT_EQ(str(a, "summary"), "The backup tool is not installed");
    EXPECT_EQ(str(a, "severity"), "critical");
    EXPECT_FALSE(a.contains("llm_not_configured"));
    auto sent = llm.requests();
    ASSERT_GE(sent.size(), 1u);
    auto body = json::serialize(sent[0].at("body"));
    EXPECT_NE(body.find("pg_dump_x"), std::string::npos) << "the facts reach the model";
    EXPECT_NE(body.find("command_not_found"), std::string::npos) << "and the rules' reading";

    // Advice: the model's recommendations, the rules' kept beside them.
    auto advice = get_json(port, "/api/v1/ai/advice");
    EXPECT_EQ(str(advice, "source"), "llm") << json::serialize(advice);
    EXPECT_EQ(str(advice, "summary"), "One task keeps failing");
    EXPECT_TRUE(advice.contains("rule_recommendations"));
    EXPECT_EQ(num(advice.at("facts").as_object(), "failures_last_hour"), 1);

    // Prose instead of JSON: the facts and the rules' reading, with the reason.
    auto trends = get_json(port, "/api/v1/ai/trends?window=1h");
    EXPECT_EQ(str(trends, "source"), "rules") << json::serialize(trends);
    EXPECT_NE(str(trends, "llm_error").find("rejected"), std::string::npos);
    EXPECT_EQ(num(trends, "failures"), 1);

    // The rejected answer is counted as invalid, the used ones as ok (issue 43 item 8).
    auto metrics = parse_prometheus_text(http_call(port, "GET", "/metrics").body);
    auto requests = [&](const char* feature, const char* result) {
      return metrics.value("ai_requests_total", {{"feature", feature}, {"result", result}});
    };
    EXPECT_EQ(requests("trends", "invalid"), 1.0);
    EXPECT_EQ(requests("trends", "ok"), 0.0);
    EXPECT_EQ(requests("analysis", "ok"), 1.0);
    EXPECT_EQ(requests("analysis", "invalid"), 0.0);
    EXPECT_EQ(requests("advice", "ok"), 1.0);

    EXPECT_EQ(node.stop(SIGTERM), 0);
  }
  // Restarted without a model: the stored analysis is still the model's.
  node_process again(data);
  ASSERT_TRUE(again.running());
  auto a = get_json(again.http_port(), "/api/v1/instances/" + inst + "/analysis");
  EXPECT_EQ(str(a, "source"), "llm") << json::serialize(a);
  EXPECT_EQ(str(a, "summary"), "The backup tool is not installed");
}

TEST(ai_features_llm, model_failure_keeps_the_facts) {
  temp_dir dir;
  json::array script{scripted_llm::status(500), scripted_llm::status(500),
                     scripted_llm::status(500), scripted_llm::status(500)};
  scripted_llm llm(dir.path(), script);
  node_process node(dir.path() + "/data", llm_args(llm));
  ASSERT_TRUE(node.running());
  auto d = get_json(node.http_port(), "/api/v1/ai/task-draft", "POST",
                    R"({"text":"every 10 minutes run /usr/bin/env true"})");
  EXPECT_EQ(str(d, "source"), "rules") << json::serialize(d);
  EXPECT_TRUE(d.at("valid").as_bool());
  EXPECT_NE(str(d, "llm_error").find("model unavailable"), std::string::npos);
}
