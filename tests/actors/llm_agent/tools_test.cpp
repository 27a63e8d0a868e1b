// The tool table: every tool is described with a valid JSON schema, valid
// calls become the REST requests of the API, bad ones errors for the model.
#include <set>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "actors/llm_agent/tools.hpp"
#include "proto/errors.hpp"

namespace aisched::llm {
namespace {

namespace json = boost::json;

TEST(tools_test, describes_the_fourteen_tools_with_object_schemas) {
  std::set<std::string> names;
  for (auto& t : tool_specs()) {
    names.insert(t.name);
    auto v = json::parse(t.parameters);
    EXPECT_EQ(v.at("type").as_string(), "object") << t.name;
    EXPECT_FALSE(t.description.empty()) << t.name;
  }
  for (auto n : {"query_tasks", "query_instances", "query_workers", "get_task_detail",
                 "get_system_health", "analyze_failure", "create_task", "trigger_task",
                 "pause_task", "retry_failed_instance", "delete_task", "get_worker_load_history",
                 "cluster_status", "next_fire_times"})
    EXPECT_TRUE(names.count(n)) << n;
}

TEST(tools_test, create_task_offers_the_scheduling_controls) {
  for (auto& t : tool_specs()) {
    if (t.name != "create_task" && t.name != "next_fire_times") continue;
    auto props = json::parse(t.parameters).at("properties").as_object();
    if (t.name == "create_task") {
      for (auto f : {"max_runs", "max_concurrency", "pool", "exclude_calendar", "retention"})
        EXPECT_TRUE(props.contains(f)) << f;
      EXPECT_EQ(props.at("max_runs").at("type").as_string(), "integer");
    } else {
      EXPECT_TRUE(props.contains("calendar"));
    }
  }
}

const gateway::http_request& only(const tool_plan& p) {
  EXPECT_EQ(p.steps.size(), 1u);
  return p.steps.at(0).request;
}

TEST(tools_test, calls_become_the_rest_requests_of_the_api) {
  auto p = plan_tool("query_tasks", R"({"labels":"zone=eu","state":"paused"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(only(*p).path, "/api/v1/tasks");
  EXPECT_EQ(only(*p).query.at("labels"), "zone=eu");
  EXPECT_EQ(only(*p).query.at("limit"), "50");
  p = plan_tool("query_instances", R"({"task_id":4,"state":"failed","since":"2026-01-01T00:00:00Z"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(only(*p).query.at("task_id"), "4");
  EXPECT_EQ(only(*p).query.at("since"), "2026-01-01T00:00:00Z");
  p = plan_tool("pause_task", R"({"task_id":4})");
  ASSERT_TRUE(p);
  EXPECT_EQ(only(*p).method, "POST");
  EXPECT_EQ(only(*p).path, "/api/v1/tasks/4/pause");
  p = plan_tool("pause_task", R"({"task_id":4,"resume":true})");
  ASSERT_TRUE(p);
  EXPECT_EQ(only(*p).path, "/api/v1/tasks/4/resume");
  p = plan_tool("create_task", R"({"name":"x","command":"echo hi","schedule":"@every 1h"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(only(*p).path, "/api/v1/tasks");
  EXPECT_EQ(json::parse(only(*p).body).at("command").as_string(), "echo hi");
  EXPECT_FALSE(p->destructive);
  p = plan_tool("delete_task", R"({"task_id":4})");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->destructive);
  EXPECT_EQ(only(*p).method, "DELETE");
  p = plan_tool("analyze_failure", R"({"instance_id":"4-1000-0"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(only(*p).path, "/api/v1/instances/4-1000-0/analysis");
  p = plan_tool("get_worker_load_history", R"({"worker_id":"w1"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(only(*p).path, "/api/v1/workers/w1/load-history");
  p = plan_tool("next_fire_times", R"({"cron":"0 3 * * *","timezone":"Europe/Berlin"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(only(*p).query.at("tz"), "Europe/Berlin");
  p = plan_tool("next_fire_times", R"({"cron":"@hourly","end_at":"2030-01-01T00:00:00Z"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(only(*p).query.at("end_at"), "2030-01-01T00:00:00Z");
  p = plan_tool("next_fire_times", R"({"cron":"@daily","calendar":"holidays"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(only(*p).query.at("calendar"), "holidays");
  p = plan_tool("create_task", R"({"name":"x","command":"true","schedule":"@hourly",)"
                               R"("max_runs":3,"pool":"db","exclude_calendar":"holidays"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(json::parse(only(*p).body).at("pool").as_string(), "db");
  // Another attempt of the same run, not a new run of its task.
  p = plan_tool("retry_failed_instance", R"({"instance_id":"4-1000-0"})");
  ASSERT_TRUE(p);
  EXPECT_EQ(only(*p).method, "POST");
  EXPECT_EQ(only(*p).path, "/api/v1/instances/4-1000-0/retry");
  p = plan_tool("get_system_health", "");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->steps.size(), 3u);
}

TEST(tools_test, enqueue_runs_is_one_bulk_request_and_wants_objects) {
  auto p = plan_tool("enqueue_runs", R"({"task_id":7,"payloads":[{"to":"a"},{"to":"b"}]})");
  ASSERT_TRUE(p) << view(p.error()).message;
  EXPECT_EQ(only(*p).method, "POST");
  EXPECT_EQ(only(*p).path, "/api/v1/tasks/7/runs");
  auto body = json::parse(only(*p).body);
  ASSERT_EQ(body.at("payloads").as_array().size(), 2u);
  EXPECT_EQ(body.at("payloads").as_array().at(1).at("to").as_string(), "b");
  EXPECT_NE(p->summary.find("2 runs of task 7"), std::string::npos) << p->summary;
  EXPECT_FALSE(p->destructive);
  EXPECT_EQ(view(plan_tool("enqueue_runs", R"({"task_id":7,"payloads":[1]})").error()).field,
            "payloads");
  EXPECT_EQ(view(plan_tool("enqueue_runs", R"({"task_id":7,"payloads":{}})").error()).field,
            "payloads");
  EXPECT_EQ(view(plan_tool("enqueue_runs", R"({"task_id":7})").error()).field, "payloads");
}

TEST(tools_test, refuses_what_the_model_got_wrong) {
  EXPECT_EQ(view(plan_tool("nope", "{}").error()).code, errc::not_found);
  EXPECT_EQ(view(plan_tool("get_task_detail", "[1]").error()).field, "arguments");
  EXPECT_EQ(view(plan_tool("get_task_detail", R"({"task_id":-1})").error()).field, "task_id");
  EXPECT_EQ(view(plan_tool("get_task_detail", R"({"task_id":1,"x":2})").error()).field, "x");
  EXPECT_EQ(view(plan_tool("analyze_failure", R"({"instance_id":"../tasks/1"})").error()).field,
            "instance_id");
  EXPECT_EQ(view(plan_tool("pause_task", R"({"task_id":1,"resume":"yes"})").error()).field, "resume");
}

}  // namespace
}  // namespace aisched::llm
