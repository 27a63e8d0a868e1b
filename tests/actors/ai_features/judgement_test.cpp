// A model's judgement is read from a bare object, a code fence or prose around
// it; anything missing or out of range is rejected with the field named.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "actors/ai_features/judgement.hpp"
#include "proto/errors.hpp"

using namespace aisched;
using namespace aisched::ai;

namespace {

const char* good = R"({"summary":"Backup failed: pg_dump missing","severity":"high",
  "categories":["command_not_found"],"root_cause":"pg_dump is not installed",
  "fix":"install postgresql-client","confidence":0.92})";

proto::failure_analysis rules_answer() {
  proto::failure_analysis r;
  r.instance_id = "1-2-0";
  r.summary = "rules";
  r.categories = {"command_not_found"};
  return r;
}

}  // namespace

TEST(judgement, bare_object) {
  auto o = extract_json_object(good);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->at("severity").as_string(), "high");
}

TEST(judgement, fenced_object_with_prose) {
  std::string text = std::string("Here is my analysis:\n```json\n") + good +
                     "\n```\nLet me know if you need more.";
  auto o = extract_json_object(text);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->at("fix").as_string(), "install postgresql-client");
  auto plain = std::string("```\n{\"a\": 1}\n```");
  ASSERT_TRUE(extract_json_object(plain));
}

TEST(judgement, prose_wrapped_object_with_braces_in_strings) {
  std::string text = "Sure! {not json} The answer is {\"summary\": \"a } inside\", \"n\": {\"x\": 1}} "
                     "and that's it.";
  auto o = extract_json_object(text);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->at("summary").as_string(), "a } inside");
}

TEST(judgement, no_object_or_truncated) {
  EXPECT_FALSE(extract_json_object("I cannot help with that."));
  EXPECT_FALSE(extract_json_object("{\"summary\": \"cut off"));
  EXPECT_FALSE(extract_json_object("[1, 2, 3]"));
  EXPECT_FALSE(extract_json_object(""));
}

TEST(judgement, valid_analysis_becomes_llm_sourced) {
  auto a = analysis_from_judgement(std::string("```json\n") + good + "\n```", rules_answer());
  ASSERT_TRUE(a) << view(a.error()).message;
  EXPECT_EQ(a->source, "llm");
  EXPECT_EQ(a->instance_id, "1-2-0");
  EXPECT_EQ(a->severity, "high");
  EXPECT_DOUBLE_EQ(a->confidence, 0.92);
  EXPECT_EQ(a->categories, std::vector<std::string>{"command_not_found"});
}

TEST(judgement, invalid_fields_are_named) {
  auto check = [](const std::string& text, const std::string& field) {
    auto a = analysis_from_judgement(text, rules_answer());
    ASSERT_FALSE(a) << text;
    EXPECT_EQ(view(a.error()).field, field) << view(a.error()).message;
  };
  auto with = [](const char* key, boost::json::value v) {
    auto o = boost::json::parse(good).as_object();
    if (v.is_null()) o.erase(key);
    else o[key] = v;
    return boost::json::serialize(o);
  };
  check(with("severity", "catastrophic"), "severity");
  check(with("confidence", 1.5), "confidence");
  check(with("confidence", "high"), "confidence");
  check(with("summary", nullptr), "summary");
  check(with("categories", "oom"), "categories");
  check(with("categories", boost::json::array{1, 2}), "categories");
  check("no json here", "body");
}
