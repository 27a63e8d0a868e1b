// Helpers shared by the trigger::schedule tests: instants from RFC 3339, formatted
// results and parsing that records a failure instead of throwing.
#pragma once

#include "actors/trigger/schedule.hpp"

#include <date/date.h>
#include <date/tz.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bitset>
#include <string>
#include <vector>

#include "proto/errors.hpp"
#include "proto/time.hpp"

namespace aisched::trigger {
namespace testing_support {

inline unix_ms at(const char* rfc3339) {
  const auto t = parse_rfc3339(rfc3339);
  EXPECT_TRUE(t.has_value()) << rfc3339;
  return t.value_or(0);
}

inline std::vector<std::string> formatted(const std::vector<unix_ms>& ts) {
  std::vector<std::string> out;
  for (auto t : ts) out.push_back(format_rfc3339(t));
  return out;
}

inline schedule must_parse(const std::string& expr, const std::string& tz = "") {
  auto s = schedule::parse(expr, tz);
  EXPECT_TRUE(static_cast<bool>(s)) << expr << " in '" << tz << "': " << view(s.error()).message;
  return s ? *s : schedule::manual();
}

}  // namespace testing_support
}  // namespace aisched::trigger
