// The agent loop, driven by scripted completions without an actor or a model:
// tool rounds, malformed calls returned to the model, destructive calls held
// for confirmation, the round limit, and what is stored.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "actors/llm_agent/agent_loop.hpp"
#include "proto/errors.hpp"

namespace aisched::llm {
namespace {

namespace json = boost::json;

completion answer(const std::string& text) {
  completion c;
  c.content = text;
  c.finish_reason = "stop";
  return c;
}

completion calls(std::vector<tool_call> tcs) {
  completion c;
  c.tool_calls = std::move(tcs);
  c.finish_reason = "tool_calls";
  return c;
}

std::vector<std::string> names(const std::vector<agent_event>& events) {
  std::vector<std::string> out;
  for (auto& e : events) out.push_back(e.name);
  return out;
}

json::object data(const agent_event& e) { return json::parse(e.data).as_object(); }

TEST(agent_loop_test, a_plain_answer_ends_the_turn_with_text_and_done) {
  agent_loop loop("sys", {}, "hello");
  loop.set_ids("c-1", "a0-");
  EXPECT_EQ(loop.start().what, agent_step::ask_model);
  auto req = loop.request();
  ASSERT_EQ(req.messages.size(), 2u);
  EXPECT_EQ(req.messages[0].role, "system");
  EXPECT_EQ(req.messages[1].content, "hello");
  EXPECT_FALSE(req.tools.empty());
  auto step = loop.on_completion(answer("Hi there"), false);
  EXPECT_EQ(step.what, agent_step::finished);
  auto ev = loop.take_events();
  EXPECT_EQ(names(ev), (std::vector<std::string>{"text", "done"}));
  EXPECT_EQ(data(ev[0]).at("delta").as_string(), "Hi there");
  EXPECT_EQ(data(ev[1]).at("conversation_id").as_string(), "c-1");
  auto stored = loop.take_new_messages();
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].role, "user");
  EXPECT_EQ(stored[1].role, "assistant");
}

TEST(agent_loop_test, streamed_text_is_not_repeated) {
  agent_loop loop("sys", {}, "hello");
  loop.on_completion(answer("Hi"), true);
  EXPECT_EQ(names(loop.take_events()), (std::vector<std::string>{"done"}));
}

TEST(agent_loop_test, history_is_replayed_before_the_new_message) {
  std::vector<chat_message> history{{"user", "first", {}, {}, {}}, {"assistant", "ok", {}, {}, {}}};
  agent_loop loop("sys", history, "second");
  auto req = loop.request();
  ASSERT_EQ(req.messages.size(), 4u);
  EXPECT_EQ(req.messages[1].content, "first");
  EXPECT_EQ(req.messages[3].content, "second");
  EXPECT_EQ(loop.take_new_messages().size(), 1u);  // only the new turn is stored
}

TEST(agent_loop_test, a_tool_round_runs_the_tool_and_returns_its_json_to_the_model) {
  agent_loop loop("sys", {}, "show task 7");
  auto step = loop.on_completion(calls({{"c1", "get_task_detail", R"({"task_id":7})"}}), false);
  ASSERT_EQ(step.what, agent_step::run_tools);
  ASSERT_EQ(step.calls.size(), 1u);
  ASSERT_EQ(step.calls[0].plan.steps.size(), 1u);
  EXPECT_EQ(step.calls[0].plan.steps[0].request.method, "GET");
  EXPECT_EQ(step.calls[0].plan.steps[0].request.path, "/api/v1/tasks/7");
  step = loop.on_tool_result("c1", true, R"({"id":7,"name":"db-backup"})");
  EXPECT_EQ(step.what, agent_step::ask_model);
  auto req = loop.request();
  auto& last = req.messages.back();
  EXPECT_EQ(last.role, "tool");
  EXPECT_EQ(last.tool_call_id, "c1");
  EXPECT_EQ(last.content, R"({"id":7,"name":"db-backup"})");
  EXPECT_EQ(req.messages[req.messages.size() - 2].tool_calls.size(), 1u);
  loop.on_completion(answer("Task 7 is db-backup."), false);
  auto ev = loop.take_events();
  EXPECT_EQ(names(ev), (std::vector<std::string>{"tool_call", "tool_result", "text", "done"}));
  EXPECT_TRUE(data(ev[1]).at("ok").as_bool());
  EXPECT_EQ(data(ev[1]).at("result").at("name").as_string(), "db-backup");
  EXPECT_EQ(data(ev[3]).at("rounds").as_int64(), 1);
  EXPECT_EQ(loop.take_new_messages().size(), 4u);  // user, call, tool, answer
}

TEST(agent_loop_test, malformed_calls_go_back_to_the_model_as_errors) {
  agent_loop loop("sys", {}, "do things");
  auto step = loop.on_completion(
      calls({{"c1", "get_task_detail", R"({"task_id": 7)"},        // bad JSON
             {"c2", "launch_rockets", "{}"},                        // unknown tool
             {"c3", "get_task_detail", "{}"},                       // missing argument
             {"c4", "get_task_detail", R"({"task_id":"seven"})"}}),  // ill-typed argument
      false);
  EXPECT_EQ(step.what, agent_step::ask_model);
  auto req = loop.request();
  std::vector<std::string> errors;
  for (auto& m : req.messages)
    if (m.role == "tool") errors.push_back(json::parse(m.content).at("error").as_string().c_str());
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_NE(errors[0].find("not valid JSON"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("unknown tool"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("missing required argument 'task_id'"), std::string::npos) << errors[2];
  EXPECT_NE(errors[3].find("must be of type integer"), std::string::npos) << errors[3];
  // The model corrects itself next round.
  step = loop.on_completion(calls({{"c5", "get_task_detail", R"({"task_id":7})"}}), false);
  EXPECT_EQ(step.what, agent_step::run_tools);
  EXPECT_EQ(loop.rounds(), 2u);
}

TEST(agent_loop_test, delete_waits_for_confirmation_and_is_not_run) {
  agent_loop loop("sys", {}, "delete task 3");
  loop.set_ids("c-1", "a5-");
  auto step = loop.on_completion(calls({{"c1", "delete_task", R"({"task_id":3})"}}), false);
  EXPECT_EQ(step.what, agent_step::finished);
  EXPECT_TRUE(step.calls.empty());
  auto ev = loop.take_events();
  EXPECT_EQ(names(ev), (std::vector<std::string>{"tool_call", "confirmation_required", "done"}));
  EXPECT_EQ(data(ev[1]).at("action_id").as_string(), "a5-c1");
  EXPECT_EQ(data(ev[1]).at("summary").as_string(), "delete task 3");
  ASSERT_EQ(loop.pending().size(), 1u);
  auto stored = loop.take_new_messages();
  ASSERT_EQ(stored.size(), 3u);  // user, call, the "awaiting confirmation" result
  EXPECT_NE(stored[2].content.find("awaiting_confirmation"), std::string::npos);
}

TEST(agent_loop_test, an_approved_action_runs_then_the_model_answers) {
  pending_action a{"a5-c1", "delete_task", R"({"task_id":3})", "delete task 3"};
  std::vector<chat_message> history{{"user", "delete task 3", {}, {}, {}}};
  auto loop = agent_loop::after_confirmation("sys", history, a, true);
  auto step = loop.start();
  ASSERT_EQ(step.what, agent_step::run_tools);
  ASSERT_EQ(step.calls.size(), 1u);
  EXPECT_EQ(step.calls[0].plan.steps[0].request.method, "DELETE");
  EXPECT_EQ(step.calls[0].plan.steps[0].request.path, "/api/v1/tasks/3");
  EXPECT_EQ(loop.on_tool_result("a5-c1", true, "{}").what, agent_step::ask_model);
  loop.on_completion(answer("Deleted."), false);
  EXPECT_EQ(names(loop.take_events()), (std::vector<std::string>{"tool_result", "text", "done"}));
}

TEST(agent_loop_test, a_declined_action_is_reported_to_the_model) {
  pending_action a{"a5-c1", "delete_task", R"({"task_id":3})", "delete task 3"};
  auto loop = agent_loop::after_confirmation("sys", {}, a, false);
  EXPECT_EQ(loop.start().what, agent_step::ask_model);
  auto req = loop.request();
  EXPECT_NE(req.messages.back().content.find("declined"), std::string::npos);
  auto ev = loop.take_events();
  ASSERT_EQ(names(ev), (std::vector<std::string>{"tool_result"}));
  EXPECT_FALSE(data(ev[0]).at("ok").as_bool());
}

TEST(agent_loop_test, gives_up_after_max_rounds) {
  agent_loop loop("sys", {}, "loop forever", 3);
  for (int i = 0; i < 3; ++i) {
    auto step = loop.on_completion(calls({{"c" + std::to_string(i), "query_workers", "{}"}}), false);
    ASSERT_EQ(step.what, agent_step::run_tools);
    ASSERT_EQ(loop.on_tool_result("c" + std::to_string(i), true, "{}").what, agent_step::ask_model);
  }
  auto step = loop.on_completion(calls({{"c9", "query_workers", "{}"}}), false);
  EXPECT_EQ(step.what, agent_step::finished);
  auto ev = loop.take_events();
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[ev.size() - 2].name, "text");
  EXPECT_NE(ev[ev.size() - 2].data.find("gave up after 3 tool rounds"), std::string::npos);
  EXPECT_EQ(ev.back().name, "done");
}

TEST(agent_loop_test, a_failed_model_request_ends_with_an_error_event) {
  agent_loop loop("sys", {}, "hello");
  auto step = loop.on_model_error(make_error(errc::unavailable, "LLM answered HTTP 500"));
  EXPECT_EQ(step.what, agent_step::finished);
  auto ev = loop.take_events();
  ASSERT_EQ(names(ev), (std::vector<std::string>{"error"}));
  EXPECT_EQ(data(ev[0]).at("code").as_string(), "unavailable");
  EXPECT_TRUE(loop.finished());
}

TEST(agent_loop_test, a_failed_tool_keeps_the_error_for_the_model) {
  agent_loop loop("sys", {}, "pause 9");
  loop.on_completion(calls({{"c1", "pause_task", R"({"task_id":9})"}}), false);
  loop.on_tool_result("c1", false, R"({"error":{"code":"forbidden","message":"viewer"}})");
  auto req = loop.request();
  EXPECT_NE(req.messages.back().content.find("forbidden"), std::string::npos);
}

}  // namespace
}  // namespace aisched::llm
