// Tests for trigger::planner's misfire policies after an outage: fire_once, skip,
// fire_all with its limit, the catch-up window, and slots before a task existed.
// Plain GoogleTest: no actors, no clock; every call gets an explicit instant.
#include "actors/trigger/planner_fixture.hpp"

namespace aisched::trigger {
namespace {

using namespace testing_support;

// -- misfire after an outage --------------------------------------------------------------

// A leader rebuilds at `now`: the task last fired at `last`; slots every minute since.
struct outage {
  unix_ms last = t0;
  unix_ms now = t0 + 10 * minute + 30 * sec;  // 10 missed slots: t0+1m ... t0+10m
};

TEST(planner, misfire_fire_once_fires_only_the_latest_missed_slot) {
  outage o;
  planner p(o.now);
  auto t = make_task(1, "@every 1m");
  t.misfire = misfire_policy::fire_once;
  p.upsert(t, runtime_at(1, o.last), o.now, true);
  EXPECT_LE(p.next_due(), o.now);
  auto d = p.collect(o.now);
  EXPECT_EQ(slots_of(d), std::vector<unix_ms>{o.last + 10 * minute});
  EXPECT_EQ(p.stats().missed, 9u);
  EXPECT_EQ(p.stats().fired, 1u);
  EXPECT_TRUE(p.collect(o.now).empty());
  EXPECT_EQ(p.next_due(), o.last + 11 * minute) << "the schedule continues normally";
}

TEST(planner, misfire_skip_fires_no_missed_slot) {
  outage o;
  planner p(o.now);
  auto t = make_task(1, "@every 1m");
  t.misfire = misfire_policy::skip;
  p.upsert(t, runtime_at(1, o.last), o.now, true);
  EXPECT_TRUE(p.collect(o.now).empty());
  EXPECT_EQ(p.stats().missed, 10u);
  EXPECT_EQ(p.stats().fired, 0u);
  EXPECT_EQ(slots_of(p.collect(o.last + 11 * minute)), std::vector<unix_ms>{o.last + 11 * minute});
}

TEST(planner, misfire_fire_all_fires_the_latest_misfire_limit_slots_in_order) {
  outage o;
  planner p(o.now);
  auto t = make_task(1, "@every 1m");
  t.misfire = misfire_policy::fire_all;
  t.misfire_limit = 3;
  p.upsert(t, runtime_at(1, o.last), o.now, true);
  EXPECT_EQ(slots_of(p.collect(o.now)),
            (std::vector<unix_ms>{o.last + 8 * minute, o.last + 9 * minute, o.last + 10 * minute}));
  EXPECT_EQ(p.stats().missed, 7u);
  EXPECT_EQ(p.stats().fired, 3u);
}

TEST(planner, misfire_fire_all_fires_every_missed_slot_under_the_limit) {
  outage o;
  planner p(o.now);
  auto t = make_task(1, "@every 1m");
  t.misfire = misfire_policy::fire_all;
  t.misfire_limit = 50;
  p.upsert(t, runtime_at(1, o.last), o.now, true);
  EXPECT_EQ(slots_of(p.collect(o.now)), every(o.last + minute, minute, 10));
  EXPECT_EQ(p.stats().missed, 0u);
}

TEST(planner, misfire_catchup_window_excludes_older_slots) {
  outage o;  // now = last + 10m30s; a 3m30s window keeps slots >= last + 7m
  planner p(o.now);
  auto t = make_task(1, "@every 1m");
  t.misfire = misfire_policy::fire_all;
  t.misfire_limit = 100;
  t.catchup_window = 3 * minute + 30 * sec;
  p.upsert(t, runtime_at(1, o.last), o.now, true);
  EXPECT_EQ(slots_of(p.collect(o.now)), every(o.last + 7 * minute, minute, 4));
  EXPECT_EQ(p.stats().missed, 6u);

  planner q(o.now);
  t.misfire = misfire_policy::fire_once;
  t.catchup_window = 20 * sec;  // no missed slot is recent enough
  q.upsert(t, runtime_at(1, o.last), o.now, true);
  EXPECT_TRUE(q.collect(o.now).empty());
  EXPECT_EQ(q.stats().missed, 10u);
}

TEST(planner, misfire_catch_up_starts_after_creation_when_the_task_never_fired) {
  const unix_ms now = t0 + 5 * minute + 1;
  planner p(now);
  auto t = make_task(1, "@every 1m");
  t.created_at = t0 + 2 * minute;  // missed: +3m, +4m, +5m
  t.misfire = misfire_policy::fire_all;
  p.upsert(t, no_runtime(1), now, true);
  EXPECT_EQ(slots_of(p.collect(now)), every(t0 + 3 * minute, minute, 3));
}

TEST(planner, upsert_without_catch_up_ignores_slots_before_now) {
  outage o;
  planner p(o.now);
  p.upsert(make_task(1, "@every 1m"), runtime_at(1, o.last), o.now, false);
  EXPECT_TRUE(p.collect(o.now).empty());
  EXPECT_EQ(p.stats().missed, 0u);
  EXPECT_EQ(p.next_due(), o.last + 11 * minute);
}

TEST(planner, misfire_fire_once_after_a_very_long_outage_fires_the_latest_missed_slot) {
  // An @every 100ms task down for a day misses 864 000 slots: more than the planner walks.
  const unix_ms last = t0;
  const unix_ms now = t0 + 86'400'000 + 50;
  planner p(now);
  auto t = make_task(1, "@every 100ms");
  t.misfire = misfire_policy::fire_once;
  p.upsert(t, runtime_at(1, last), now, true);
  auto fired = slots_of(p.collect(now));
  ASSERT_EQ(fired, std::vector<unix_ms>{t0 + 86'400'000})
      << "fire_once must catch up the latest missed slot; missed = " << p.stats().missed;
  EXPECT_EQ(p.stats().missed, 863'999u);
  EXPECT_EQ(p.next_due(), t0 + 86'400'100);
}

// Issue #43: scheduler_slots_total{outcome="missed"} grew by a paused task's slots at
// every restart. A task paused right after t0 and resumed at t0+8m: a leader that
// rebuilds at t0+10m30s misses only the slots after the resume, and fires none before it.
TEST(planner, slots_of_a_pause_are_not_missed_or_caught_up_by_a_rebuild) {
  outage o;
  const unix_ms resumed_at = o.last + 8 * minute + 10 * sec;
  auto t = make_task(1, "@every 1m");
  t.updated_at = resumed_at;
  t.misfire = misfire_policy::skip;
  planner p(o.now);
  p.upsert(t, runtime_at(1, o.last), o.now, true);
  EXPECT_TRUE(p.collect(o.now).empty());
  EXPECT_EQ(p.stats().missed, 2u) << "only +9m and +10m, after the resume, were missed";
  t.misfire = misfire_policy::fire_all;
  t.misfire_limit = 50;
  planner q(o.now);
  q.upsert(t, runtime_at(1, o.last), o.now, true);
  EXPECT_EQ(slots_of(q.collect(o.now)), every(o.last + 9 * minute, minute, 2));
  EXPECT_EQ(q.stats().missed, 0u);
  // Still paused at the rebuild: nothing is missed, nothing armed.
  t.paused = true;
  planner r(o.now);
  r.upsert(t, runtime_at(1, o.last), o.now, true);
  EXPECT_TRUE(r.collect(o.now).empty());
  EXPECT_EQ(r.stats().missed, 0u);
  EXPECT_FALSE(r.next_due().has_value());
}

// A change this leader commits itself (during its rebuild) does not cut the
// outage's catch-up short: that rebuild is the catch-up.
TEST(planner, a_change_committed_during_the_rebuild_keeps_the_outage_catch_up) {
  outage o;
  auto t = make_task(1, "@every 1m");
  t.updated_at = o.now + 5;
  t.misfire = misfire_policy::skip;
  planner p(o.now);
  p.upsert(t, runtime_at(1, o.last), o.now + 10, true);
  EXPECT_EQ(p.stats().missed, 10u);
}

// -- a one-shot whose instant passed before its create committed ----------------------

// The chaos harness found it: a create sent to a member that was stopped for 3 s
// committed 300 ms after its `at`; the task was acknowledged and never fired.
TEST(planner, one_shot_committed_after_its_instant_fires_once_late) {
  planner p(t0);
  auto t = make_task(1, "");
  t.at = t0 - 300;
  t.created_at = t0;
  p.upsert(t, no_runtime(1), t0, false);
  EXPECT_EQ(slots_of(p.collect(t0)), std::vector<unix_ms>{t0 - 300});
  commit(p, 1, t0 - 300, instance_state::success);
  EXPECT_TRUE(p.collect(t0 + 10 * sec).empty());
  EXPECT_FALSE(p.next_due().has_value());
  EXPECT_EQ(p.stats().fired, 1u);
  // A leader that rebuilds from the log does the same for it, and nothing once it fired.
  planner q(t0 + sec);
  q.upsert(t, no_runtime(1), t0 + sec, true);
  EXPECT_EQ(slots_of(q.collect(t0 + sec)), std::vector<unix_ms>{t0 - 300});
  planner r(t0 + sec);
  r.upsert(t, runtime_at(1, t0 - 300), t0 + sec, true);
  EXPECT_TRUE(r.collect(t0 + sec).empty());
}

TEST(planner, one_shot_committed_after_its_instant_is_missed_under_skip) {
  planner p(t0);
  auto t = make_task(1, "");
  t.at = t0 - 300;
  t.created_at = t0;
  t.misfire = misfire_policy::skip;
  p.upsert(t, no_runtime(1), t0, false);
  EXPECT_TRUE(p.collect(t0 + sec).empty());
  EXPECT_EQ(p.stats().missed, 1u);
  EXPECT_FALSE(p.next_due().has_value());
}

}  // namespace
}  // namespace aisched::trigger
