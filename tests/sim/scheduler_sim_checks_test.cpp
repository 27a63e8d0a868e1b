// The scheduler simulation's checkers (tests/sim/scheduler_sim_checks) on
// hand-made histories: for each, what it must flag and what it must let
// pass. No simulation runs here; scheduler_sim_test runs the seeds.
#include "tests/sim/scheduler_sim_checks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "actors/trigger/planner.hpp"

namespace aisched::sim {
namespace {

using proto::instance_state;

// -- building histories --------------------------------------------------------

/// A committed record of attempt `attempt` of the run of `task`'s slot `slot`.
proto::instance rec(uint64_t task, unix_ms slot, uint32_t attempt, instance_state state,
                    std::string worker = "", unix_ms started = 0, unix_ms finished = 0,
                    std::string error = "") {
  proto::instance x;
  x.id = proto::make_instance_id(task, slot, 0);
  x.task_id = task;
  x.slot = slot;
  x.attempt = attempt;
  x.state = state;
  x.worker_id = std::move(worker);
  x.started_at = started;
  x.finished_at = finished;
  x.error = std::move(error);
  return x;
}

/// The run of `task`'s slot `slot` started at `started` (check_slots' view).
proto::instance run_at(uint64_t task, unix_ms slot, unix_ms started, instance_state state,
                       uint32_t attempt = 1) {
  return rec(task, slot, attempt, state, "", started);
}

/// Run `shard` of a bulk enqueue of `task` at `slot`.
proto::instance queued(uint64_t task, unix_ms slot, uint32_t shard, instance_state state) {
  auto x = rec(task, slot, 1, state);
  x.id = proto::make_instance_id(task, slot, shard);
  x.shard = shard;
  return x;
}

/// Commits one record per log index, in the order given.
history history_of(const std::vector<proto::instance>& steps) {
  history h;
  uint64_t index = 0;
  for (auto& x : steps) {
    proto::applied a;
    a.index = ++index;
    a.instances = {x};
    h.record("n1", a);
  }
  return h;
}

/// Commits applied at instants: (when, record).
using timed_steps = std::vector<std::pair<unix_ms, proto::instance>>;

/// The commits of one run of `task`'s slot `slot` with one attempt: fired
/// (committed at `fired`), started at `started` (committed then) and ended
/// `state` at `ended` (committed then).
void add_run(timed_steps& steps, uint64_t task, unix_ms slot, unix_ms fired, unix_ms started,
             unix_ms ended, instance_state state = instance_state::success) {
  steps.emplace_back(fired, rec(task, slot, 1, instance_state::pending));
  steps.emplace_back(started, rec(task, slot, 1, instance_state::running, "n1", started));
  steps.emplace_back(ended, rec(task, slot, 1, state, "n1", started, ended));
}

/// Commits one record per log index in the order of their instants, each
/// applied at its instant (history::applied_at).
history timed_history(timed_steps steps) {
  std::stable_sort(steps.begin(), steps.end(),
                   [](auto& a, auto& b) { return a.first < b.first; });
  history h;
  uint64_t index = 0;
  for (auto& [at, x] : steps) {
    proto::applied a;
    a.index = ++index;
    a.instances = {x};
    h.record("n1", a, at);
  }
  return h;
}

execution ran(std::string worker, std::string id, uint32_t attempt, unix_ms from, unix_ms to,
              bool reported = true) {
  return execution{std::move(worker), std::move(id), attempt, from, to, reported};
}

/// An execution of every committed start, on its first worker, as committed.
std::vector<execution> executions_of(const std::map<std::string, run_view>& runs) {
  std::vector<execution> out;
  for (auto& [id, v] : runs)
    for (auto& a : v.attempts)
      if (a.started != 0)
        out.push_back(ran(*a.workers.begin(), id, a.attempt, a.started, a.ended ? a.finished : 0));
  return out;
}

size_t mentioning(const std::vector<std::string>& lines, const std::string& what) {
  size_t n = 0;
  for (auto& l : lines) n += l.find(what) != std::string::npos;
  return n;
}

std::string all(const std::vector<std::string>& lines) {
  std::string out;
  for (auto& l : lines) out += "\n  " + l;
  return out;
}

sim_task every(uint64_t id, std::string name, duration_ms interval) {
  sim_task t;
  t.id = id;
  t.name = std::move(name);
  t.every = interval;
  t.max_attempts = 3;
  return t;
}

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

// -- total queue ---------------------------------------------------------------

TEST(scheduler_sim_checks, total_queue_flags_a_lost_an_extra_a_repeated_and_a_wrongly_ended_run) {
  sim_task q;
  q.id = 9;
  q.name = "bulk";
  q.max_attempts = 2;
  auto id = [](uint32_t shard) { return proto::make_instance_id(9, 5'000, shard); };
  // A: ends success. B: never committed. C: its cancel acknowledged, ends
  // success. D: its cancel unanswered, ends cancelled (allowed). E: named by
  // no acknowledgement. F: final twice.
  q.enqueued = {id(0), id(1), id(2), id(3), id(5), id(0)};  // A twice
  q.cancels = {{id(2), true}, {id(3), false}};
  auto h = history_of({
      queued(9, 5'000, 0, instance_state::success),
      queued(9, 5'000, 2, instance_state::success),
      queued(9, 5'000, 3, instance_state::cancelled),
      queued(9, 5'000, 4, instance_state::success),
      queued(9, 5'000, 5, instance_state::success),
      queued(9, 5'000, 5, instance_state::pending),
      queued(9, 5'000, 5, instance_state::success),
  });
  auto runs = runs_of(h);
  auto found = check_total_queue({q}, runs);
  EXPECT_EQ(mentioning(found, "named by two enqueue acknowledgements"), 1u);
  EXPECT_EQ(mentioning(found, id(1) + " is not in the history"), 1u);
  EXPECT_EQ(mentioning(found, "its cancel was acknowledged"), 1u);
  EXPECT_EQ(mentioning(found, id(3)), 0u) << "a cancel not acknowledged may have committed";
  EXPECT_EQ(mentioning(found, "no enqueue acknowledgement named it"), 1u);
  EXPECT_EQ(mentioning(found, "reached a final state 2 times"), 1u);
  EXPECT_EQ(found.size(), 5u) << all(found);
  // An enqueue that was not acknowledged may have committed runs of its own.
  q.unacknowledged = 1;
  EXPECT_EQ(check_total_queue({q}, runs).size(), 4u);
}

TEST(scheduler_sim_checks, total_queue_passes_a_queue_that_ended_as_allowed) {
  sim_task q;
  q.id = 9;
  q.name = "bulk";
  q.max_attempts = 2;
  q.enqueued = {proto::make_instance_id(9, 5'000, 0), proto::make_instance_id(9, 5'000, 1)};
  auto failed = queued(9, 5'000, 1, instance_state::failed);
  failed.attempt = 2;  // every attempt spent
  auto h = history_of({queued(9, 5'000, 0, instance_state::success), failed});
  auto found = check_total_queue({q}, runs_of(h));
  EXPECT_TRUE(found.empty()) << all(found);
}

// -- attempts ------------------------------------------------------------------

TEST(scheduler_sim_checks, attempts_flag_skipped_and_repeated_numbers_and_overlaps) {
  auto t = every(1, "every-10s", 10'000);
  t.max_attempts = 2;
  using s = instance_state;
  auto h = history_of({
      // R1: attempt 2 never committed, attempt 3 beyond max_attempts.
      rec(1, 10'000, 1, s::dispatched, "n1"),
      rec(1, 10'000, 1, s::running, "n1", 10'000),
      rec(1, 10'000, 1, s::retry_waiting, "n1", 10'000, 11'000),
      rec(1, 10'000, 3, s::pending),
      // R2: attempt 1 committed again after attempt 2.
      rec(1, 20'000, 1, s::running, "n1", 20'000),
      rec(1, 20'000, 1, s::retry_waiting, "n1", 20'000, 21'000),
      rec(1, 20'000, 2, s::running, "n2", 22'000),
      rec(1, 20'000, 2, s::success, "n2", 22'000, 23'000),
      rec(1, 20'000, 1, s::failed, "n1"),
      // R3: attempt 2 starts before attempt 1's committed end.
      rec(1, 30'000, 1, s::running, "n1", 30'000),
      rec(1, 30'000, 1, s::retry_waiting, "n1", 30'000, 35'000),
      rec(1, 30'000, 2, s::running, "n2", 33'000),
      rec(1, 30'000, 2, s::success, "n2", 33'000, 36'000),
      // R4: the same, but attempt 1 was lost with n3, which a fault cut off.
      rec(1, 40'000, 1, s::running, "n3", 40'000),
      rec(1, 40'000, 1, s::retry_waiting, "n3", 40'000, 50'000,
          "worker_lost: worker n3 restarted without it"),
      rec(1, 40'000, 2, s::running, "n1", 45'000),
      rec(1, 40'000, 2, s::success, "n1", 45'000, 46'000),
      // R5: a retry as it should be.
      rec(1, 60'000, 1, s::running, "n1", 60'000),
      rec(1, 60'000, 1, s::retry_waiting, "n1", 60'000, 61'000),
      rec(1, 60'000, 2, s::running, "n2", 63'000),
      rec(1, 60'000, 2, s::success, "n2", 63'000, 64'000),
  });
  auto runs = runs_of(h);
  std::vector<fault_window> faults{{"worker_death", "n3", 41'000, 44'000}};
  auto found = check_attempts({t}, faults, 15'000, runs, executions_of(runs));
  auto r = [](unix_ms slot) { return proto::make_instance_id(1, slot, 0); };
  EXPECT_EQ(mentioning(found, "committed after attempt"), 2u);
  EXPECT_EQ(mentioning(found, r(10'000) + ": attempt 3 committed after attempt 1"), 1u);
  EXPECT_EQ(mentioning(found, r(20'000) + ": attempt 1 committed after attempt 2"), 1u);
  EXPECT_EQ(mentioning(found, "beyond its task's max_attempts"), 1u);
  EXPECT_EQ(mentioning(found, r(30'000) + ": attempt 2 started"), 1u);
  EXPECT_EQ(mentioning(found, r(30'000) + ": two executions at once"), 1u);
  EXPECT_EQ(mentioning(found, r(40'000)), 0u) << "lost with a worker a fault cut off";
  EXPECT_EQ(mentioning(found, r(60'000)), 0u);
  EXPECT_EQ(found.size(), 5u) << all(found);
  // Without the fault, R4's overlap is no longer excused.
  auto unexcused = check_attempts({t}, {}, 15'000, runs, executions_of(runs));
  EXPECT_EQ(mentioning(unexcused, r(40'000)), 2u) << all(unexcused);
}

TEST(scheduler_sim_checks, attempts_hold_the_executions_to_what_was_committed) {
  auto t = every(2, "every-100s", 100'000);
  using s = instance_state;
  auto r = [](unix_ms slot) { return proto::make_instance_id(2, slot, 0); };
  auto h = history_of({
      // X1: committed on n1, executed on n2.
      rec(2, 100'000, 1, s::running, "n1", 100'000),
      rec(2, 100'000, 1, s::success, "n1", 100'000, 101'000),
      // X2: attempt 1 executed again after it reported, beside attempt 2.
      rec(2, 200'000, 1, s::running, "n1", 200'000),
      rec(2, 200'000, 1, s::retry_waiting, "n1", 200'000, 201'000),
      rec(2, 200'000, 2, s::running, "n2", 203'000),
      rec(2, 200'000, 2, s::success, "n2", 203'000, 204'000),
      // X3: killed with n1 before its start was reported, placed again on n2.
      rec(2, 300'000, 1, s::dispatched, "n1"),
      rec(2, 300'000, 1, s::dispatched, "n2"),
      rec(2, 300'000, 1, s::running, "n2", 302'000),
      rec(2, 300'000, 1, s::success, "n2", 302'000, 303'000),
      // X4: lost with n3 while a partition cut n3 off; its execution goes on.
      rec(2, 400'000, 1, s::running, "n3", 400'000),
      rec(2, 400'000, 1, s::retry_waiting, "n3", 400'000, 420'000, "worker_lost: worker n3 dead"),
      rec(2, 400'000, 2, s::running, "n1", 423'000),
      rec(2, 400'000, 2, s::success, "n1", 423'000, 424'000),
      // X5: the same with n2, which no fault cut off.
      rec(2, 500'000, 1, s::running, "n2", 500'000),
      rec(2, 500'000, 1, s::retry_waiting, "n2", 500'000, 520'000, "worker_lost: worker n2 dead"),
      rec(2, 500'000, 2, s::running, "n1", 523'000),
      rec(2, 500'000, 2, s::success, "n1", 523'000, 524'000),
  });
  std::vector<execution> executions{
      ran("n2", r(100'000), 1, 100'000, 101'000),        ran("n1", r(200'000), 1, 200'000, 201'000),
      ran("n2", r(200'000), 2, 203'000, 204'000),        ran("n1", r(200'000), 1, 203'500, 203'800),
      ran("n1", r(300'000), 1, 300'000, 300'040, false), ran("n2", r(300'000), 1, 302'000, 303'000),
      ran("n3", r(400'000), 1, 400'000, 0, false),       ran("n1", r(400'000), 2, 423'000, 424'000),
      ran("n2", r(500'000), 1, 500'000, 0, false),       ran("n1", r(500'000), 2, 523'000, 524'000),
  };
  std::vector<fault_window> faults{{"partition", "n3", 410'000, 415'000}};
  auto found = check_attempts({t}, faults, 15'000, runs_of(h), executions);
  EXPECT_EQ(mentioning(found, r(100'000) + ": attempt 1 on n2"), 1u) << "not committed to n2";
  EXPECT_EQ(mentioning(found, r(100'000) + ": attempt 1 committed as started"), 1u)
      << "no execution on n1";
  EXPECT_EQ(mentioning(found, "executed again after it was reported"), 1u);
  EXPECT_EQ(mentioning(found, r(200'000) + ": two executions at once"), 1u);
  EXPECT_EQ(mentioning(found, r(300'000)), 0u) << "an attempt placed again after a silent kill";
  EXPECT_EQ(mentioning(found, r(400'000)), 0u) << "excused: its worker was cut off";
  EXPECT_EQ(mentioning(found, r(500'000) + ": two executions at once"), 1u);
  EXPECT_EQ(found.size(), 5u) << all(found);
}

TEST(scheduler_sim_checks, attempts_excuse_a_stopped_workers_attempt_started_after_the_newer) {
  // A worker stopped (SIGSTOP) while its request was on the way resumes and
  // starts the older attempt after the leader ended it and the newer one began
  // elsewhere: the older attempt is the one excused, at the newer one's start.
  auto t = every(3, "every-100s", 100'000);
  using s = instance_state;
  auto r = [](unix_ms slot) { return proto::make_instance_id(3, slot, 0); };
  auto h = history_of({
      // Y1: attempt 1 sent to n3, stopped; ended by the leader; attempt 2 on n1.
      rec(3, 100'000, 1, s::dispatched, "n3"),
      rec(3, 100'000, 1, s::retry_waiting, "n3", 0, 110'000,
          "dispatch to worker n3 failed: request_timeout"),
      rec(3, 100'000, 2, s::running, "n1", 112'000),
      rec(3, 100'000, 2, s::success, "n1", 112'000, 114'000),
      // Y2: the same on n2, which no fault stopped.
      rec(3, 200'000, 1, s::dispatched, "n2"),
      rec(3, 200'000, 1, s::retry_waiting, "n2", 0, 210'000,
          "dispatch to worker n2 failed: request_timeout"),
      rec(3, 200'000, 2, s::running, "n1", 212'000),
      rec(3, 200'000, 2, s::success, "n1", 212'000, 214'000),
  });
  std::vector<execution> executions{
      ran("n1", r(100'000), 2, 112'000, 114'000), ran("n3", r(100'000), 1, 113'000, 113'050, false),
      ran("n1", r(200'000), 2, 212'000, 214'000), ran("n2", r(200'000), 1, 213'000, 213'050, false),
  };
  std::vector<fault_window> faults{{"worker_freeze", "n3", 101'000, 112'900}};
  auto found = check_attempts({t}, faults, 15'000, runs_of(h), executions);
  EXPECT_EQ(mentioning(found, r(100'000)), 0u) << all(found);
  EXPECT_EQ(mentioning(found, r(200'000) + ": two executions at once"), 1u) << all(found);
}

TEST(scheduler_sim_checks, cut_off_names_the_member_and_the_sender_of_a_one_way_cut) {
  std::vector<fault_window> faults{{"one_way", "n1->n3", 10'000, 20'000},
                                   {"worker_death", "n2", 50'000, 60'000}};
  EXPECT_TRUE(cut_off(faults, 1'000, "n1", 15'000));
  EXPECT_FALSE(cut_off(faults, 1'000, "n3", 15'000));
  EXPECT_TRUE(cut_off(faults, 1'000, "n2", 60'500));
  EXPECT_FALSE(cut_off(faults, 1'000, "n2", 61'500));
}

// -- bounds --------------------------------------------------------------------

TEST(scheduler_sim_checks, bounds_flag_a_full_pool_a_task_over_its_limit_and_a_missing_pool) {
  auto a = every(1, "pooled-1", 10'000);
  a.pool = "p";
  auto b = every(2, "pooled-2", 10'000);
  b.pool = "p";
  auto c = every(3, "serial", 10'000);
  c.max_concurrency = 1;
  auto d = every(4, "lost", 10'000);
  d.pool = "gone";
  using s = instance_state;
  auto h = history_of({
      rec(1, 0, 1, s::success, "n1", 1'000, 5'000),
      rec(2, 0, 1, s::success, "n1", 5'000, 8'000),    // back to back: no overlap
      rec(2, 1, 1, s::success, "n2", 7'000, 9'000),    // beside the one before: 2 in p
      rec(1, 1, 1, s::running, "n1", 20'000),          // never ends...
      rec(2, 2, 1, s::success, "n3", 30'000, 31'000),  // ...so this one is the second
      rec(1, 2, 1, s::failed, "n1", 0, 40'000, "worker_lost: worker n1 dead"),  // never started
      rec(3, 0, 1, s::retry_waiting, "n1", 10'000, 12'000),
      rec(3, 0, 2, s::success, "n1", 14'000, 15'000),
      rec(3, 1, 1, s::success, "n2", 11'000, 13'000),  // beside attempt 1 of the one before
  });
  auto runs = runs_of(h);
  auto found = check_bounds({a, b, c, d}, {{"p", 1}}, runs);
  EXPECT_EQ(mentioning(found, "pool p (size 1)"), 2u);
  EXPECT_EQ(mentioning(found, format_rfc3339(7'000)), 1u);
  EXPECT_EQ(mentioning(found, format_rfc3339(30'000)), 1u);
  EXPECT_EQ(mentioning(found, "task serial (max_concurrency 1)"), 1u);
  EXPECT_EQ(mentioning(found, format_rfc3339(11'000)), 1u);
  EXPECT_EQ(mentioning(found, "pool gone was never created"), 1u);
  EXPECT_EQ(found.size(), 4u) << all(found);
  // A pool of two holds them all.
  auto roomy = check_bounds({a, b}, {{"p", 2}}, runs);
  EXPECT_TRUE(roomy.empty()) << all(roomy);
}

TEST(scheduler_sim_checks, bounds_hold_a_task_of_overlap_skip_to_one_run_at_once) {
  auto t = every(5, "skipping", 10'000);
  t.overlap = proto::overlap_policy::skip;
  using s = instance_state;
  auto h = history_of({
      rec(5, 0, 1, s::success, "n1", 1'000, 5'000),
      rec(5, 10'000, 1, s::success, "n2", 5'000, 8'000),  // back to back: no overlap
      rec(5, 20'000, 1, s::success, "n3", 7'000, 9'000),  // beside the one before
  });
  auto found = check_bounds({t}, {}, runs_of(h));
  EXPECT_EQ(mentioning(found, "task skipping (overlap skip): 2 attempts running at " +
                                  format_rfc3339(7'000)),
            1u);
  EXPECT_EQ(found.size(), 1u) << all(found);
  t.overlap = proto::overlap_policy::allow;  // allow bounds nothing
  auto allowed = check_bounds({t}, {}, runs_of(h));
  EXPECT_TRUE(allowed.empty()) << all(allowed);
}

// -- liveness ------------------------------------------------------------------

TEST(scheduler_sim_checks, settled_passes_final_runs_and_flags_the_others) {
  std::map<std::string, proto::instance> final_state;
  for (auto st : {instance_state::success, instance_state::failed, instance_state::timed_out,
                  instance_state::cancelled}) {
    auto x = rec(1, 1'000 * static_cast<unix_ms>(st), 1, st);
    final_state[x.id] = x;
  }
  EXPECT_TRUE(check_settled(final_state).empty());
  for (auto st : {instance_state::pending, instance_state::dispatched, instance_state::running,
                  instance_state::retry_waiting}) {
    auto x = rec(2, 1'000 * static_cast<unix_ms>(st), 1, st);
    final_state[x.id] = x;
  }
  EXPECT_EQ(check_settled(final_state).size(), 4u);
}

// -- agreement -----------------------------------------------------------------

TEST(scheduler_sim_checks, history_flags_a_disagreement_a_gap_and_a_stuck_run) {
  history h;
  proto::applied a;
  a.index = 9;
  a.instances = {run_at(1, 10'000, 10'000, instance_state::running)};
  h.record("n1", a);
  auto b = a;
  b.instances[0].state = instance_state::success;
  h.record("n2", b);  // index 9 applied otherwise
  std::map<std::string, proto::instance> final_state;
  auto done = run_at(1, 10'000, 10'000, instance_state::success);
  final_state[done.id] = done;  // the recorders missed its last change
  auto pending = run_at(2, 20'000, 0, instance_state::pending);
  final_state[pending.id] = pending;  // never seen, and never finished
  auto found = check_history(h, runs_of(h), final_state);
  EXPECT_EQ(mentioning(found, "index 9"), 1u);
  EXPECT_EQ(mentioning(found, "the history ends run"), 1u);
  EXPECT_EQ(mentioning(found, "never saw run"), 1u);
  auto stuck = check_settled(final_state);
  ASSERT_EQ(stuck.size(), 1u);
  EXPECT_NE(stuck[0].find(pending.id), std::string::npos);
}

}  // namespace
}  // namespace aisched::sim
