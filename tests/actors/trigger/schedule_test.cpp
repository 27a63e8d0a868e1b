// Tests for trigger::schedule: table tests with concrete instants for every cron feature,
// macros, @every, one-shot, manual, DST gaps and overlaps, and error messages; rapidcheck
// properties compare next_after against an independent, slow model of the expression
// (sets built by the generator, civil time via date/tz) and a second-by-second brute force.
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
namespace {

unix_ms at(const char* rfc3339) {
  const auto t = parse_rfc3339(rfc3339);
  EXPECT_TRUE(t.has_value()) << rfc3339;
  return t.value_or(0);
}

std::vector<std::string> formatted(const std::vector<unix_ms>& ts) {
  std::vector<std::string> out;
  for (auto t : ts) out.push_back(format_rfc3339(t));
  return out;
}

schedule must_parse(const std::string& expr, const std::string& tz = "") {
  auto s = schedule::parse(expr, tz);
  EXPECT_TRUE(static_cast<bool>(s)) << expr << " in '" << tz << "': " << view(s.error()).message;
  return s ? *s : schedule::manual();
}

// -- table tests --------------------------------------------------------------------------

struct next_case {
  const char* expr;
  const char* tz;
  const char* after;
  std::vector<std::string> expected;  // the next expected.size() fire instants
};

void check_cases(const std::vector<next_case>& cases) {
  for (const auto& c : cases) {
    const auto s = must_parse(c.expr, c.tz);
    EXPECT_EQ(formatted(s.next_n(at(c.after), c.expected.size())), c.expected)
        << "'" << c.expr << "' in '" << c.tz << "' after " << c.after;
  }
}

TEST(schedule, cron_fields_values_lists_ranges_steps) {
  check_cases({
      {"* * * * *", "", "2026-01-01T00:00:00Z", {"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"}},
      {"*/15 * * * *",
       "",
       "2026-01-01T00:07:30Z",
       {"2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z", "2026-01-01T00:45:00Z",
        "2026-01-01T01:00:00Z"}},
      {"10-50/20 * * * *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T00:10:00Z", "2026-01-01T00:30:00Z", "2026-01-01T00:50:00Z",
        "2026-01-01T01:10:00Z"}},
      {"5/20 * * * *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T00:05:00Z", "2026-01-01T00:25:00Z", "2026-01-01T00:45:00Z",
        "2026-01-01T01:05:00Z"}},
      {"0 9,17 * * *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T09:00:00Z", "2026-01-01T17:00:00Z", "2026-01-02T09:00:00Z"}},
      {"0 9-11 * * *",
       "",
       "2026-01-01T10:00:00Z",
       {"2026-01-01T11:00:00Z", "2026-01-02T09:00:00Z", "2026-01-02T10:00:00Z"}},
      {"0 0 1 */3 *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-04-01T00:00:00Z", "2026-07-01T00:00:00Z", "2026-10-01T00:00:00Z",
        "2027-01-01T00:00:00Z"}},
      {"0 0 31 * *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z"}},
      {"59 23 31 12 *",
       "",
       "2026-06-01T00:00:00Z",
       {"2026-12-31T23:59:00Z", "2027-12-31T23:59:00Z"}},
  });
}

TEST(schedule, month_and_day_names_are_case_insensitive) {
  check_cases({
      // 2026-01-01 is a Thursday.
      {"30 8 * * MON-FRI",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T08:30:00Z", "2026-01-02T08:30:00Z", "2026-01-05T08:30:00Z"}},
      {"0 0 * * sun", "", "2026-01-01T00:00:00Z", {"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
      {"0 0 * * 7", "", "2026-01-01T00:00:00Z", {"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
      {"0 0 * * Fri-Sun",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z",
        "2026-01-09T00:00:00Z"}},
      {"0 0 1 jan,JUL *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
      {"0 0 1 Mar-May/2 *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z", "2027-03-01T00:00:00Z"}},
  });
}

TEST(schedule, six_fields_have_seconds_and_results_are_whole_seconds) {
  check_cases({
      {"*/20 * * * * *",
       "",
       "2026-01-01T00:00:05Z",
       {"2026-01-01T00:00:20Z", "2026-01-01T00:00:40Z", "2026-01-01T00:01:00Z"}},
      {"15 30 12 * * *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T12:30:15Z", "2026-01-02T12:30:15Z"}},
      {"* * * * * *",
       "",
       "2026-01-01T00:00:00.500Z",
       {"2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"}},
      {"* * * * *", "", "2026-01-01T00:00:59.999Z", {"2026-01-01T00:01:00Z"}},
  });
}

TEST(schedule, leap_days_and_impossible_dates) {
  check_cases({
      {"0 0 29 2 *", "", "2026-01-01T00:00:00Z", {"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
      // 2100 is not a leap year: the gap is eight years.
      {"0 0 29 2 *", "", "2096-03-01T00:00:00Z", {"2104-02-29T00:00:00Z"}},
      // Feb 1 on a Monday in a leap year: the rarest day pattern, 40 years apart here.
      {"0 0 * 2 MON#5", "", "2072-03-01T00:00:00Z", {"2112-02-29T00:00:00Z"}},
  });
  for (const char* expr : {"0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 30W 2 *"})
    EXPECT_EQ(must_parse(expr).next_after(at("2026-01-01T00:00:00Z")), std::nullopt) << expr;
}

TEST(schedule, day_of_month_or_day_of_week_when_both_restricted) {
  check_cases({
      // Both restricted: the 13th OR any Friday.
      {"0 0 13 * FRI",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z", "2026-01-13T00:00:00Z",
        "2026-01-16T00:00:00Z"}},
      // Day-of-week unrestricted: only the 13th.
      {"0 0 13 * *", "", "2026-01-01T00:00:00Z", {"2026-01-13T00:00:00Z", "2026-02-13T00:00:00Z"}},
      {"0 0 13 * ?", "", "2026-01-01T00:00:00Z", {"2026-01-13T00:00:00Z", "2026-02-13T00:00:00Z"}},
      {"0 0 ? * MON", "", "2026-01-01T00:00:00Z", {"2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z"}},
      // A day-of-month starting with '*' counts as unrestricted (Vixie): 1st/11th/21st/31st
      // that are also Mondays; the first is 2026-05-11.
      {"0 0 */10 * MON", "", "2026-01-01T00:00:00Z", {"2026-05-11T00:00:00Z"}},
  });
}

TEST(schedule, last_day_nearest_weekday_and_nth_weekday) {
  check_cases({
      {"0 0 L * *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z"}},
      {"0 0 L 2 *", "", "2027-12-31T00:00:00Z", {"2028-02-29T00:00:00Z"}},
      {"0 0 L-2 * *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-29T00:00:00Z", "2026-02-26T00:00:00Z", "2026-03-29T00:00:00Z"}},
      {"0 0 1,L * *",
       "",
       "2026-01-15T00:00:00Z",
       {"2026-01-31T00:00:00Z", "2026-02-01T00:00:00Z", "2026-02-28T00:00:00Z"}},
      // Last weekday: Jan 31 and Feb 28 are Saturdays, Mar 31 a Tuesday.
      {"0 0 LW * *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-31T00:00:00Z"}},
      // Feb 15 and Mar 15 are Sundays: the Monday after.
      {"0 0 15W * *",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-15T00:00:00Z", "2026-02-16T00:00:00Z", "2026-03-16T00:00:00Z"}},
      // Aug 1 is a Saturday: 1W never goes back into July, so Monday the 3rd.
      {"0 0 1W 8 *", "", "2026-01-01T00:00:00Z", {"2026-08-03T00:00:00Z"}},
      // May 31 is a Sunday: 31W never goes into June, so Friday the 29th.
      {"0 0 31W 5 *", "", "2026-01-01T00:00:00Z", {"2026-05-29T00:00:00Z"}},
      {"0 0 * * MON#2",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-12T00:00:00Z", "2026-02-09T00:00:00Z", "2026-03-09T00:00:00Z"}},
      {"0 0 * * 1#2,5#1",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-02T00:00:00Z", "2026-01-12T00:00:00Z", "2026-02-06T00:00:00Z"}},
      {"0 0 * * 5L",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-27T00:00:00Z"}},
      {"0 0 * * friL", "", "2026-01-01T00:00:00Z", {"2026-01-30T00:00:00Z"}},
  });
}

TEST(schedule, macros) {
  check_cases({
      {"@yearly", "", "2026-03-01T00:00:00Z", {"2027-01-01T00:00:00Z"}},
      {"@annually", "", "2026-03-01T00:00:00Z", {"2027-01-01T00:00:00Z"}},
      {"@monthly", "", "2026-03-01T00:00:00Z", {"2026-04-01T00:00:00Z"}},
      {"@weekly", "", "2026-01-01T00:00:00Z", {"2026-01-04T00:00:00Z"}},
      {"@daily", "", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z"}},
      {"@midnight", "", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z"}},
      {"@hourly", "", "2026-01-01T00:30:00Z", {"2026-01-01T01:00:00Z"}},
      {"@DAILY", "Asia/Kolkata", "2026-01-01T00:00:00Z", {"2026-01-01T18:30:00Z"}},
  });
  EXPECT_EQ(must_parse("@hourly").type(), schedule::kind::cron);
}

TEST(schedule, every_is_anchored_at_the_unix_epoch) {
  check_cases({
      {"@every 1h30m",
       "",
       "2026-01-01T00:10:00Z",
       {"2026-01-01T01:30:00Z", "2026-01-01T03:00:00Z"}},
      {"@every 7s", "", "2026-01-01T00:00:00Z", {"2026-01-01T00:00:07Z", "2026-01-01T00:00:14Z"}},
      {"@every 13s", "", "2026-01-01T00:00:00Z", {"2026-01-01T00:00:03Z", "2026-01-01T00:00:16Z"}},
      {"@every 1s", "", "2026-01-01T00:00:00.500Z", {"2026-01-01T00:00:01Z"}},
      {"@every 250ms",
       "",
       "2026-01-01T00:00:00.100Z",
       {"2026-01-01T00:00:00.250Z", "2026-01-01T00:00:00.500Z"}},
      // The zone does not move the anchor.
      {"@every 1h", "America/New_York", "2026-01-01T00:10:00Z", {"2026-01-01T01:00:00Z"}},
      {"@every 1h", "Asia/Kolkata", "2026-01-01T00:10:00Z", {"2026-01-01T01:00:00Z"}},
  });
  const auto s = must_parse("@every 90s");
  EXPECT_EQ(s.type(), schedule::kind::every);
  EXPECT_EQ(s.interval(), 90'000);
  EXPECT_EQ(s.next_after(-1), 0);
  EXPECT_EQ(s.next_after(0), 90'000);
  EXPECT_EQ(s.next_after(-90'000), 0);
  EXPECT_EQ(s.next_after(-90'001), -90'000);
}

TEST(schedule, one_shot_fires_once) {
  const auto t = at("2026-11-30T07:00:00.250Z");
  const auto s = schedule::one_shot(t);
  EXPECT_EQ(s.type(), schedule::kind::one_shot);
  EXPECT_EQ(s.at(), t);
  EXPECT_EQ(s.next_after(t - 1), t);
  EXPECT_EQ(s.next_after(t), std::nullopt);
  EXPECT_EQ(s.next_n(0, 5), std::vector<unix_ms>{t});
  auto parsed = schedule::parse_at("2026-11-30T08:00:00+01:00");
  ASSERT_TRUE(static_cast<bool>(parsed));
  EXPECT_EQ(parsed->at(), at("2026-11-30T07:00:00Z"));
  auto bad = schedule::parse_at("next tuesday");
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(view(bad.error()).code, errc::invalid_argument);
  EXPECT_EQ(view(bad.error()).field, "at");
}

TEST(schedule, manual_never_fires) {
  for (const auto& s : {schedule::manual(), schedule{}}) {
    EXPECT_TRUE(s.is_manual());
    EXPECT_EQ(s.next_after(0), std::nullopt);
    EXPECT_TRUE(s.next_n(0, 3).empty());
    EXPECT_EQ(s.at(), std::nullopt);
    EXPECT_EQ(s.interval(), 0);
  }
}

TEST(schedule, dst_gap_fires_once_at_the_transition) {
  check_cases({
      // Europe/Berlin 2026-03-29: 02:00 CET -> 03:00 CEST at 01:00Z.
      {"30 2 * * *",
       "Europe/Berlin",
       "2026-03-28T00:00:00Z",
       {"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
      // Four skipped times and the real 03:00 collapse into one firing at the transition.
      {"*/15 2-3 * * *",
       "Europe/Berlin",
       "2026-03-29T00:00:00Z",
       {"2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z", "2026-03-29T01:30:00Z"}},
      // Asked just before the transition: the skipped 02:30 still fires at the transition.
      {"30 2 * * *", "Europe/Berlin", "2026-03-29T00:59:59.500Z", {"2026-03-29T01:00:00Z"}},
      {"30 2 * * *", "Europe/Berlin", "2026-03-29T01:00:00Z", {"2026-03-30T00:30:00Z"}},
      {"0 3 * * *",
       "Europe/Berlin",
       "2026-03-28T12:00:00Z",
       {"2026-03-29T01:00:00Z", "2026-03-30T01:00:00Z"}},
      // America/Havana 2026-03-08 skips midnight (00:00 CST -> 01:00 CDT at 05:00Z).
      {"@daily",
       "America/Havana",
       "2026-03-07T12:00:00Z",
       {"2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"}},
      // America/New_York 2026-03-08: 02:00 EST -> 03:00 EDT at 07:00Z.
      {"30 2 * * *",
       "America/New_York",
       "2026-03-07T12:00:00Z",
       {"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
  });
}

TEST(schedule, dst_overlap_fires_at_first_occurrence_only) {
  check_cases({
      // Europe/Berlin 2026-10-25: 03:00 CEST -> 02:00 CET at 01:00Z; 02:30 happens twice.
      {"30 2 * * *",
       "Europe/Berlin",
       "2026-10-24T12:00:00Z",
       {"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
      // The second pass through 02:00-02:59 (01:00Z-01:59Z) does not fire.
      {"*/30 * * * *",
       "Europe/Berlin",
       "2026-10-24T23:45:00Z",
       {"2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T02:00:00Z",
        "2026-10-25T02:30:00Z"}},
      // Asked from inside the second pass.
      {"*/30 * * * *", "Europe/Berlin", "2026-10-25T01:10:00Z", {"2026-10-25T02:00:00Z"}},
      {"0 * * * *", "Europe/Berlin", "2026-10-25T00:59:59Z", {"2026-10-25T02:00:00Z"}},
      // America/New_York 2026-11-01: 02:00 EDT -> 01:00 EST at 06:00Z.
      {"30 1 * * *",
       "America/New_York",
       "2026-10-31T12:00:00Z",
       {"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
      {"0 * * * *",
       "America/New_York",
       "2026-11-01T04:30:00Z",
       {"2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z", "2026-11-01T08:00:00Z"}},
  });
}

TEST(schedule, zones_with_non_hour_offsets) {
  check_cases({
      {"0 9 * * *",
       "Asia/Kolkata",
       "2026-01-01T00:00:00Z",
       {"2026-01-01T03:30:00Z", "2026-01-02T03:30:00Z"}},
      {"0 0 * * *", "Asia/Kolkata", "2026-01-01T00:00:00Z", {"2026-01-01T18:30:00Z"}},
      {"0 9 * * *", "Asia/Kathmandu", "2026-01-01T00:00:00Z", {"2026-01-01T03:15:00Z"}},
  });
}

TEST(schedule, utc_spellings_agree) {
  const auto after = at("2026-05-05T05:05:05Z");
  const auto expected = must_parse("7 */5 * * 1-5").next_n(after, 10);
  EXPECT_EQ(must_parse("7 */5 * * 1-5", "UTC").next_n(after, 10), expected);
  EXPECT_EQ(must_parse("7 */5 * * 1-5", "Etc/UTC").next_n(after, 10), expected);
}

TEST(schedule, invalid_inputs_name_the_field) {
  struct bad_case {
    const char* expr;
    const char* tz;
    const char* field;
    const char* message;
  };
  const std::vector<bad_case> cases = {
      {"0 25 * * *", "", "schedule", "cron field 'hour': value 25 out of range 0-23"},
      {"60 * * * *", "", "schedule", "cron field 'minute': value 60 out of range 0-59"},
      {"61 * * * * *", "", "schedule", "cron field 'second': value 61 out of range 0-59"},
      {"0 0 0 * *", "", "schedule", "cron field 'day-of-month': value 0 out of range 1-31"},
      {"0 0 * 13 *", "", "schedule", "cron field 'month': value 13 out of range 1-12"},
      {"0 0 * * 8", "", "schedule", "cron field 'day-of-week': value 8 out of range 0-7"},
      {"*/0 * * * *", "", "schedule", "cron field 'minute': step 0 in '*/0' is not allowed"},
      {"*/x * * * *", "", "schedule", "cron field 'minute': invalid step 'x' in '*/x'"},
      {"0 0 * * FOO", "", "schedule", "cron field 'day-of-week': unknown name 'FOO'"},
      {"0 0 * Foo *", "", "schedule", "cron field 'month': unknown name 'Foo'"},
      {"0 abc * * *", "", "schedule", "cron field 'hour': invalid value 'abc'"},
      {"5-1 * * * *", "", "schedule", "cron field 'minute': range '5-1' is reversed"},
      {"1,,2 * * * *", "", "schedule", "cron field 'minute': empty list element"},
      {"-5 * * * *", "", "schedule", "cron field 'minute': missing value in '-5'"},
      {"? * * * *", "", "schedule",
       "cron field 'minute': '?' is only allowed in day-of-month and day-of-week"},
      {"0 0 * * MON#6", "", "schedule",
       "cron field 'day-of-week': occurrence '6' in 'MON#6' must be 1-5"},
      {"0 0 * * L", "", "schedule",
       "cron field 'day-of-week': bare 'L' is not supported; use dL, e.g. 5L for the last "
       "Friday"},
      {"0 0 L-31 * *", "", "schedule",
       "cron field 'day-of-month': offset 31 in 'L-31' out of range 0-30"},
      {"0 0 32W * *", "", "schedule", "cron field 'day-of-month': value 32 out of range 1-31"},
      {"0 L * * *", "", "schedule", "cron field 'hour': invalid value 'L'"},
      {"* * * *", "", "schedule", "expected 5 or 6 fields, got 4"},
      {"0 0 * * * * *", "", "schedule", "expected 5 or 6 fields, got 7"},
      {"   ", "", "schedule", "empty schedule expression"},
      {"@every", "", "schedule", "@every takes one duration, e.g. '@every 1h30m'"},
      {"@every 0s", "", "schedule", "@every: interval '0s' is below 100ms"},
      {"@every 50ms", "", "schedule", "@every: interval '50ms' is below 100ms"},
      {"@every soon", "", "schedule",
       "@every: invalid duration 'soon' (use e.g. 90s, 1h30m, 500ms)"},
      {"@daily now", "", "schedule", "macro '@daily' takes no arguments"},
      {"@reboot", "", "schedule",
       "unknown macro '@reboot' (known: @yearly @annually @monthly @weekly @daily @midnight "
       "@hourly @every <duration>)"},
      {"0 0 * * *", "Mars/Base", "timezone", "unknown time zone 'Mars/Base'"},
      {"@every 1h", "Mars/Base", "timezone", "unknown time zone 'Mars/Base'"},
  };
  for (const auto& c : cases) {
    const auto s = schedule::parse(c.expr, c.tz);
    ASSERT_FALSE(static_cast<bool>(s)) << c.expr;
    const auto v = view(s.error());
    EXPECT_EQ(v.code, errc::invalid_argument) << c.expr;
    EXPECT_EQ(v.field, c.field) << c.expr;
    EXPECT_EQ(v.message, c.message) << c.expr;
  }
}

TEST(schedule, results_are_strictly_increasing_and_after) {
  const auto s = must_parse("*/7 * * * * *", "Australia/Lord_Howe");
  // Lord Howe shifts by 30 minutes; start just before its 2026-04-05 fall-back.
  const auto after = at("2026-04-04T14:00:00Z");
  const auto ts = s.next_n(after, 2000);
  ASSERT_EQ(ts.size(), 2000u);
  EXPECT_GT(ts.front(), after);
  for (size_t i = 1; i < ts.size(); ++i) ASSERT_LT(ts[i - 1], ts[i]);
}

TEST(schedule, extreme_instants_do_not_overflow) {
  const auto max = std::numeric_limits<unix_ms>::max();
  const auto min = std::numeric_limits<unix_ms>::min();
  EXPECT_EQ(must_parse("* * * * *").next_after(max), std::nullopt);
  EXPECT_EQ(must_parse("@every 1h").next_after(max), std::nullopt);
  EXPECT_EQ(must_parse("* * * * *", "Europe/Berlin").next_after(max), std::nullopt);
  EXPECT_TRUE(must_parse("* * * * *").next_after(min).has_value());
  EXPECT_TRUE(must_parse("@every 1h").next_after(min).has_value());
}

// -- properties ---------------------------------------------------------------------------

// A value in [lo, hi), uniform at every rapidcheck size (inRange alone favours small values
// early on, which would starve the later zones and the later years).
template <typename T = int>
T pick(T lo, T hi) {
  return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(lo, hi));
}

// An independently built model of a generated cron expression: the generator emits the text
// and, item by item, the set it denotes; `matches` checks a civil time the slow way.
struct cron_model {
  std::string text;
  std::bitset<60> sec, min;
  std::bitset<24> hour;
  std::bitset<13> month;
  std::bitset<32> dom;
  std::bitset<7> dow;
  std::vector<int> dom_last_minus, dom_nearest;  // L-n, nW
  bool dom_last_weekday = false;                 // LW
  std::vector<std::pair<int, int>> dow_nth;      // d#n
  std::vector<int> dow_last;                     // dL
  bool dom_star = false, dow_star = false;

  bool dom_matches(date::year_month_day ymd) const {
    using namespace date;
    const int d = int(unsigned(ymd.day()));
    const int last = int(unsigned((ymd.year() / ymd.month() / date::last).day()));
    const auto is_weekday = [&](int day) {
      const weekday wd{sys_days{ymd.year() / ymd.month() / date::day(unsigned(day))}};
      return wd != Saturday && wd != Sunday;
    };
    if (dom[d]) return true;
    for (int n : dom_last_minus)
      if (d == last - n) return true;
    const auto nearest = [&](int n) {  // the weekday of the month closest to n
      int best = -1;
      for (int c = 1; c <= last; ++c)
        if (is_weekday(c) && (best < 0 || std::abs(c - n) < std::abs(best - n))) best = c;
      return best;
    };
    for (int n : dom_nearest)
      if (n <= last && nearest(n) == d) return true;
    if (dom_last_weekday) {
      int lw = last;
      while (!is_weekday(lw)) --lw;
      if (d == lw) return true;
    }
    return false;
  }

  bool dow_matches(date::year_month_day ymd) const {
    using namespace date;
    const int d = int(unsigned(ymd.day()));
    const int last = int(unsigned((ymd.year() / ymd.month() / date::last).day()));
    const int wd = int(weekday{sys_days{ymd}}.c_encoding());
    if (dow[wd]) return true;
    for (auto [w, n] : dow_nth)
      if (w % 7 == wd && (d - 1) / 7 + 1 == n) return true;
    for (int w : dow_last)
      if (w % 7 == wd && d + 7 > last) return true;
    return false;
  }

  bool matches(date::local_seconds t) const {
    using namespace date;
    const auto day = floor<days>(t);
    const year_month_day ymd{day};
    const hh_mm_ss<std::chrono::seconds> hms{t - day};
    if (!sec[hms.seconds().count()] || !min[hms.minutes().count()] || !hour[hms.hours().count()] ||
        !month[unsigned(ymd.month())])
      return false;
    const sys_days sd{ymd};
    const year_month_day as_sys{sd};
    return day_matches(as_sys);
  }

  // Vixie: either day field may match only when both are restricted.
  bool day_matches(date::year_month_day ymd) const {
    if (!month[unsigned(ymd.month())]) return false;
    if (dom_star || dow_star) return dom_matches(ymd) && dow_matches(ymd);
    return dom_matches(ymd) || dow_matches(ymd);
  }
};

const char* const month_name[] = {"",    "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                  "JUL", "AUG", "SEP", "OCT", "NOV", "dec"};
const char* const day_name[] = {"sun", "MON", "Tue", "WED", "THU", "FRI", "SAT"};

// One item of a plain field with values lo..hi (`*` spans lo..star_hi); adds its set to `set`.
template <size_t N>
std::string gen_item(int lo, int hi, int star_hi, const char* const* names, std::bitset<N>& set) {
  const auto name = [&](int v) {
    return names && v <= star_hi && pick(0, 2) == 0 ? std::string{names[v]} : std::to_string(v);
  };
  const int kind = pick(0, 6);
  int a = pick(lo, hi + 1);
  int b = pick(lo, hi + 1);
  if (a > b) std::swap(a, b);
  const int step = pick(1, star_hi - lo + 2);
  switch (kind) {
    case 0:
      for (int v = lo; v <= star_hi; ++v) set[v] = true;
      return "*";
    case 1:
      set[a] = true;
      return name(a);
    case 2:
      for (int v = a; v <= b; ++v) set[v] = true;
      return name(a) + "-" + name(b);
    case 3:
      for (int v = lo; v <= star_hi; v += step) set[v] = true;
      return "*/" + std::to_string(step);
    case 4:
      for (int v = a; v <= b; v += step) set[v] = true;
      return name(a) + "-" + name(b) + "/" + std::to_string(step);
    default:
      for (int v = a; v <= std::max(a, star_hi); v += step) set[v] = true;
      return std::to_string(a) + "/" + std::to_string(step);
  }
}

// A whole plain field: `*` often (so that many expressions fire frequently), else 1-3 items.
template <size_t N>
std::string gen_field(int lo, int hi, int star_hi, const char* const* names, std::bitset<N>& set,
                      bool& star, int star_weight) {
  if (pick(0, 10) < star_weight) {
    for (int v = lo; v <= star_hi; ++v) set[v] = true;
    star = true;
    return pick(0, 5) == 0 ? "*/1" : "*";
  }
  std::string out;
  const int items = pick(1, 4);
  for (int i = 0; i < items; ++i) {
    if (i) out += ",";
    out += gen_item(lo, hi, star_hi, names, set);
  }
  star = out[0] == '*';
  return out;
}

std::string gen_dom(cron_model& m) {
  const int choice = pick(0, 10);
  if (choice < 5) return gen_field(1, 31, 31, nullptr, m.dom, m.dom_star, 6);
  if (choice == 5) {
    m.dom_star = true;
    for (int v = 1; v <= 31; ++v) m.dom[v] = true;
    return "?";
  }
  std::string out;
  const int items = pick(1, 3);
  for (int i = 0; i < items; ++i) {
    if (i) out += ",";
    switch (pick(0, 5)) {
      case 0:
        m.dom_last_minus.push_back(0);
        out += "L";
        break;
      case 1: {
        const int n = pick(0, 31);
        m.dom_last_minus.push_back(n);
        out += "L-" + std::to_string(n);
        break;
      }
      case 2: {
        const int n = pick(1, 32);
        m.dom_nearest.push_back(n);
        out += std::to_string(n) + "W";
        break;
      }
      case 3:
        m.dom_last_weekday = true;
        out += "LW";
        break;
      default:
        out += gen_item(1, 31, 31, nullptr, m.dom);
        break;
    }
  }
  m.dom_star = out[0] == '*';
  return out;
}

std::string gen_dow(cron_model& m) {
  std::bitset<8> raw;
  const int choice = pick(0, 10);
  std::string out;
  if (choice < 6) {
    out = gen_field(0, 7, 6, day_name, raw, m.dow_star, 6);
  } else if (choice == 6) {
    m.dow_star = true;
    raw.set();
    out = "?";
  } else {
    const int items = pick(1, 3);
    for (int i = 0; i < items; ++i) {
      if (i) out += ",";
      const int d = pick(0, 8);
      const std::string dn = d < 7 && pick(0, 2) ? day_name[d] : std::to_string(d);
      switch (pick(0, 3)) {
        case 0: {
          const int n = pick(1, 6);
          m.dow_nth.push_back({d, n});
          out += dn + "#" + std::to_string(n);
          break;
        }
        case 1:
          m.dow_last.push_back(d);
          out += dn + "L";
          break;
        default:
          out += gen_item(0, 7, 6, day_name, raw);
          break;
      }
    }
    m.dow_star = out[0] == '*';
  }
  for (int v = 0; v < 8; ++v)
    if (raw[v]) m.dow[v % 7] = true;
  return out;
}

cron_model gen_cron() {
  cron_model m;
  bool star = false;
  const bool six = pick(0, 2) == 1;
  std::string text;
  if (six) {
    text = gen_field(0, 59, 59, nullptr, m.sec, star, 4) + " ";
  } else {
    m.sec[0] = true;
  }
  text += gen_field(0, 59, 59, nullptr, m.min, star, 4) + " ";
  text += gen_field(0, 23, 23, nullptr, m.hour, star, 5) + " ";
  text += gen_dom(m) + " ";
  text += gen_field(1, 12, 12, month_name, m.month, star, 7) + " ";
  text += gen_dow(m);
  m.text = text;
  return m;
}

const char* const zones[] = {"UTC",
                             "Europe/Berlin",
                             "America/New_York",
                             "Asia/Kolkata",
                             "Australia/Lord_Howe",
                             "America/Santiago",
                             "Pacific/Chatham",
                             "America/Havana"};

// Whether the model fires at whole second `x` under the documented DST rules: a matching
// local time at its first occurrence, or a transition instant ending a gap that contains a
// matching local time.
bool model_fires(const cron_model& m, const date::time_zone* zone, int64_t x) {
  using namespace date;
  using std::chrono::seconds;
  const sys_seconds sx{seconds{x}};
  const auto info = zone->get_info(sx);
  const local_seconds local{seconds{x} + info.offset};
  if (m.matches(local)) {
    const auto li = zone->get_info(local);
    if (li.result != local_info::ambiguous ||
        sx == sys_seconds{local.time_since_epoch()} - li.first.offset)
      return true;
  }
  if (info.begin == sx) {
    const auto prev = zone->get_info(sx - seconds{1});
    for (auto g = local_seconds{seconds{x} + prev.offset}; g < local; g += seconds{1})
      if (m.matches(g)) return true;
  }
  return false;
}

// A start instant in 2021-2035 (where Debian's tzdata lists DST transitions), mostly within
// hours, or within a second, of one of the zone's transitions.
unix_ms gen_after(const date::time_zone* zone) {
  const int64_t base = 1609459200 + pick<int64_t>(0, 15LL * 365 * 86400);
  int64_t t = base;
  const int near = pick(0, 4);  // 0, 1: hours around a transition; 2: a second around one
  if (near < 3) {
    const auto info = zone->get_info(date::sys_seconds{std::chrono::seconds{base}});
    if (info.end < date::sys_days{date::year{2037} / 1 / 1})
      t = info.end.time_since_epoch().count() +
          (near < 2 ? pick(-4 * 3600, 2 * 3600) : pick(-2, 1));
  }
  return t * 1000 + pick(-1, 1000);
}

RC_GTEST_PROP(schedule_property, cron_results_match_increase_and_miss_nothing, ()) {
  const auto m = gen_cron();
  const char* tz = zones[pick<size_t>(0, std::size(zones))];
  const auto* zone = date::locate_zone(tz);
  RC_TAG(tz);
  const auto parsed = schedule::parse(m.text, tz);
  RC_ASSERT(static_cast<bool>(parsed));
  const auto after = gen_after(zone);
  RC_LOG() << "'" << m.text << "' in " << tz << " after " << format_rfc3339(after) << "\n";
  const auto ts = parsed->next_n(after, 12);
  unix_ms prev = after;
  for (auto t : ts) {
    RC_ASSERT(t > prev);
    RC_ASSERT(t % 1000 == 0);
    RC_ASSERT(model_fires(m, zone, t / 1000));
    prev = t;
  }
  // Brute force over a 6-hour window: exactly the model's firing seconds are returned.
  const int64_t t0 = (after >= 0 ? after / 1000 : (after - 999) / 1000) + 1;
  const int64_t end = t0 + 6 * 3600;
  auto next = parsed->next_after(after);
  for (int64_t x = t0; x < end; ++x) {
    const bool returned = next && *next == x * 1000;
    if (returned != model_fires(m, zone, x)) RC_LOG() << "at " << format_rfc3339(x * 1000) << "\n";
    RC_ASSERT(returned == model_fires(m, zone, x));
    if (returned) next = parsed->next_after(*next);
  }
  // No result is missed when a day pattern never matches: nullopt only if the model never
  // fires on any day in the 41-year horizon (checked at day resolution, at noon UTC).
  if (ts.empty()) {
    for (auto d = date::floor<date::days>(date::sys_seconds{std::chrono::seconds{t0}});
         d < date::sys_days{date::year{2077} / 1 / 1}; d += date::days{1}) {
      RC_ASSERT(!m.day_matches(date::year_month_day{d}));
    }
  }
}

RC_GTEST_PROP(schedule_property, next_after_is_the_same_from_anywhere_before_it, ()) {
  const auto m = gen_cron();
  const char* tz = zones[pick<size_t>(0, std::size(zones))];
  const auto parsed = schedule::parse(m.text, tz);
  RC_ASSERT(static_cast<bool>(parsed));
  const auto ts = parsed->next_n(gen_after(date::locate_zone(tz)), 8);
  for (size_t i = 1; i < ts.size(); ++i) {
    const auto between = pick(ts[i - 1], ts[i]);
    RC_ASSERT(parsed->next_after(between) == std::optional<unix_ms>{ts[i]});
  }
}

RC_GTEST_PROP(schedule_property, every_fires_on_multiples_of_the_interval, ()) {
  const auto d = pick<duration_ms>(100, 10LL * 86'400'000);
  const auto after = pick<unix_ms>(-4'000'000'000'000LL, 4'000'000'000'000LL);
  const auto parsed = schedule::parse("@every " + format_duration(d), "Europe/Berlin");
  RC_ASSERT(static_cast<bool>(parsed));
  RC_ASSERT(parsed->interval() == d);
  const auto next = parsed->next_after(after);
  RC_ASSERT(next.has_value());
  RC_ASSERT(*next > after);
  RC_ASSERT(*next - after <= d);
  RC_ASSERT(*next % d == 0);
}

}  // namespace
}  // namespace aisched::trigger
