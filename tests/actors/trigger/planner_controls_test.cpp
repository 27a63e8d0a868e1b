// trigger::planner under the scheduling controls it owns: max_runs (a schedule
// ends after N fires, counted from replicated fire records so a new leader
// continues the count; manual runs neither count nor are refused) and
// exclusion calendars (dates skipped in the task's zone, re-armed when the
// calendar changes, skipped by catch-up too; trigger::exclusion previews them).
#include "actors/trigger/planner_fixture.hpp"

namespace aisched::trigger {
namespace {

using namespace testing_support;

proto::task with_max_runs(proto::task t, uint32_t n) {
  t.max_runs = n;
  return t;
}

proto::calendar holidays(std::vector<std::pair<const char*, const char*>> ranges) {
  proto::calendar c;
  c.name = "holidays";
  for (auto& [from, to] : ranges)
    c.days.push_back({*proto::parse_day(from), *proto::parse_day(to)});
  EXPECT_FALSE(proto::normalize_calendar(c));
  return c;
}

proto::task excluding(proto::task t, const char* tz) {
  t.exclude_calendar = "holidays";
  t.timezone = tz;
  return t;
}

// -- max_runs -------------------------------------------------------------------------------

TEST(planner_controls, max_runs_three_fires_three_slots_then_disarms) {
  planner p(t0);
  p.upsert(with_max_runs(make_task(1, "@every 1s"), 3), no_runtime(1), t0, false);
  auto fires = drive(p, t0 + 10 * sec);
  EXPECT_EQ(slots_of(fires), every(t0 + sec, sec, 3));
  for (auto& f : fires) EXPECT_TRUE(f.scheduled) << "counted in the fire record";
  EXPECT_EQ(p.scheduled_fires(1), 3u);
  EXPECT_FALSE(p.due_of(1).has_value()) << "the schedule ended: nothing armed";
  EXPECT_EQ(p.armed_count(), 0u);
}

TEST(planner_controls, a_new_leader_continues_the_count_from_the_fire_records) {
  // The previous leader's fires committed two: a rebuild (catch_up) fires one more.
  planner p(t0);
  auto rt = runtime_at(1, t0 - sec);
  rt.scheduled_fires = 2;
  p.upsert(with_max_runs(make_task(1, "@every 1s"), 3), rt, t0, true);
  auto fires = drive(p, t0 + 10 * sec);
  EXPECT_EQ(fires.size(), 1u);
  EXPECT_EQ(p.scheduled_fires(1), 3u);
  // An update commits with an empty runtime: the count is kept, not reset.
  p.upsert(with_max_runs(make_task(1, "@every 1s"), 3), no_runtime(1), t0 + 10 * sec, false);
  EXPECT_TRUE(drive(p, t0 + 20 * sec).empty());
}

TEST(planner_controls, a_fire_that_failed_to_commit_does_not_count) {
  planner p(t0);
  p.upsert(with_max_runs(make_task(1, "@every 1s"), 1), no_runtime(1), t0, false);
  auto d = p.collect(t0 + sec);
  ASSERT_EQ(d.fires.size(), 1u);
  EXPECT_FALSE(p.due_of(1).has_value()) << "its one run is on its way";
  // Leadership was lost before the commit: the trigger settles and requeues.
  p.settle(d.fires[0]);
  p.requeue(d.fires[0]);
  EXPECT_EQ(p.scheduled_fires(1), 0u);
  auto again = p.collect(t0 + sec + 200);
  EXPECT_EQ(slots_of(again), std::vector<unix_ms>{t0 + sec}) << "the same slot, decided again";
  EXPECT_EQ(p.scheduled_fires(1), 1u);
}

TEST(planner_controls, manual_runs_neither_count_nor_are_refused_after_the_end) {
  planner p(t0);
  p.upsert(with_max_runs(make_task(1, "@every 1s"), 2), no_runtime(1), t0, false);
  auto manual = p.trigger_now("", 1, t0 + 500);
  ASSERT_TRUE(manual);
  ASSERT_EQ(manual->fires.size(), 1u);
  EXPECT_FALSE(manual->fires[0].scheduled);
  commit_all(p, *manual);
  EXPECT_EQ(slots_of(drive(p, t0 + 10 * sec)), every(t0 + sec, sec, 2));
  auto after_end = p.trigger_now("", 1, t0 + 11 * sec);
  ASSERT_TRUE(after_end) << "an operator's run is the operator's call";
  EXPECT_EQ(after_end->fires.size(), 1u);
}

TEST(planner_controls, raising_max_runs_resumes_the_schedule) {
  planner p(t0);
  p.upsert(with_max_runs(make_task(1, "@every 1s"), 1), no_runtime(1), t0, false);
  EXPECT_EQ(drive(p, t0 + 5 * sec).size(), 1u);
  p.upsert(with_max_runs(make_task(1, "@every 1s"), 3), no_runtime(1), t0 + 5 * sec, false);
  EXPECT_EQ(slots_of(drive(p, t0 + 20 * sec)), every(t0 + 6 * sec, sec, 2));
}

TEST(planner_controls, catch_up_fires_no_more_than_the_runs_left) {
  planner p(t0);
  auto t = with_max_runs(make_task(1, "@every 1s"), 2);
  t.misfire = misfire_policy::fire_all;
  t.misfire_limit = 10;
  p.upsert(t, runtime_at(1, t0 - 10 * sec), t0, true);  // ten slots missed
  EXPECT_EQ(drive(p, t0 + 10 * sec).size(), 2u);
}

// -- exclusion calendars -------------------------------------------------------------------

TEST(planner_controls, an_excluded_date_does_not_fire_in_the_tasks_zone) {
  planner p(t0);
  p.put_calendar(holidays({{"2026-01-02", "2026-01-03"}}), t0);
  // 03:00 in Berlin (UTC+1 in January) is 02:00Z.
  p.upsert(excluding(make_task(1, "0 3 * * *"), "Europe/Berlin"), no_runtime(1), t0, false);
  EXPECT_EQ(slots_of(drive(p, at("2026-01-05T12:00:00Z"))),
            (std::vector<unix_ms>{at("2026-01-01T02:00:00Z"), at("2026-01-04T02:00:00Z"),
                                  at("2026-01-05T02:00:00Z")}));
}

TEST(planner_controls, the_zone_decides_which_instants_an_excluded_date_covers) {
  // 2026-01-02 in Auckland (UTC+13) runs from 2026-01-01T11:00Z to 2026-01-02T11:00Z.
  planner p(t0);
  p.put_calendar(holidays({{"2026-01-02", "2026-01-02"}}), t0);
  p.upsert(excluding(make_task(1, "@every 1h"), "Pacific/Auckland"), no_runtime(1), t0, false);
  auto fired = slots_of(drive(p, at("2026-01-02T13:00:00Z")));
  std::vector<unix_ms> want = every(t0 + 3'600'000, 3'600'000, 10);  // 01:00Z .. 10:00Z
  for (auto t : every(at("2026-01-02T11:00:00Z"), 3'600'000, 3)) want.push_back(t);
  EXPECT_EQ(fired, want);
}

TEST(planner_controls, a_calendar_that_changes_rearms_the_tasks_naming_it) {
  planner p(t0);
  p.upsert(excluding(make_task(1, "0 3 * * *"), "UTC"), no_runtime(1), t0, false);
  EXPECT_EQ(p.due_of(1), at("2026-01-01T03:00:00Z")) << "unknown calendar: excludes nothing";
  p.put_calendar(holidays({{"2026-01-01", "2026-01-01"}}), t0);
  EXPECT_EQ(p.due_of(1), at("2026-01-02T03:00:00Z"));
  p.remove_calendar("default", "holidays", t0);
  EXPECT_EQ(p.due_of(1), at("2026-01-01T03:00:00Z"));
}

TEST(planner_controls, catch_up_skips_excluded_slots) {
  planner p(at("2026-01-06T00:00:00Z"));
  p.put_calendar(holidays({{"2026-01-03", "2026-01-04"}}), t0);
  auto t = excluding(make_task(1, "0 3 * * *"), "UTC");
  t.misfire = misfire_policy::fire_all;
  p.upsert(t, runtime_at(1, at("2026-01-01T03:00:00Z")), at("2026-01-06T00:00:00Z"), true);
  EXPECT_EQ(slots_of(drive(p, at("2026-01-06T00:00:00Z"))),
            (std::vector<unix_ms>{at("2026-01-02T03:00:00Z"), at("2026-01-05T03:00:00Z")}));
}

TEST(planner_controls, events_on_an_excluded_date_do_not_fire_the_task) {
  planner p(t0);
  p.put_calendar(holidays({{"2026-01-01", "2026-01-01"}}), t0);
  auto t = excluding(make_task(1, ""), "UTC");
  t.event = "deploy";
  p.upsert(t, no_runtime(1), t0, false);
  EXPECT_TRUE(p.fire_event("", "deploy", "{}", t0 + sec).fires.empty());
  EXPECT_EQ(p.fire_event("", "deploy", "{}", at("2026-01-02T00:00:00Z")).fires.size(), 1u);
}

TEST(exclusion, next_n_previews_the_fires_left_within_the_window) {
  auto s = schedule::parse("0 9 * * MON-FRI", "America/New_York");
  ASSERT_TRUE(s);
  exclusion x{holidays({{"2026-12-24", "2026-12-25"}, {"2026-12-31", "2027-01-01"}}),
              "America/New_York"};
  auto times = x.next_n(*s, at("2026-12-23T00:00:00Z"), 4, 0, 0);
  EXPECT_EQ(times, (std::vector<unix_ms>{at("2026-12-23T14:00:00Z"), at("2026-12-28T14:00:00Z"),
                                         at("2026-12-29T14:00:00Z"),
                                         at("2026-12-30T14:00:00Z")}));
  EXPECT_TRUE(x.excludes(at("2026-12-25T04:59:59Z"))) << "23:59:59 on the 24th in New York";
  EXPECT_FALSE(x.excludes(at("2026-12-24T04:59:59Z"))) << "the 23rd in New York";
  EXPECT_TRUE(exclusion{}.next_n(*s, at("2026-12-23T00:00:00Z"), 2, 0, 0).size() == 2);
}

}  // namespace
}  // namespace aisched::trigger
