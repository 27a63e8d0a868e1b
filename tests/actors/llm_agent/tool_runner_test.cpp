// Tool execution through a fake REST handler: the caller's Authorization and
// X-Aisched-Via reach every request, errors come back as the API's answer,
// retry_failed_instance asks for another attempt of the same run, and plans
// with several steps collect every answer.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "actors/llm_agent/tool_runner.hpp"

namespace aisched::llm {
namespace {

namespace json = boost::json;
using gateway::http_request;
using gateway::http_response;

struct fake_api {
  std::vector<http_request> seen;
  std::function<http_response(const http_request&)> answer;
  gateway::handler_fn fn() {
    return [this](http_request req, gateway::reply_fn reply) {
      seen.push_back(req);
      reply(answer(req));
    };
  }
};

struct outcome {
  bool called = false, ok = false;
  json::value result;
};

outcome run(fake_api& api, const std::string& tool, const std::string& args,
            std::map<std::string, std::string> headers = {{"authorization", "Bearer t0k"}}) {
  outcome out;
  auto plan = plan_tool(tool, args);
  EXPECT_TRUE(plan);
  run_tool(api.fn(), *plan, headers, [&](bool ok, std::string result) {
    out.called = true;
    out.ok = ok;
    out.result = json::parse(result);
  });
  return out;
}

TEST(tool_runner_test, requests_carry_the_callers_token_and_the_agent_marker) {
  fake_api api;
  api.answer = [](const http_request&) { return http_response{200, R"({"items":[]})"}; };
  auto out = run(api, "query_workers", "{}");
  ASSERT_TRUE(out.called);
  EXPECT_TRUE(out.ok);
  ASSERT_EQ(api.seen.size(), 1u);
  EXPECT_EQ(api.seen[0].headers.at("authorization"), "Bearer t0k");
  EXPECT_EQ(api.seen[0].headers.at("x-aisched-via"), "ai-agent");
  EXPECT_EQ(out.result.at("items").as_array().size(), 0u);
}

TEST(tool_runner_test, an_api_error_is_the_tools_result) {
  fake_api api;
  api.answer = [](const http_request&) {
    return http_response{403, R"({"error":{"code":"forbidden","message":"operator needed"}})"};
  };
  auto out = run(api, "pause_task", R"({"task_id":3})");
  ASSERT_TRUE(out.called);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.result.at("error").at("code").as_string(), "forbidden");
}

TEST(tool_runner_test, retry_asks_for_another_attempt_of_the_same_run) {
  fake_api api;
  api.answer = [](const http_request&) {
    return http_response{200, R"({"id":"7-1000-0","task_id":7,"state":"pending","attempt":2})"};
  };
  auto out = run(api, "retry_failed_instance", R"({"instance_id":"7-1000-0"})");
  ASSERT_TRUE(out.called);
  EXPECT_TRUE(out.ok);
  ASSERT_EQ(api.seen.size(), 1u);  // no new run of the task: no trigger
  EXPECT_EQ(api.seen[0].method, "POST");
  EXPECT_EQ(api.seen[0].path, "/api/v1/instances/7-1000-0/retry");
  EXPECT_EQ(api.seen[0].headers.at("authorization"), "Bearer t0k");
  EXPECT_EQ(out.result.at("id").as_string(), "7-1000-0");
}

TEST(tool_runner_test, retry_of_a_run_that_did_not_fail_is_the_apis_409) {
  fake_api api;
  api.answer = [](const http_request&) {
    return http_response{409, R"({"error":{"code":"illegal_transition","field":"state",)"
                              R"("message":"instance 7-1000-0 is success"}})"};
  };
  auto out = run(api, "retry_failed_instance", R"({"instance_id":"7-1000-0"})");
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(api.seen.size(), 1u);
  EXPECT_EQ(out.result.at("error").at("code").as_string(), "illegal_transition");
}

TEST(tool_runner_test, several_steps_are_collected_by_label) {
  fake_api api;
  api.answer = [](const http_request& r) {
    if (r.path == "/api/v1/cluster") return http_response{503, R"({"error":{"code":"unavailable"}})"};
    return http_response{200, R"({"ok":1})"};
  };
  auto out = run(api, "get_system_health", "{}", {});
  EXPECT_TRUE(out.ok);
  EXPECT_EQ(api.seen.size(), 3u);
  EXPECT_FALSE(api.seen[0].headers.count("authorization"));  // none given, none invented
  EXPECT_EQ(out.result.at("backpressure").at("ok").as_int64(), 1);
  EXPECT_EQ(out.result.at("cluster").at("status").as_int64(), 503);
}

}  // namespace
}  // namespace aisched::llm
