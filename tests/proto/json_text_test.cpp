// proto::to_text: JSON text whose numbers read as people and tools expect
// (`0`, `1000`, `0.5`), never Boost's exponent form (`0E0`, `1E3`, `5E-1`), and
// that parses back to the same value.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "proto/json.hpp"

namespace aisched::proto {
namespace {

namespace json = boost::json;

TEST(json_text, doubles_read_as_plain_numbers) {
  json::object o{{"zero", 0.0}, {"thousand", 1000.0}, {"half", 0.5}, {"two", 2.0},
                 {"neg", -3.25},  {"big", 1e21},        {"tiny", 1e-7}};
  EXPECT_EQ(to_text(o),
            R"({"zero":0,"thousand":1000,"half":0.5,"two":2,"neg":-3.25,"big":1e+21,"tiny":1e-07})");
}

TEST(json_text, everything_else_is_as_boost_writes_it) {
  auto v = json::parse(R"({"s":"a\"b\n\u00e9","i":-7,"u":18446744073709551615,"b":true,)"
                       R"("n":null,"a":[1,"x",{}],"o":{"k":[]}})");
  EXPECT_EQ(to_text(v), json::serialize(v));
}

TEST(json_text, what_json_cannot_hold_is_null) {
  json::array a{std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()};
  EXPECT_EQ(to_text(a), "[null,null]");
}

RC_GTEST_PROP(json_text, a_double_reads_back_as_the_same_number, (double d)) {
  RC_PRE(std::isfinite(d));
  auto text = to_text(json::value(d));
  RC_ASSERT(text.find('E') == std::string::npos);
  json::parse(text);  // valid JSON (throws otherwise)
  // Read back exactly (Boost's own parser rounds in its last digit, so strtod decides).
  RC_ASSERT(std::strtod(text.c_str(), nullptr) == d);
}

}  // namespace
}  // namespace aisched::proto
