// The scheduler simulation's slot and DAG checkers (tests/sim/scheduler_sim_checks)
// on hand-made histories: for each, what it must flag and what it must let
// pass (the others: scheduler_sim_run_checks_test). No simulation runs here;
// scheduler_sim_test runs the seeds.
#include "tests/sim/scheduler_sim_checks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "actors/trigger/planner.hpp"
#include "tests/sim/scheduler_sim_checks_fixture.hpp"

namespace aisched::sim {
namespace {

using namespace checks_fixture;

// -- slots ---------------------------------------------------------------------

TEST(scheduler_sim_checks, slots_flag_a_missed_an_early_a_late_an_extra_and_a_failed_run) {
  auto t = every(7, "every-10s", 10'000);
  history h;
  proto::applied a;
  a.index = 1;
  a.instances = {
      run_at(7, 100'000, 100'000, instance_state::success),  // on time
      // 110'000: never fired
      run_at(7, 120'000, 119'500, instance_state::success),  // early
      run_at(7, 130'000, 133'000, instance_state::success),  // late, no fault
      run_at(7, 140'000, 145'000, instance_state::success),  // late, in a fault window
      run_at(7, 150'000, 150'000, instance_state::failed),   // failed with attempts left
      run_at(7, 105'000, 105'000, instance_state::success),  // no slot of the task
  };
  h.record("n1", a);
  std::vector<fault_window> faults{{"leader_crash", "n1", 138'000, 139'000}};
  slot_bounds b{100'000, 150'000, 1'000, 15'000};
  auto found = check_slots({t}, faults, runs_of(h), b);
  EXPECT_EQ(mentioning(found, "never fired"), 1u);
  EXPECT_EQ(mentioning(found, "before its slot"), 1u);
  EXPECT_EQ(mentioning(found, "after its slot"), 1u);
  EXPECT_EQ(mentioning(found, "no slot of it"), 1u);
  EXPECT_EQ(mentioning(found, "did not end success"), 1u);
  EXPECT_EQ(mentioning(found, format_rfc3339(140'000)), 0u)
      << "a slot in a fault window is excused";
  EXPECT_EQ(found.size(), 5u) << all(found);
}

TEST(scheduler_sim_checks, a_run_failed_with_every_attempt_spent_is_allowed) {
  sim_task t;
  t.id = 3;
  t.name = "once";
  t.at = 50'000;
  t.max_attempts = 3;
  history h;
  proto::applied a;
  a.index = 4;
  a.instances = {run_at(3, 50'000, 50'000, instance_state::failed, 3)};
  h.record("n2", a);
  auto found = check_slots({t}, {}, runs_of(h), slot_bounds{0, 100'000, 1'000, 15'000});
  EXPECT_TRUE(found.empty()) << all(found);
}

TEST(scheduler_sim_checks, a_limited_task_may_start_late_and_another_may_not) {
  auto limited = every(1, "pooled", 10'000);
  limited.pool = "p";
  auto plain = every(2, "plain", 10'000);
  auto h = history_of({run_at(1, 10'000, 15'000, instance_state::success),
                       run_at(2, 10'000, 15'000, instance_state::success)});
  auto found = check_slots({limited, plain}, {}, runs_of(h), slot_bounds{10'000, 10'000, 1'000, 0});
  EXPECT_EQ(mentioning(found, "task plain"), 1u);
  EXPECT_EQ(mentioning(found, "after its slot"), 1u);
  EXPECT_EQ(found.size(), 1u) << all(found);
}

TEST(scheduler_sim_checks, slots_of_a_paused_task_are_skipped_and_one_fired_inside_is_flagged) {
  auto t = every(4, "paused", 10'000);
  // Pause asked at 100.5 s, acknowledged at 101 s; resume asked at 150.2 s,
  // acknowledged at 150.4 s. Margin 2 s: edges [98.5, 103] and [148.2, 152.4].
  t.paused.push_back(pause_window{100'500, 101'000, 150'200, 150'400});
  auto withdrawn = rec(4, 100'000, 1, instance_state::cancelled, "n1", 0, 100'600,
                       "withdrawn before its instant: its task was paused");
  auto h = history_of({
      run_at(4, 90'000, 90'000, instance_state::success),
      withdrawn,                                             // an edge: may end cancelled
      run_at(4, 120'000, 120'000, instance_state::success),  // inside the pause
      // 110'000, 130'000, 140'000: paused; 150'000: an edge, not fired
      // 160'000: never fired
      run_at(4, 170'000, 170'000, instance_state::success),
  });
  auto found = check_slots({t}, {}, runs_of(h), slot_bounds{90'000, 170'000, 1'000, 0, 2'000});
  EXPECT_EQ(mentioning(found, "fired while paused"), 1u);
  EXPECT_EQ(mentioning(found, format_rfc3339(120'000)), 1u);
  EXPECT_EQ(mentioning(found, "never fired"), 1u);
  EXPECT_EQ(mentioning(found, format_rfc3339(160'000)), 1u);
  EXPECT_EQ(found.size(), 2u) << all(found);
  // Without the pause, the withdrawn run and the skipped slots are violations.
  t.paused.clear();
  auto unpaused = check_slots({t}, {}, runs_of(h), slot_bounds{90'000, 170'000, 1'000, 0, 2'000});
  EXPECT_GE(mentioning(unpaused, "never fired"), 4u) << all(unpaused);
  EXPECT_EQ(mentioning(unpaused, format_rfc3339(100'000)), 2u)
      << all(unpaused);  // never started, cancelled
}

TEST(scheduler_sim_checks, cron_slots_are_read_in_the_tasks_zone) {
  constexpr unix_ms t0 = 1'767'225'600'000;  // 2026-01-01T00:00:00Z: 08:45 in Eucla (+08:45)
  sim_task t;
  t.id = 6;
  t.name = "cron";
  t.cron = "*/10 */2 * * * *";  // every 10 s of the even minutes, in the zone
  t.timezone = "Australia/Eucla";
  t.max_attempts = 3;
  std::vector<proto::instance> steps;
  for (unix_ms s = t0 + 60'000; s <= t0 + 100'000; s += 10'000)  // 08:46:00-08:46:40
    steps.push_back(run_at(6, s, s, instance_state::success));
  // 08:46:50 never fired; 08:45:30 is no slot (it would be one in UTC).
  steps.push_back(run_at(6, t0 + 30'000, t0 + 30'000, instance_state::success));
  auto runs = runs_of(history_of(steps));
  slot_bounds b{t0, t0 + 119'999, 1'000, 0};
  auto found = check_slots({t}, {}, runs, b);
  EXPECT_EQ(mentioning(found, format_rfc3339(t0 + 110'000) + ": never fired"), 1u);
  EXPECT_EQ(mentioning(found, "a run at " + format_rfc3339(t0 + 30'000) + ", which is no slot"),
            1u);
  EXPECT_EQ(found.size(), 2u) << all(found);
  // Read in UTC the same runs are wrong: 00:00:30 is a slot, 00:01 is no minute of it.
  t.timezone = "";
  auto utc = check_slots({t}, {}, runs, b);
  EXPECT_EQ(mentioning(utc, "which is no slot"), 5u) << all(utc);
  EXPECT_EQ(mentioning(utc, "never fired"), 5u) << all(utc);
  // A schedule the trigger cannot read is a violation, not a task without slots.
  t.cron = "61 * * * * *";
  auto bad = check_slots({t}, {}, runs, b);
  EXPECT_EQ(mentioning(bad, "task cron: its schedule cannot be read"), 1u) << all(bad);
}

TEST(scheduler_sim_checks, a_jittered_run_starts_at_its_jittered_instant_never_a_millisecond_before) {
  auto t = every(5, "jittered", 10'000);
  t.jitter = 3'000;
  proto::task def;  // the trigger's function of the task's id and jitter
  def.id = t.id;
  def.jitter = t.jitter;
  auto j = [&](unix_ms slot) { return trigger::planner::jittered(def, slot); };
  using s = instance_state;
  std::vector<proto::instance> steps{
      run_at(5, 100'000, j(100'000), s::success),          // on its jittered instant
      run_at(5, 110'000, j(110'000) - 1, s::success),      // 1 ms early
      run_at(5, 120'000, j(120'000) + 1'000, s::success),  // eps after it: in time
      run_at(5, 130'000, j(130'000) + 1'001, s::success),  // 1 ms late
  };
  // From 140 s, the first slot whose jittered instant is after it starts at the
  // bare slot: a4b2b7c's bug (a new leader inside the jitter fired the slot).
  unix_ms inside = 140'000;
  for (; j(inside) == inside; inside += 10'000) steps.push_back(run_at(5, inside, inside, s::success));
  steps.push_back(run_at(5, inside, inside, s::success));
  auto found = check_slots({t}, {}, runs_of(history_of(steps)),
                           slot_bounds{100'000, inside, 1'000, 0});
  EXPECT_EQ(mentioning(found, "before its jittered instant"), 2u);
  EXPECT_EQ(mentioning(found, format_rfc3339(110'000) + ": started 1ms before"), 1u);
  EXPECT_EQ(mentioning(found, format_rfc3339(inside) + ": started"), 1u);
  EXPECT_EQ(mentioning(found, format_rfc3339(130'000) + ": started 1s1ms after its jittered"),
            1u);
  EXPECT_EQ(found.size(), 3u) << all(found);
}

// A task every 10 s whose runs outlast its period: the run of 100 s lasts
// until 125 s; the 110 s slot waits and runs when it ends; the 120 s slot,
// due while the 100 s run runs and 110 s waits, has no run; the 130 s slot
// waits for the 110 s run; the 140 s slot runs on its instant.
timed_steps buffered_runs(uint64_t task) {
  timed_steps steps;
  add_run(steps, task, 100'000, 99'750, 100'000, 125'000);
  add_run(steps, task, 110'000, 125'010, 125'020, 131'000);
  add_run(steps, task, 130'000, 131'010, 131'020, 132'000);
  add_run(steps, task, 140'000, 139'750, 140'000, 141'000);
  return steps;
}

TEST(scheduler_sim_checks, buffer_one_lets_one_slot_wait_and_drops_a_slot_while_one_waits) {
  auto t = every(8, "overlap", 10'000);
  auto runs = runs_of(timed_history(buffered_runs(8)));
  slot_bounds b{100'000, 140'000, 1'000, 0};
  t.overlap = proto::overlap_policy::buffer_one;
  auto found = check_slots({t}, {}, runs, b);
  EXPECT_TRUE(found.empty()) << all(found);
  // Skip fires a slot on its instant or never: 110 s and 130 s fired late.
  t.overlap = proto::overlap_policy::skip;
  auto skip = check_slots({t}, {}, runs, b);
  EXPECT_EQ(mentioning(skip, format_rfc3339(110'000) + ": started 15s20ms after its slot"), 1u);
  EXPECT_EQ(mentioning(skip, format_rfc3339(130'000) + ": started 1s20ms after its slot"), 1u);
  EXPECT_EQ(skip.size(), 2u) << all(skip);
  // Allow drops nothing.
  t.overlap = proto::overlap_policy::allow;
  auto allow = check_slots({t}, {}, runs, b);
  EXPECT_EQ(mentioning(allow, format_rfc3339(120'000) + ": never fired"), 1u);
  EXPECT_EQ(allow.size(), 3u) << all(allow);
}

TEST(scheduler_sim_checks, overlap_flags_a_slot_dropped_while_idle_a_skip_fired_late_and_a_double) {
  auto t = every(8, "overlap", 10'000);
  timed_steps steps;
  add_run(steps, 8, 100'000, 99'750, 100'000, 115'000);  // 110 s: none, the run was active
  add_run(steps, 8, 120'000, 119'750, 120'000, 121'000);  // 130 s: none, nothing was active
  add_run(steps, 8, 140'000, 139'750, 140'000, 158'000);
  add_run(steps, 8, 150'000, 158'010, 158'020, 159'000);  // fired when the one before ended
  add_run(steps, 8, 160'000, 159'750, 160'000, 161'000);
  auto twice = rec(8, 160'000, 1, instance_state::success, "n2", 160'000, 161'000);
  twice.id = proto::make_instance_id(8, 160'000, 1);  // the slot fired again
  twice.shard = 1;
  steps.emplace_back(161'000, twice);
  auto runs = runs_of(timed_history(steps));
  slot_bounds b{100'000, 160'000, 1'000, 0};
  t.overlap = proto::overlap_policy::skip;
  auto skip = check_slots({t}, {}, runs, b);
  EXPECT_EQ(mentioning(skip, format_rfc3339(110'000)), 0u) << "skipped while a run was active";
  EXPECT_EQ(mentioning(skip, format_rfc3339(130'000) + ": never fired"), 1u);
  EXPECT_EQ(mentioning(skip, format_rfc3339(150'000) + ": started 8s20ms after its slot"), 1u);
  EXPECT_EQ(mentioning(skip, format_rfc3339(160'000) + ": 2 runs"), 1u);
  EXPECT_EQ(skip.size(), 3u) << all(skip);
  // The known gap: a new leader's catch-up fires a skipped slot late; a leader
  // change between its due instant and its start excuses it (for `allow`, only
  // one within eps of the due instant does).
  std::vector<fault_window> failover{{"leader_crash", "n1", 155'000, 156'000}};
  auto caught_up = check_slots({t}, failover, runs, b);
  EXPECT_EQ(mentioning(caught_up, format_rfc3339(150'000)), 0u) << all(caught_up);
  EXPECT_EQ(caught_up.size(), 2u) << all(caught_up);
  // Buffer_one keeps the 110 s slot (nothing waited): dropping it is a violation.
  t.overlap = proto::overlap_policy::buffer_one;
  auto buffered = check_slots({t}, {}, runs, b);
  EXPECT_EQ(mentioning(buffered, format_rfc3339(110'000) + ": never fired"), 1u);
  EXPECT_EQ(mentioning(buffered, format_rfc3339(130'000) + ": never fired"), 1u);
  EXPECT_EQ(mentioning(buffered, format_rfc3339(150'000)), 0u) << "due when the one before ended";
  EXPECT_EQ(mentioning(buffered, format_rfc3339(160'000) + ": 2 runs"), 1u);
  EXPECT_EQ(buffered.size(), 3u) << all(buffered);
}

// -- DAG -----------------------------------------------------------------------

sim_task chained_after(uint64_t id, uint64_t upstream) {
  sim_task t;
  t.id = id;
  t.name = "downstream";
  t.depends_on = {upstream};
  t.max_attempts = 3;
  return t;
}

/// Upstream task 1 (every 10 s) and task 2 chained after it, as they should go.
timed_steps clean_chain() {
  timed_steps steps;
  add_run(steps, 1, 100'000, 100'000, 100'000, 101'000);  // succeeds...
  add_run(steps, 2, 101'000, 101'005, 101'010, 102'000);  // ...and fires the downstream
  add_run(steps, 1, 110'000, 110'000, 110'000, 111'000, instance_state::failed);  // fires nothing
  add_run(steps, 1, 140'000, 140'000, 140'000, 149'990);  // succeeds as...
  add_run(steps, 1, 150'000, 150'000, 150'000, 151'000);  // ...the next fires: only this one...
  add_run(steps, 2, 151'000, 151'002, 151'010, 152'000);  // ...fires the downstream
  add_run(steps, 1, 160'000, 160'000, 160'000, 172'000);  // succeeds after the next was created
  add_run(steps, 1, 170'000, 170'000, 170'000, 171'500);  // the latest: it fires the downstream
  add_run(steps, 2, 171'500, 171'505, 171'510, 172'500);
  return steps;
}

TEST(scheduler_sim_checks, chains_pass_a_downstream_fired_once_for_each_success_of_the_latest_run) {
  auto up = every(1, "upstream", 10'000);
  auto found = check_chains({up, chained_after(2, 1)}, {}, runs_of(timed_history(clean_chain())),
                            slot_bounds{90'000, 200'000, 1'000, 0});
  EXPECT_TRUE(found.empty()) << all(found);
}

TEST(scheduler_sim_checks, chains_flag_a_fire_without_success_a_double_a_late_and_a_missing_one) {
  auto up = every(1, "upstream", 10'000);
  auto steps = clean_chain();
  add_run(steps, 2, 95'000, 95'000, 95'010, 96'000);      // before any success of the upstream
  add_run(steps, 2, 101'500, 101'505, 101'510, 102'500);  // a second for the success at 101 s
  add_run(steps, 1, 120'000, 120'000, 120'000, 121'000);  // succeeds, fires nothing
  add_run(steps, 1, 130'000, 130'000, 130'000, 131'000);  // succeeds...
  add_run(steps, 2, 133'000, 133'000, 133'010, 134'000);  // ...and fires 2 s later
  add_run(steps, 1, 180'000, 180'000, 180'000, 181'000);  // succeeds in a fault window
  auto runs = runs_of(timed_history(steps));
  std::vector<fault_window> faults{{"leader_crash", "n1", 180'500, 181'500}};
  slot_bounds b{90'000, 200'000, 1'000, 0};
  auto found = check_chains({up, chained_after(2, 1)}, faults, runs, b);
  auto id = [](uint64_t task, unix_ms slot) { return proto::make_instance_id(task, slot, 0); };
  EXPECT_EQ(mentioning(found, id(2, 95'000) + ": fired with no success of upstream"), 1u);
  EXPECT_EQ(mentioning(found, "fired 2 times for one success of upstream, " + id(1, 100'000)), 1u);
  EXPECT_EQ(mentioning(found, "never fired for the success of upstream's latest run " +
                                  id(1, 120'000)),
            1u);
  EXPECT_EQ(mentioning(found, id(2, 133'000) + ": fired 2s after the success"), 1u);
  EXPECT_EQ(found.size(), 4u) << all(found);
  // Without the fault, the success at 181 s should have fired it.
  auto unexcused = check_chains({up, chained_after(2, 1)}, {}, runs, b);
  EXPECT_EQ(mentioning(unexcused, "never fired for the success"), 2u) << all(unexcused);
  // A task of two upstreams is named, not judged.
  auto two = chained_after(2, 1);
  two.depends_on.push_back(3);
  EXPECT_EQ(mentioning(check_chains({up, two}, {}, runs, b), "2 upstreams, not judged"), 1u);
}

}  // namespace
}  // namespace aisched::sim
