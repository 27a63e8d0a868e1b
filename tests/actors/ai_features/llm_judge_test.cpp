// The LLM-backed judge (actors/ai_features/llm_judge) against a scripted
// OpenAI-compatible server on loopback: ai_requests_total counts an answer by
// the feature's verdict on it (issue 43 item 8). A rejected answer is
// "invalid", never "ok" or "fallback"; an accepted one is "ok" or "fallback";
// a request without an answer is "error" and never reaches the check. The
// count is in place before `done` runs, so whoever sees the reply sees it.
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <curl/curl.h>
#include <gtest/gtest.h>

#include "actors/ai_features/llm_judge.hpp"
#include "common/llm_client.hpp"
#include "obs/metrics.hpp"
#include "proto/errors.hpp"
#include "support/scripted_llm.hpp"

namespace aisched::ai {
namespace {

using test::scripted_llm;

const char* results[] = {"ok", "fallback", "invalid", "error", "rate_limited"};

/// ai_requests_total{feature} by result, to compare before and after.
std::map<std::string, double> counts(const std::string& feature) {
  std::map<std::string, double> out;
  for (auto r : results) out[r] = obs::ai_requests(feature, r).value();
  return out;
}

/// What one judgement did: the text or error `done` got, the texts the check
/// saw, and ai_requests_total{feature} as it stood when `done` ran.
struct outcome {
  caf::expected<std::string> reply{std::string()};
  std::vector<std::string> checked;
  std::map<std::string, double> counts_at_done;
};

class llm_judge_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }

  llm::llm_config config_for(const scripted_llm& s) {
    llm::llm_config c;
    c.endpoint = s.endpoint();
    c.model = "primary-model";
    c.timeout = std::chrono::seconds(5);
    c.connect_timeout = std::chrono::seconds(2);
    return c;
  }

  /// Asks `judge` once as `feature`, with a check that accepts only `accepted`.
  outcome judge_once(const judge_fn& judge, const std::string& feature,
                     const std::string& accepted) {
    // Shared with the callback: it may still run (with an error) after a
    // timed-out wait, when the client shuts down.
    auto out = std::make_shared<outcome>();
    auto finished = std::make_shared<std::promise<void>>();
    judge_request req{feature, "answer in JSON", "{}",
                      [out, accepted](const std::string& text) -> caf::error {
                        out->checked.push_back(text);
                        if (text == accepted) return {};
                        return make_error(errc::invalid_argument, "body", "not the expected JSON");
                      }};
    auto f = finished->get_future();
    judge(std::move(req), [out, feature, finished](caf::expected<std::string> r) {
      out->reply = std::move(r);
      out->counts_at_done = counts(feature);
      finished->set_value();
    });
    EXPECT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    return *out;
  }

  static double delta(const std::map<std::string, double>& after,
                      const std::map<std::string, double>& before, const char* result) {
    return after.at(result) - before.at(result);
  }

  test::temp_dir dir_;
};

TEST_F(llm_judge_test, a_rejected_answer_counts_as_invalid_never_ok) {
  scripted_llm server(dir_.path(), {scripted_llm::say("I would rather answer in prose.")});
  auto judge = make_llm_judge(std::make_shared<llm::llm_client>(config_for(server)));
  ASSERT_TRUE(judge);
  auto before = counts("judge_rejected");
  auto got = judge_once(judge, "judge_rejected", R"({"ok":true})");
  ASSERT_TRUE(got.reply) << view(got.reply.error()).message;
  EXPECT_EQ(*got.reply, "I would rather answer in prose.") << "the caller still gets the text";
  ASSERT_EQ(got.checked.size(), 1u);
  EXPECT_EQ(delta(got.counts_at_done, before, "invalid"), 1) << "counted before done ran";
  EXPECT_EQ(delta(got.counts_at_done, before, "ok"), 0);
  auto after = counts("judge_rejected");
  EXPECT_EQ(delta(after, before, "invalid"), 1);
  EXPECT_EQ(delta(after, before, "ok"), 0);
  EXPECT_EQ(delta(after, before, "error"), 0);
}

TEST_F(llm_judge_test, an_accepted_answer_counts_as_ok_once) {
  scripted_llm server(dir_.path(), {scripted_llm::say(R"({"ok":true})")});
  auto judge = make_llm_judge(std::make_shared<llm::llm_client>(config_for(server)));
  auto before = counts("judge_accepted");
  auto got = judge_once(judge, "judge_accepted", R"({"ok":true})");
  ASSERT_TRUE(got.reply) << view(got.reply.error()).message;
  EXPECT_EQ(delta(got.counts_at_done, before, "ok"), 1);
  auto after = counts("judge_accepted");
  EXPECT_EQ(delta(after, before, "ok"), 1) << "not counted twice (client and judge)";
  EXPECT_EQ(delta(after, before, "invalid"), 0);
}

TEST_F(llm_judge_test, a_rejected_fallback_answer_counts_as_invalid_not_fallback) {
  scripted_llm primary(dir_.path(), {scripted_llm::status(500)}, "primary");
  scripted_llm fallback(dir_.path(), {scripted_llm::say("prose from the fallback")}, "fallback");
  auto cfg = config_for(primary);
  cfg.fallback_endpoint = fallback.endpoint();
  auto judge = make_llm_judge(std::make_shared<llm::llm_client>(cfg));
  auto before = counts("judge_fallback");
  auto got = judge_once(judge, "judge_fallback", R"({"ok":true})");
  ASSERT_TRUE(got.reply) << view(got.reply.error()).message;
  auto after = counts("judge_fallback");
  EXPECT_EQ(delta(after, before, "invalid"), 1);
  EXPECT_EQ(delta(after, before, "fallback"), 0);
  EXPECT_EQ(delta(after, before, "ok"), 0);
}

TEST_F(llm_judge_test, no_answer_counts_as_error_and_is_not_checked) {
  scripted_llm server(dir_.path(), {scripted_llm::status(400)});
  auto judge = make_llm_judge(std::make_shared<llm::llm_client>(config_for(server)));
  auto before = counts("judge_error");
  auto got = judge_once(judge, "judge_error", R"({"ok":true})");
  EXPECT_FALSE(got.reply);
  EXPECT_TRUE(got.checked.empty());
  auto after = counts("judge_error");
  EXPECT_EQ(delta(after, before, "error"), 1);
  EXPECT_EQ(delta(after, before, "invalid"), 0);
  EXPECT_EQ(delta(after, before, "ok"), 0);
}

}  // namespace
}  // namespace aisched::ai
