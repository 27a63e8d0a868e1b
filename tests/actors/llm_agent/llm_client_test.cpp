// The LLM client against a scripted OpenAI-compatible server on loopback:
// plain and streamed answers, tool calls split across chunks, the bearer key,
// fallback on a 500 and on a hang (timeout), a clear error without one, the
// requests-per-minute limit, and the token metrics.
#include <chrono>
#include <future>

#include <curl/curl.h>
#include <gtest/gtest.h>

#include "common/llm_client.hpp"
#include "obs/metrics.hpp"
#include "proto/errors.hpp"
#include "support/scripted_llm.hpp"

namespace aisched::llm {
namespace {

namespace json = boost::json;
using test::scripted_llm;

class llm_client_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }

  llm_config config_for(const scripted_llm& s) {
    llm_config c;
    c.endpoint = s.endpoint();
    c.api_key = "sk-primary";
    c.model = "primary-model";
    c.timeout = std::chrono::seconds(5);
    c.connect_timeout = std::chrono::seconds(2);
    return c;
  }

  chat_request ask(const std::string& text, bool stream) {
    chat_request r;
    r.messages.push_back({"user", text, {}, {}, {}});
    r.stream = stream;
    r.feature = "test";
    return r;
  }

  test::temp_dir dir_;
};

TEST_F(llm_client_test, plain_answer_with_bearer_key_and_usage) {
  auto entry = scripted_llm::say("The cluster is healthy.");
  entry["usage"] = {{"prompt_tokens", 100}, {"completion_tokens", 7}};
  scripted_llm server(dir_.path(), {entry});
  llm_client client(config_for(server));
  auto prompt_before = obs::get().ai_prompt_tokens.value();
  auto completion_before = obs::get().ai_completion_tokens.value();
  auto r = client.complete(ask("status?", false));
  ASSERT_TRUE(r) << view(r.error()).message;
  EXPECT_EQ(r->content, "The cluster is healthy.");
  EXPECT_EQ(r->usage.prompt_tokens, 100u);
  EXPECT_FALSE(r->used_fallback);
  EXPECT_EQ(obs::get().ai_prompt_tokens.value() - prompt_before, 100);
  EXPECT_EQ(obs::get().ai_completion_tokens.value() - completion_before, 7);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].at("path").as_string(), "/v1/chat/completions");
  EXPECT_EQ(reqs[0].at("authorization").as_string(), "Bearer sk-primary");
  EXPECT_EQ(reqs[0].at("body").at("model").as_string(), "primary-model");
  EXPECT_EQ(reqs[0].at("body").at("stream").as_bool(), false);
}

TEST_F(llm_client_test, streamed_answer_split_mid_token_arrives_in_order) {
  auto entry = scripted_llm::say("Paused db-backup and cleanup.");
  entry["reasoning"] = "the user wants both paused";
  entry["split"] = 2;
  scripted_llm server(dir_.path(), {entry});
  llm_client client(config_for(server));
  std::vector<std::string> deltas;
  auto r = client.complete(ask("pause", true), [&](const stream_delta& d) {
    if (!d.content.empty()) deltas.push_back(d.content);
  });
  ASSERT_TRUE(r) << view(r.error()).message;
  EXPECT_EQ(r->content, "Paused db-backup and cleanup.");
  EXPECT_EQ(r->reasoning_content, "the user wants both paused");
  EXPECT_GT(deltas.size(), 10u);
  std::string joined;
  for (auto& d : deltas) joined += d;
  EXPECT_EQ(joined, r->content);
  EXPECT_EQ(server.requests().at(0).at("body").at("stream").as_bool(), true);
}

TEST_F(llm_client_test, tool_calls_split_across_chunks_are_assembled) {
  json::object entry{
      {"call", json::array{json::object{{"id", "call_1"}, {"name", "create_task"},
                                        {"arguments", R"({"name":"nightly","command":"echo hi"})"}},
                           json::object{{"id", "call_2"}, {"name", "query_workers"}, {"arguments", "{}"}}}}};
  scripted_llm server(dir_.path(), {entry, entry});
  llm_client client(config_for(server));
  for (bool stream : {true, false}) {
    auto r = client.complete(ask("make a task", stream));
    ASSERT_TRUE(r) << view(r.error()).message;
    ASSERT_EQ(r->tool_calls.size(), 2u) << stream;
    EXPECT_EQ(r->tool_calls[0].id, "call_1");
    EXPECT_EQ(r->tool_calls[0].name, "create_task");
    EXPECT_EQ(r->tool_calls[0].arguments, R"({"name":"nightly","command":"echo hi"})");
    EXPECT_EQ(r->tool_calls[1].name, "query_workers");
    EXPECT_EQ(r->finish_reason, "tool_calls");
  }
}

TEST_F(llm_client_test, a_500_from_the_primary_uses_the_fallback) {
  scripted_llm primary(dir_.path(), {scripted_llm::status(500)}, "primary");
  scripted_llm fallback(dir_.path(), {scripted_llm::say("from the fallback")}, "fallback");
  auto cfg = config_for(primary);
  cfg.fallback_endpoint = fallback.endpoint();
  cfg.fallback_api_key = "sk-fallback";
  cfg.fallback_model = "fallback-model";
  llm_client client(cfg);
  auto before = obs::ai_requests("test", "fallback").value();
  auto r = client.complete(ask("hi", true));
  ASSERT_TRUE(r) << view(r.error()).message;
  EXPECT_EQ(r->content, "from the fallback");
  EXPECT_TRUE(r->used_fallback);
  ASSERT_EQ(fallback.requests().size(), 1u);
  EXPECT_EQ(fallback.requests()[0].at("body").at("model").as_string(), "fallback-model");
  EXPECT_EQ(fallback.requests()[0].at("authorization").as_string(), "Bearer sk-fallback");
  EXPECT_EQ(obs::ai_requests("test", "fallback").value() - before, 1);
}

TEST_F(llm_client_test, a_hanging_primary_times_out_and_the_fallback_answers) {
  scripted_llm primary(dir_.path(), {scripted_llm::hang(30)}, "primary");
  scripted_llm fallback(dir_.path(), {scripted_llm::say("fallback after timeout")}, "fallback");
  auto cfg = config_for(primary);
  cfg.timeout = std::chrono::milliseconds(800);
  cfg.fallback_endpoint = fallback.endpoint();
  llm_client client(cfg);
  auto start = std::chrono::steady_clock::now();
  auto r = client.complete(ask("hi", false));
  ASSERT_TRUE(r) << view(r.error()).message;
  EXPECT_EQ(r->content, "fallback after timeout");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(fallback.requests()[0].at("body").at("model").as_string(), "primary-model");
}

TEST_F(llm_client_test, without_a_fallback_a_hang_is_a_clear_error) {
  scripted_llm primary(dir_.path(), {scripted_llm::hang(30)});
  auto cfg = config_for(primary);
  cfg.timeout = std::chrono::milliseconds(500);
  llm_client client(cfg);
  auto r = client.complete(ask("hi", true));
  ASSERT_FALSE(r);
  EXPECT_EQ(view(r.error()).code, errc::unavailable);
  EXPECT_NE(view(r.error()).message.find("LLM request failed"), std::string::npos)
      << view(r.error()).message;
}

TEST_F(llm_client_test, a_400_is_not_retried_on_the_fallback) {
  scripted_llm primary(dir_.path(), {scripted_llm::status(400)}, "primary");
  scripted_llm fallback(dir_.path(), {scripted_llm::say("unused")}, "fallback");
  auto cfg = config_for(primary);
  cfg.fallback_endpoint = fallback.endpoint();
  llm_client client(cfg);
  auto r = client.complete(ask("hi", false));
  ASSERT_FALSE(r);
  EXPECT_NE(view(r.error()).message.find("HTTP 400"), std::string::npos);
  EXPECT_TRUE(fallback.requests().empty());
}

TEST_F(llm_client_test, the_requests_per_minute_limit_holds_requests_back) {
  scripted_llm server(dir_.path(), {scripted_llm::say("1"), scripted_llm::say("2")});
  auto cfg = config_for(server);
  cfg.requests_per_minute = 1;  // one now, the next in a minute
  cfg.timeout = std::chrono::milliseconds(300);
  llm_client client(cfg);
  ASSERT_TRUE(client.complete(ask("a", false)));
  auto r = client.complete(ask("b", false));
  ASSERT_FALSE(r);
  EXPECT_NE(view(r.error()).message.find("requests-per-minute"), std::string::npos);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(llm_client_test, async_requests_answer_on_the_client_threads) {
  scripted_llm server(dir_.path(), {scripted_llm::say("async")});
  llm_client client(config_for(server));
  std::promise<caf::expected<completion>> got;
  client.complete_async(ask("x", true), nullptr,
                        [&](caf::expected<completion> r) { got.set_value(std::move(r)); });
  auto f = got.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto r = f.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->content, "async");
}

TEST_F(llm_client_test, unconfigured_client_refuses) {
  llm_client client(llm_config{});
  EXPECT_FALSE(client.configured());
  auto r = client.complete(ask("x", false));
  ASSERT_FALSE(r);
  EXPECT_EQ(view(r.error()).field, "llm_not_configured");
}

}  // namespace
}  // namespace aisched::llm
