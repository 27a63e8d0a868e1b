// The streaming redactor (common/redactor): no byte of a secret value leaves
// it, however the stream is cut into chunks, with overlapping values, an empty
// set, and the held-back tail released at the end.
#include "common/redactor.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace aisched {
namespace {

/// Feeds `chunks` one by one and flushes: everything the redactor released.
std::string stream(redactor& r, const std::vector<std::string>& chunks) {
  std::string out;
  for (auto& c : chunks) out += r.feed(c);
  return out + r.flush();
}

TEST(redactor, masks_every_occurrence_in_one_chunk) {
  redactor r({"hunter2"});
  EXPECT_EQ(stream(r, {"pw=hunter2 again hunter2."}), "pw=*** again ***.");
}

TEST(redactor, masks_a_value_straddling_two_chunks) {
  redactor r({"hunter2"});
  // Each feed holds back max_len - 1 = 6 bytes: they could be part of a value.
  EXPECT_EQ(r.feed("password: hun"), "passwor");
  EXPECT_EQ(r.feed("ter2 done"), "d: ***");
  EXPECT_EQ(r.flush(), " done");
}

TEST(redactor, masks_a_value_cut_into_single_bytes) {
  redactor r({"s3cr3t"});
  std::vector<std::string> bytes;
  for (char c : std::string("xs3cr3ty")) bytes.emplace_back(1, c);
  EXPECT_EQ(stream(r, bytes), "x***y");
}

TEST(redactor, holds_back_at_most_max_len_minus_one_bytes) {
  redactor r({"abcdef", "xy"});
  auto out = r.feed("0123456789abcde");
  EXPECT_EQ(out, "0123456789");  // 5 = 6 - 1 bytes held
  EXPECT_EQ(r.flush(), "abcde");  // never completed: released as it was
}

TEST(redactor, overlapping_values_leak_no_byte_of_either) {
  redactor r({"secret", "cretin"});
  EXPECT_EQ(r.redact("a secretin b"), "a *** b");
  redactor nested({"abc", "abcdef"});
  EXPECT_EQ(stream(nested, {"xabc", "defy abcz"}), "x***y ***z");
  redactor repeat({"aa"});
  EXPECT_EQ(repeat.redact("aaa-a"), "***-a");
}

TEST(redactor, an_empty_set_or_empty_values_pass_everything_through) {
  redactor none({});
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.feed("abc"), "abc");
  EXPECT_EQ(none.flush(), "");
  redactor blank({"", ""});
  EXPECT_TRUE(blank.empty());
  EXPECT_EQ(stream(blank, {"x", "y"}), "xy");
}

TEST(redactor, flush_resets_for_a_new_stream) {
  redactor r({"key"});
  EXPECT_EQ(stream(r, {"ke"}), "ke");
  EXPECT_EQ(stream(r, {"y"}), "y");
}

// Any cut of any text gives what redacting it whole gives, and no value survives.
RC_GTEST_PROP(redactor, streaming_equals_whole_and_hides_values, ()) {
  auto alphabet = rc::gen::elementOf(std::string("abc-"));
  auto word = rc::gen::container<std::string>(alphabet);
  auto values = *rc::gen::container<std::vector<std::string>>(
      rc::gen::nonEmpty(rc::gen::resize(4, word)));
  auto text = *rc::gen::resize(60, word);
  auto cuts = *rc::gen::container<std::vector<size_t>>(rc::gen::inRange<size_t>(0, 61));
  redactor whole(values);
  auto expected = whole.redact(text);
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::string> chunks;
  size_t at = 0;
  for (auto c : cuts) {
    if (c < at || c > text.size()) continue;
    chunks.push_back(text.substr(at, c - at));
    at = c;
  }
  chunks.push_back(text.substr(at));
  redactor r(values);
  RC_ASSERT(stream(r, chunks) == expected);
  for (auto& v : values) {
    if (v.find('*') != std::string::npos) continue;
    RC_ASSERT(expected.find(v) == std::string::npos);
  }
}

}  // namespace
}  // namespace aisched
