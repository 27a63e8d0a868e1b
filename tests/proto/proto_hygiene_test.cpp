// What the proto layer guarantees about hostile input and ids: error bodies
// are valid UTF-8 JSON whatever bytes their message quotes (valid_utf8,
// error_to_json), a key repeated in one JSON object is refused naming it
// (parse_json), and trace and span ids are random W3C ids (proto/random.hpp).
#include <regex>
#include <set>

#include "proto/proto_fixture.hpp"
#include "proto/random.hpp"

namespace aisched::proto {
namespace {

using namespace testing_support;

const std::string fffd = "\xEF\xBF\xBD";

/// Whether `s` parses as the JSON string it should be: Boost.JSON's parser
/// checks UTF-8, independently of valid_utf8().
bool is_json_with_valid_utf8(const std::string& s) {
  boost::system::error_code ec;
  boost::json::parse(s, ec);
  return !ec;
}

/// The UTF-8 encoding of code point `cp`.
std::string utf8_of(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// -- UTF-8 -----------------------------------------------------------------------

TEST(valid_utf8, keeps_well_formed_text_and_replaces_each_broken_sequence) {
  EXPECT_EQ(valid_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(valid_utf8("/api/v1/workers/\xFF/drain"), "/api/v1/workers/" + fffd + "/drain");
  EXPECT_EQ(valid_utf8("\x80"), fffd) << "a stray continuation byte";
  EXPECT_EQ(valid_utf8("a\xE2\x82"), "a" + fffd) << "a truncated sequence is one U+FFFD";
  EXPECT_EQ(valid_utf8("\xE2\x82" "x"), fffd + "x");
  EXPECT_EQ(valid_utf8("\xC0\xAF"), fffd + fffd) << "an overlong '/'";
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), fffd + fffd + fffd) << "a UTF-16 surrogate";
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd) << "past U+10FFFF";
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3)) << "NUL is valid UTF-8";
}

RC_GTEST_PROP(valid_utf8, makes_any_bytes_valid_and_leaves_valid_text_alone,
              (const std::vector<uint8_t>& bytes, const std::vector<uint32_t>& points)) {
  std::string raw(bytes.begin(), bytes.end());
  auto body = boost::json::serialize(error_to_json(make_error(errc::not_found, raw, raw)));
  RC_ASSERT(is_json_with_valid_utf8(body));
  std::string text;
  for (auto p : points) {
    auto cp = p % 0x110000;
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;  // surrogates are not scalar values
    text += utf8_of(cp);
  }
  RC_ASSERT(valid_utf8(text) == text);
}

TEST(error_to_json, any_bytes_in_message_or_field_give_valid_utf8_json) {
  auto err = make_error(errc::not_found, "id\xFE", "no route for POST /api/v1/workers/\xFF/drain");
  auto body = boost::json::serialize(error_to_json(err));
  ASSERT_TRUE(is_json_with_valid_utf8(body)) << body;
  auto v = boost::json::parse(body);
  EXPECT_EQ(std::string(v.at("error").at("message").as_string()),
            "no route for POST /api/v1/workers/" + fffd + "/drain");
  EXPECT_EQ(std::string(v.at("error").at("field").as_string()), "id" + fffd);
}

// -- duplicate keys --------------------------------------------------------------

TEST(parse_json, refuses_a_key_repeated_in_one_object_naming_it) {
  struct example {
    const char* body;
    const char* field;
  };
  for (auto [body, field] : std::vector<example>{
           {R"({"name":"a","name":"b"})", "name"},
           {R"({"name":"a","retry":{"policy":"fixed","policy":"none"}})", "retry.policy"},
           {R"({"items":[{"id":1},{"id":2,"id":3}]})", "items[1].id"},
           {R"([[1,2],{"a":1,"a":1}])", "[1].a"},
           {R"({"n\u0061me":"a","name":"b"})", "name"},  // the same key, escaped
       }) {
    auto v = parse_json(body);
    ASSERT_FALSE(v) << body;
    EXPECT_EQ(view(v.error()).code, errc::invalid_argument) << body;
    EXPECT_EQ(view(v.error()).field, field) << body;
    EXPECT_NE(view(v.error()).message.find("duplicate key"), std::string::npos)
        << view(v.error()).message;
  }
}

// Found by tests/fuzz/fuzz_task_json: `2E2222` parsed as infinity, which no field
// means and which the API would echo as null.
TEST(parse_json, refuses_a_number_beyond_a_double_naming_where) {
  struct example {
    const char* body;
    const char* field;
  };
  for (auto [body, field] : std::vector<example>{
           {"2E2222", "body"},
           {R"({"retry":{"multiplier":1e999}})", "retry.multiplier"},
           {R"({"items":[1,-1e400]})", "items[1]"},
       }) {
    auto v = parse_json(body);
    ASSERT_FALSE(v) << body;
    EXPECT_EQ(view(v.error()).code, errc::invalid_argument) << body;
    EXPECT_EQ(view(v.error()).field, field) << body;
    EXPECT_NE(view(v.error()).message.find("out of range"), std::string::npos)
        << view(v.error()).message;
  }
  EXPECT_TRUE(parse_json(R"({"multiplier":1.7e308})"));
}

TEST(parse_json, still_reads_documents_whose_keys_repeat_only_across_objects) {
  auto body = R"({"a":{"x":1,"y":[1,{"x":2}]},"b":{"x":"s"},"c":[{"x":1},{"x":2}],"d":null})";
  auto v = parse_json(body);
  ASSERT_TRUE(v) << view(v.error()).message;
  EXPECT_EQ(*v, boost::json::parse(body));
  auto deep = std::string(40, '[') + std::string(40, ']');
  EXPECT_FALSE(parse_json(deep)) << "the depth limit still holds";
  EXPECT_FALSE(parse_json(R"({"a":1} x)")) << "trailing bytes";
  EXPECT_FALSE(parse_json(R"({"a":1)")) << "a truncated document";
  EXPECT_FALSE(parse_json("\"\xFF\"")) << "invalid UTF-8 in a string";
  ASSERT_TRUE(parse_json(" {} "));
}

// -- random ids ------------------------------------------------------------------

TEST(random_ids, trace_and_span_ids_are_w3c_form_and_do_not_repeat) {
  std::set<std::string> traces, spans, high_halves, low_halves;
  const std::regex trace_form("[0-9a-f]{32}"), span_form("[0-9a-f]{16}");
  for (int i = 0; i < 2000; ++i) {
    auto t = new_trace_id(), s = new_span_id();
    ASSERT_TRUE(std::regex_match(t, trace_form)) << t;
    ASSERT_TRUE(std::regex_match(s, span_form)) << s;
    traces.insert(t);
    spans.insert(s);
    high_halves.insert(t.substr(0, 16));
    low_halves.insert(t.substr(16));
  }
  EXPECT_EQ(traces.size(), 2000u);
  EXPECT_EQ(spans.size(), 2000u);
  EXPECT_EQ(high_halves.size(), 2000u) << "both halves vary";
  EXPECT_EQ(low_halves.size(), 2000u);
  EXPECT_EQ(random_hex(3).size(), 6u);
}

}  // namespace
}  // namespace aisched::proto
