// The streamed-answer accumulator: SSE bytes split anywhere give the same
// answer; tool-call arguments are joined per call index; reasoning is kept.
#include <gtest/gtest.h>

#include "common/llm_client.hpp"
#include "proto/errors.hpp"

namespace aisched::llm {
namespace {

const std::string stream_text =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"thin\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"king\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
    ": keep-alive comment\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo wor\"}}]}\r\n\r\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\","
    "\"function\":{\"name\":\"get_task_detail\",\"arguments\":\"{\\\"task\"}}]}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\","
    "\"function\":{\"name\":\"query_workers\",\"arguments\":\"\"}}]}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"function\":{\"arguments\":\"_id\\\": 7}\"}}]}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,"
    "\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":34}}\n\n"
    "data: [DONE]\n\n";

void check(const completion& c) {
  EXPECT_EQ(c.content, "Hello wor");
  EXPECT_EQ(c.reasoning_content, "thinking");
  ASSERT_EQ(c.tool_calls.size(), 2u);
  EXPECT_EQ(c.tool_calls[0].id, "call_a");
  EXPECT_EQ(c.tool_calls[0].name, "get_task_detail");
  EXPECT_EQ(c.tool_calls[0].arguments, "{\"task_id\": 7}");
  EXPECT_EQ(c.tool_calls[1].id, "call_b");
  EXPECT_EQ(c.tool_calls[1].arguments, "{}");
  EXPECT_EQ(c.finish_reason, "tool_calls");
  EXPECT_EQ(c.usage.prompt_tokens, 12u);
  EXPECT_EQ(c.usage.completion_tokens, 34u);
}

TEST(stream_accumulator_test, assembles_content_reasoning_tool_calls_and_usage) {
  std::string deltas;
  stream_accumulator acc([&](const stream_delta& d) { deltas += d.content; });
  ASSERT_TRUE(acc.feed(stream_text)) << acc.error();
  EXPECT_TRUE(acc.done());
  check(acc.result());
  EXPECT_EQ(deltas, "Hello wor");
}

TEST(stream_accumulator_test, gives_the_same_answer_for_every_split_point) {
  for (size_t cut = 1; cut < stream_text.size(); ++cut) {
    stream_accumulator acc;
    ASSERT_TRUE(acc.feed(stream_text.substr(0, cut))) << cut;
    ASSERT_TRUE(acc.feed(stream_text.substr(cut))) << cut;
    SCOPED_TRACE(cut);
    check(acc.result());
  }
}

TEST(stream_accumulator_test, byte_by_byte_feeding_works) {
  stream_accumulator acc;
  for (char c : stream_text) ASSERT_TRUE(acc.feed(std::string_view(&c, 1)));
  check(acc.result());
}

// Some providers repeat the complete function name in every delta of a call;
// others split it. Both yield the name once.
TEST(stream_accumulator_test, a_name_repeated_in_every_delta_is_that_name_once) {
  const std::string repeated =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\","
      "\"function\":{\"name\":\"create_task\",\"arguments\":\"{\\\"name\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
      "\"function\":{\"name\":\"create_task\",\"arguments\":\"\\\":\\\"x\\\"}\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c2\","
      "\"function\":{\"name\":\"query_\",\"arguments\":\"\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,"
      "\"function\":{\"name\":\"workers\",\"arguments\":\"{}\"}}]}}]}\n\n"
      "data: [DONE]\n\n";
  stream_accumulator acc;
  ASSERT_TRUE(acc.feed(repeated)) << acc.error();
  auto c = acc.result();
  ASSERT_EQ(c.tool_calls.size(), 2u);
  EXPECT_EQ(c.tool_calls[0].name, "create_task");
  EXPECT_EQ(c.tool_calls[0].arguments, "{\"name\":\"x\"}");
  EXPECT_EQ(c.tool_calls[1].name, "query_workers");
  EXPECT_EQ(c.tool_calls[1].arguments, "{}");
}

TEST(stream_accumulator_test, an_event_is_its_data_lines_joined_and_the_last_needs_no_blank_line) {
  // SSE joins an event's data lines with '\n': a chunk printed over two lines
  // is one JSON document. A stream cut before its last blank line still ends
  // that event at finish().
  stream_accumulator acc;
  ASSERT_TRUE(acc.feed("event: delta\ndata: {\"choices\":[{\"index\":0,\n"
                       "data: \"delta\":{\"content\":\"Hi\"}}]}\n\n"))
      << acc.error();
  ASSERT_TRUE(acc.feed("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"}}]}"));
  EXPECT_EQ(acc.result().content, "Hi");
  ASSERT_TRUE(acc.finish()) << acc.error();
  EXPECT_EQ(acc.result().content, "Hi!");
}

TEST(stream_accumulator_test, an_unreadable_chunk_is_an_error_not_a_crash) {
  stream_accumulator acc;
  EXPECT_FALSE(acc.feed("data: {not json\n\n"));
  EXPECT_NE(acc.error().find("unreadable"), std::string::npos);
}

TEST(stream_accumulator_test, a_provider_error_in_the_stream_is_reported) {
  stream_accumulator acc;
  EXPECT_FALSE(acc.feed("data: {\"error\":{\"message\":\"overloaded\"}}\n\n"));
  EXPECT_NE(acc.error().find("overloaded"), std::string::npos);
}

TEST(llm_codec_test, parses_a_plain_completion_with_tool_calls) {
  auto c = parse_completion(
      R"({"model":"m1","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
          "tool_calls":[{"id":"c1","type":"function","function":{"name":"query_tasks","arguments":"{}"}}]}}],
          "usage":{"prompt_tokens":3,"completion_tokens":4}})");
  ASSERT_TRUE(c) << view(c.error()).message;
  EXPECT_EQ(c->model, "m1");
  EXPECT_EQ(c->content, "");
  ASSERT_EQ(c->tool_calls.size(), 1u);
  EXPECT_EQ(c->tool_calls[0].name, "query_tasks");
  EXPECT_EQ(c->usage.completion_tokens, 4u);
  EXPECT_FALSE(parse_completion("<html>bad gateway</html>"));
  EXPECT_FALSE(parse_completion(R"({"choices":[]})"));
}

TEST(llm_codec_test, request_body_carries_tools_history_and_stream_options) {
  chat_request r;
  r.messages.push_back({"user", "hi", {}, {}, {}});
  r.messages.push_back({"assistant", "", {{"c1", "query_tasks", "{}"}}, {}, {}});
  r.messages.push_back({"tool", "{\"items\":[]}", {}, "c1", "query_tasks"});
  r.tools.push_back({"query_tasks", "List tasks", R"({"type":"object","properties":{}})"});
  r.stream = true;
  auto body = request_body(r, "gpt-x");
  EXPECT_NE(body.find(R"("model":"gpt-x")"), std::string::npos);
  EXPECT_NE(body.find(R"("content":null)"), std::string::npos);
  EXPECT_NE(body.find(R"("tool_call_id":"c1")"), std::string::npos);
  EXPECT_NE(body.find(R"("parameters":{"type":"object")"), std::string::npos);
  EXPECT_NE(body.find(R"("include_usage":true)"), std::string::npos);
}

}  // namespace
}  // namespace aisched::llm
