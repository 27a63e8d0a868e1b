// Pools and calendars in proto: civil dates, name rules, calendar ranges
// sorted and merged, their strict JSON (bad values name the field), and the
// task fields that refer to them (JSON round trip, validation).
#include <boost/json.hpp>

#include "proto/proto_fixture.hpp"

namespace aisched::proto {
namespace {

using namespace testing_support;
namespace json = boost::json;

json::value parsed(const char* text) { return json::parse(text); }

std::string field_of(const caf::error& err) { return view(err).field; }

TEST(controls, days_parse_and_format_as_civil_dates) {
  EXPECT_EQ(parse_day("1970-01-01"), 0);
  EXPECT_EQ(parse_day("2026-12-25"), 20'812);
  EXPECT_EQ(format_day(20'812), "2026-12-25");
  EXPECT_EQ(parse_day("2024-02-29"), parse_day("2024-02-28").value() + 1);
  for (auto bad : {"2026-02-29", "2026-13-01", "2026-1-01", "26-01-01", "2026/01/01", "",
                   "2026-01-01T00:00:00Z", "2026-01-0x"})
    EXPECT_FALSE(parse_day(bad)) << bad;
}

TEST(controls, calendars_merge_overlapping_and_adjacent_ranges) {
  calendar c;
  c.days = {{10, 12}, {1, 1}, {13, 14}, {11, 11}, {20, 25}};
  ASSERT_FALSE(normalize_calendar(c));
  EXPECT_EQ(c.days, (std::vector<day_range>{{1, 1}, {10, 14}, {20, 25}}));
  EXPECT_TRUE(c.excludes(1));
  EXPECT_FALSE(c.excludes(2));
  EXPECT_TRUE(c.excludes(14));
  EXPECT_FALSE(c.excludes(15));
  EXPECT_TRUE(c.excludes(25));
  EXPECT_FALSE(c.excludes(26));
  EXPECT_FALSE(calendar{}.excludes(0));
}

TEST(controls, calendar_json_reads_dates_and_ranges_strictly) {
  auto c = calendar_from_json(
      parsed(R"({"description":"xmas","dates":["2026-12-26","2026-12-24..2026-12-25"]})"), {});
  ASSERT_TRUE(c) << view(c.error()).message;
  EXPECT_EQ(c->days, (std::vector<day_range>{{20'811, 20'813}}));
  EXPECT_EQ(json::serialize(to_json(*c).at("dates")), R"(["2026-12-24..2026-12-26"])");
  EXPECT_EQ(field_of(calendar_from_json(parsed(R"({"dates":["2026-12-32"]})"), {}).error()),
            "dates[0]");
  EXPECT_EQ(field_of(calendar_from_json(parsed(R"({"dates":["x","2026-12-01"]})"), {}).error()),
            "dates[0]");
  EXPECT_EQ(field_of(calendar_from_json(parsed(R"({"dates":[3]})"), {}).error()), "dates[0]");
  EXPECT_EQ(field_of(calendar_from_json(parsed(R"({"dates":"2026-12-01"})"), {}).error()),
            "dates");
  EXPECT_EQ(field_of(calendar_from_json(parsed(R"({"description":"x"})"), {}).error()), "dates");
  EXPECT_EQ(field_of(calendar_from_json(parsed(R"({"dates":[],"when":1})"), {}).error()), "when");
}

TEST(controls, pool_json_needs_a_size_in_range) {
  auto p = pool_from_json(parsed(R"({"size":4,"name":"ignored"})"), pool{"acme", "db", 0, 0});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->size, 4u);
  EXPECT_EQ(p->name, "db");
  for (auto bad : {R"({})", R"({"size":-1})", R"({"size":100001})", R"({"size":"4"})",
                   R"({"size":1.5})"})
    EXPECT_EQ(field_of(pool_from_json(parsed(bad), {}).error()), "size") << bad;
  EXPECT_EQ(field_of(pool_from_json(parsed(R"({"size":1,"max":2})"), {}).error()), "max");
}

TEST(controls, names_are_short_and_plain) {
  EXPECT_FALSE(validate_control_name("db.primary-1_a"));
  for (auto bad : {"", "has space", "slash/y", "ünï", std::string(65, 'a').c_str()})
    EXPECT_EQ(field_of(validate_control_name(bad, "pool")), "pool") << bad;
}

TEST(controls, task_fields_round_trip_and_validate) {
  auto t = task_from_json(parsed(R"({"name":"n","command":"true","schedule":"@hourly",
      "max_runs":3,"max_concurrency":2,"pool":"db","exclude_calendar":"holidays"})"));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->max_runs, 3u);
  EXPECT_EQ(t->max_concurrency, 2u);
  EXPECT_EQ(t->pool, "db");
  EXPECT_EQ(t->exclude_calendar, "holidays");
  EXPECT_FALSE(validate_task(*t));
  auto back = task_from_json(to_json(*t));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, *t);

  auto manual = *t;
  manual.schedule.clear();
  EXPECT_EQ(field_of(validate_task(manual)), "max_runs") << "nothing to count";
  auto bad_pool = *t;
  bad_pool.pool = "a b";
  EXPECT_EQ(field_of(validate_task(bad_pool)), "pool");
  auto bad_cal = *t;
  bad_cal.exclude_calendar = "x/y";
  EXPECT_EQ(field_of(validate_task(bad_cal)), "exclude_calendar");
  auto huge = *t;
  huge.max_concurrency = 200'000;
  EXPECT_EQ(field_of(validate_task(huge)), "max_concurrency");
  EXPECT_EQ(field_of(task_from_json(parsed(R"({"max_runs":-1})")).error()), "max_runs");
}

}  // namespace
}  // namespace aisched::proto
