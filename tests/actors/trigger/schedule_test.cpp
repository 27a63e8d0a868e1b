// Tests for trigger::schedule: table tests with concrete instants for every cron feature,
// macros, @every, one-shot, manual, DST gaps and overlaps, and error messages
// (properties against a model: schedule_property_test).
#include "actors/trigger/schedule_fixture.hpp"

namespace aisched::trigger {
namespace {

using namespace testing_support;

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
      // Only a literal '*' or '?' is unrestricted: '*/10' restricts, so the 1st, 11th, 21st
      // and 31st OR any Monday (Vixie cron would fire only on such days that are Mondays).
      {"0 0 */10 * MON",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-05T00:00:00Z", "2026-01-11T00:00:00Z", "2026-01-12T00:00:00Z",
        "2026-01-19T00:00:00Z", "2026-01-21T00:00:00Z", "2026-01-26T00:00:00Z",
        "2026-01-31T00:00:00Z", "2026-02-01T00:00:00Z"}},
  });
}

// The README's example: every odd day and every Monday (2026-01-05 and -12 are Mondays).
TEST(schedule, a_stepped_day_field_is_restricted_so_either_day_fires) {
  check_cases({
      {"0 0 */2 * 1",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-03T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-07T00:00:00Z",
        "2026-01-09T00:00:00Z", "2026-01-11T00:00:00Z", "2026-01-12T00:00:00Z",
        "2026-01-13T00:00:00Z"}},
      // The same in the other field: a stepped day-of-week restricts as well.
      {"0 0 15 * */3",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-07T00:00:00Z",
        "2026-01-10T00:00:00Z", "2026-01-11T00:00:00Z", "2026-01-14T00:00:00Z",
        "2026-01-15T00:00:00Z"}},
      // '*/1' covers every day yet restricts: every day fires, not only Mondays.
      {"0 0 */1 * MON",
       "",
       "2026-01-01T00:00:00Z",
       {"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z"}},
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

}  // namespace
}  // namespace aisched::trigger
