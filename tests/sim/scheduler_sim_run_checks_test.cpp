// The scheduler simulation's checkers of runs (tests/sim/scheduler_sim_checks)
// on hand-made histories: total queue, attempts, bounds, liveness and
// agreement; for each, what it must flag and what it must let pass (slots and
// DAG: scheduler_sim_checks_test).
#include "tests/sim/scheduler_sim_checks.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/sim/scheduler_sim_checks_fixture.hpp"

namespace aisched::sim {
namespace {

using namespace checks_fixture;

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

TEST(scheduler_sim_checks, history_excuses_runs_retention_removed_and_only_those) {
  // Task 1 keeps its newest 2 finished runs: three of its five finished runs
  // gone are retention's; a run not finished gone is not, nor one of task 2.
  history h;
  proto::applied a;
  a.index = 3;
  for (unix_ms k = 1; k <= 5; ++k)
    a.instances.push_back(run_at(1, k * 10'000, k * 10'000, instance_state::success));
  a.instances.push_back(run_at(1, 60'000, 60'000, instance_state::running));
  a.instances.push_back(run_at(2, 10'000, 10'000, instance_state::success));
  h.record("n1", a);
  sim_task t;
  t.id = 1;
  t.keep_runs = 2;
  std::map<std::string, proto::instance> final_state;
  for (auto& x : a.instances)
    if (x.task_id == 1 && x.slot >= 40'000 && x.slot <= 50'000) final_state[x.id] = x;
  auto found = check_history(h, runs_of(h), final_state, {t});
  EXPECT_EQ(mentioning(found, "retention removed a run not finished"), 1u) << all(found);
  EXPECT_EQ(mentioning(found, "the history has run 2-"), 1u) << all(found);
  EXPECT_EQ(found.size(), 2u) << all(found);

  final_state.erase(run_at(1, 50'000, 50'000, instance_state::success).id);  // one too many
  found = check_history(h, runs_of(h), final_state, {t});
  EXPECT_EQ(mentioning(found, "retention kept 1 of task 1's 5 finished runs"), 1u) << all(found);
}

}  // namespace
}  // namespace aisched::sim
