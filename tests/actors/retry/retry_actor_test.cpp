// Tests for the retry actor on CAF's test coordinator (virtual time, no threads): a real
// raft group of one over RocksDB in a temporary directory, the store actor and the retry
// actor, wired as in runtime/main.cpp. The test drives each run through raft itself (fire,
// dispatch, report_results) and reads the outcome from the state machine: retry_waiting with
// the policy's backoff, the retry proposed at exactly next_attempt_at, timed_out at the run's
// deadline, nothing proposed while not leading, and the same instants after a rebuild.
#define CAF_GTEST_DSL_IMPL
#include "support/caf_gtest_dsl.hpp"
#include "support/node_fixture.hpp"

#include <chrono>
#include <string>

#include "actors/retry/retry_actor.hpp"
#include "proto/interfaces.hpp"

namespace aisched::retry {
namespace {

using namespace std::chrono_literals;
using proto::instance_state;

// The retry actor's wall clock at spawn.
const unix_ms start_unix = test::at("2026-01-01T00:00:00Z");
constexpr duration_ms grace = 30'000;  // state_machine: deadline = dispatch + timeout + 30 s

class retry_actor_test : public test_coordinator_fixture<test::actor_test_config>,
                         public test::node_fixture {
 protected:
  retry_actor_test() : node_fixture(sys, sched, self, "retry", start_unix) {
    retry_ = sys.spawn(retry_actor_impl, node_.raft, node_.store, sim_clock());
    subscribe(retry_);
    sched.run();  // leadership, then the (empty) rebuild
  }

  void advance(std::chrono::milliseconds d) { advance_to(now() + d.count()); }

  // Creates a manual-only noop task with `policy` and `timeout`.
  uint64_t create(proto::retry_policy policy, duration_ms timeout = 3'600'000) {
    proto::task t;
    t.name = "flaky";
    t.kind = proto::task_kind::noop;
    t.retry = std::move(policy);
    t.timeout = timeout;
    t.created_at = t.updated_at = now();
    return create_task(t);
  }

  // Fires slot now() of task `id`; returns the instance id.
  std::string fire(uint64_t id) {
    auto slot = now();
    auto a = propose_fire(id, slot);
    if (a) {
      EXPECT_EQ(a->instances.size(), 1u);
    } else {
      ADD_FAILURE() << "fire failed: " << sys.render(a.error());
    }
    return proto::make_instance_id(id, slot, 0);
  }

  void dispatch(const std::string& run) {
    auto a = propose_dispatch(run, now());
    ASSERT_TRUE(a) << sys.render(a.error());
  }

  // The worker's report for `run`, finished (or, for `running`, started) at now().
  void report(const std::string& run, instance_state state, int32_t exit_code = 1) {
    proto::run_result r;
    r.instance_id = run;
    r.worker_id = "w1";
    r.state = state;
    r.exit_code = state == instance_state::success ? 0 : exit_code;
    r.started_at = now();
    if (state != instance_state::running) {
      r.error = "boom";
      r.finished_at = now();
    }
    auto a = propose(proto::report_results{node_.term, now(), {r}});
    ASSERT_TRUE(a) << sys.render(a.error());
  }

  void set_leading(bool leading) { lead(retry_, leading); }

  static proto::retry_policy fixed(duration_ms interval, uint32_t max_attempts) {
    proto::retry_policy p;
    p.kind = proto::retry_kind::fixed;
    p.interval = interval;
    p.max_attempts = max_attempts;
    return p;
  }

  static proto::retry_policy exponential(duration_ms initial, double multiplier,
                                         uint32_t max_attempts) {
    proto::retry_policy p;
    p.kind = proto::retry_kind::exponential;
    p.initial = initial;
    p.multiplier = multiplier;
    p.max_attempts = max_attempts;
    return p;
  }

  // Expects `run` to wait in retry_waiting until exactly `due`, then to be pending with
  // attempt `next_attempt`: checks at due - 1 ms, then at due.
  void expect_retry_exactly_at(const std::string& run, unix_ms due, uint32_t next_attempt) {
    advance_to(due - 1);
    auto before = instance_of(run);
    EXPECT_EQ(before.state, instance_state::retry_waiting) << "retried before its instant";
    EXPECT_EQ(before.attempt, next_attempt - 1);
    advance_to(due);
    auto after = instance_of(run);
    EXPECT_EQ(after.state, instance_state::pending) << "not retried at its instant";
    EXPECT_EQ(after.attempt, next_attempt);
    EXPECT_EQ(after.next_attempt_at, 0);
    EXPECT_TRUE(after.worker_id.empty());
  }

  proto::retry_actor retry_;
};

TEST_F(retry_actor_test, failed_run_waits_the_fixed_interval_and_is_retried_at_that_instant) {
  auto id = create(fixed(2'000, 3));
  ASSERT_NE(id, 0u);
  advance(300ms);
  auto run = fire(id);
  dispatch(run);
  advance(700ms);
  report(run, instance_state::failed);
  auto x = instance_of(run);
  ASSERT_EQ(x.state, instance_state::retry_waiting);
  EXPECT_EQ(x.finished_at, start_unix + 1'000);
  EXPECT_EQ(x.next_attempt_at, x.finished_at + 2'000);
  EXPECT_EQ(x.attempt, 1u);
  expect_retry_exactly_at(run, x.next_attempt_at, 2);
  // Nothing else happens to a pending run: the retry actor only proposes once.
  advance(10s);
  EXPECT_EQ(instance_of(run).state, instance_state::pending);
  EXPECT_EQ(instance_of(run).attempt, 2u);
}

TEST_F(retry_actor_test, exponential_backoff_waits_one_then_two_seconds_and_last_failure_is_final) {
  auto id = create(exponential(1'000, 2.0, 3));
  ASSERT_NE(id, 0u);
  auto run = fire(id);
  dispatch(run);
  advance(250ms);
  report(run, instance_state::failed);
  auto first = instance_of(run);
  ASSERT_EQ(first.state, instance_state::retry_waiting);
  EXPECT_EQ(first.next_attempt_at, first.finished_at + 1'000) << "attempt 1 -> 2: 1 s";
  expect_retry_exactly_at(run, first.next_attempt_at, 2);

  advance(100ms);
  dispatch(run);
  advance(400ms);
  report(run, instance_state::failed, 7);
  auto second = instance_of(run);
  ASSERT_EQ(second.state, instance_state::retry_waiting);
  EXPECT_EQ(second.finished_at, now());
  EXPECT_EQ(second.next_attempt_at, second.finished_at + 2'000) << "attempt 2 -> 3: 2 s";
  EXPECT_EQ(second.exit_code, 7);
  expect_retry_exactly_at(run, second.next_attempt_at, 3);

  dispatch(run);
  advance(100ms);
  report(run, instance_state::failed);
  auto last = instance_of(run);
  EXPECT_EQ(last.state, instance_state::failed) << "attempt 3 of 3 failed: no more retries";
  EXPECT_EQ(last.attempt, 3u);
  EXPECT_EQ(last.next_attempt_at, 0);
  advance(30s);
  EXPECT_EQ(instance_of(run).state, instance_state::failed);
  EXPECT_EQ(instance_of(run).attempt, 3u);
}

TEST_F(retry_actor_test, dispatched_run_without_report_times_out_at_its_deadline_not_earlier) {
  auto id = create(fixed(2'000, 1), 5'000);
  ASSERT_NE(id, 0u);
  advance(1'200ms);
  auto run = fire(id);
  auto dispatched_at = now();
  dispatch(run);
  auto x = instance_of(run);
  ASSERT_EQ(x.state, instance_state::dispatched);
  ASSERT_EQ(x.deadline, dispatched_at + 5'000 + grace);
  advance_to(x.deadline - 1);
  EXPECT_EQ(instance_of(run).state, instance_state::dispatched) << "timed out before the deadline";
  advance_to(x.deadline);
  auto y = instance_of(run);
  EXPECT_EQ(y.state, instance_state::timed_out) << "one attempt only: final";
  EXPECT_EQ(y.finished_at, x.deadline);
  EXPECT_EQ(y.exit_code, -1);
  EXPECT_EQ(y.deadline, 0);
  EXPECT_FALSE(y.error.empty());
  advance(60s);
  EXPECT_EQ(instance_of(run).state, instance_state::timed_out);
}

TEST_F(retry_actor_test, timed_out_run_with_attempts_left_is_retried_and_running_keeps_deadline) {
  auto id = create(fixed(2'000, 2), 5'000);
  ASSERT_NE(id, 0u);
  auto run = fire(id);
  advance(500ms);
  dispatch(run);
  auto x = instance_of(run);
  ASSERT_EQ(x.deadline, now() + 5'000 + grace);
  advance_to(x.deadline - 1);
  EXPECT_EQ(instance_of(run).state, instance_state::dispatched);
  advance_to(x.deadline);
  auto waiting = instance_of(run);
  ASSERT_EQ(waiting.state, instance_state::retry_waiting) << "timed out with attempts left";
  EXPECT_EQ(waiting.finished_at, x.deadline);
  EXPECT_EQ(waiting.next_attempt_at, x.deadline + 2'000);
  expect_retry_exactly_at(run, waiting.next_attempt_at, 2);

  // Attempt 2 reports `running`: the deadline of its dispatch still holds.
  advance(300ms);
  dispatch(run);
  auto second = instance_of(run);
  ASSERT_EQ(second.deadline, now() + 5'000 + grace);
  advance(1s);
  report(run, instance_state::running);
  ASSERT_EQ(instance_of(run).state, instance_state::running);
  EXPECT_EQ(instance_of(run).deadline, second.deadline);
  advance_to(second.deadline - 1);
  EXPECT_EQ(instance_of(run).state, instance_state::running);
  advance_to(second.deadline);
  auto last = instance_of(run);
  EXPECT_EQ(last.state, instance_state::timed_out) << "attempt 2 of 2: final";
  EXPECT_EQ(last.attempt, 2u);
  EXPECT_EQ(last.finished_at, second.deadline);
}

TEST_F(retry_actor_test, not_leading_proposes_nothing_and_catches_up_when_leading_again) {
  auto id = create(fixed(2'000, 3), 5'000);
  ASSERT_NE(id, 0u);
  set_leading(false);
  auto failing = fire(id);
  dispatch(failing);
  advance(1s);
  auto silent = fire(id);  // another slot: dispatched, never reported
  dispatch(silent);
  auto deadline = instance_of(silent).deadline;
  ASSERT_EQ(deadline, now() + 5'000 + grace);
  report(failing, instance_state::failed);
  auto due = instance_of(failing).next_attempt_at;
  ASSERT_EQ(due, now() + 2'000);
  advance_to(deadline + 10'000);
  EXPECT_EQ(instance_of(failing).state, instance_state::retry_waiting)
      << "proposed while not leading";
  EXPECT_EQ(instance_of(failing).attempt, 1u);
  EXPECT_EQ(instance_of(silent).state, instance_state::dispatched) << "proposed while not leading";

  // Leading again: the rebuild finds both overdue and acts at once.
  auto regained = now();
  set_leading(true);
  auto x = instance_of(failing);
  EXPECT_EQ(x.state, instance_state::pending);
  EXPECT_EQ(x.attempt, 2u);
  auto y = instance_of(silent);
  EXPECT_EQ(y.state, instance_state::retry_waiting);
  EXPECT_EQ(y.finished_at, regained);
  EXPECT_EQ(y.next_attempt_at, regained + 2'000);
  expect_retry_exactly_at(silent, y.next_attempt_at, 2);
}

TEST_F(retry_actor_test, leadership_regained_rebuilds_and_retries_at_the_committed_instant) {
  auto id = create(fixed(2'000, 3), 5'000);
  ASSERT_NE(id, 0u);
  auto run = fire(id);
  dispatch(run);
  advance(400ms);
  report(run, instance_state::failed);
  auto due = instance_of(run).next_attempt_at;
  ASSERT_EQ(due, now() + 2'000);
  advance(500ms);
  set_leading(false);  // the timer armed for `due` is now stale
  advance(700ms);
  set_leading(true);  // rebuilt from the store 800 ms before `due`
  EXPECT_EQ(instance_of(run).state, instance_state::retry_waiting);
  expect_retry_exactly_at(run, due, 2);

  // And the rebuilt actor still watches new deadlines.
  dispatch(run);
  auto deadline = instance_of(run).deadline;
  ASSERT_EQ(deadline, now() + 5'000 + grace);
  set_leading(false);
  set_leading(true);
  advance_to(deadline - 1);
  EXPECT_EQ(instance_of(run).state, instance_state::dispatched);
  advance_to(deadline);
  EXPECT_EQ(instance_of(run).state, instance_state::retry_waiting);
  EXPECT_EQ(instance_of(run).next_attempt_at, deadline + 2'000);
}

TEST_F(retry_actor_test, stale_deadlines_do_not_pile_up_behind_a_run_that_keeps_running) {
  // One run keeps running towards its deadline, a minute away, while thousands
  // dispatched after it finish: each leaves its deadline stale behind the
  // live one on top. The heap holds at most twice the live items plus
  // term_state::heap_slack, not one item per run finished; and the run that
  // keeps running still times out at its deadline.
  auto id = create(fixed(1'000, 1), 30'000);
  ASSERT_NE(id, 0u);
  auto stuck = fire(id);
  dispatch(stuck);
  auto deadline = instance_of(stuck).deadline;
  constexpr unix_ms rounds = 4, per_round = 1'000;
  for (unix_ms r = 0; r < rounds; ++r) {
    advance(1'000ms);  // slots now() - 999 .. now(): new each round
    proto::fire f{node_.term, now(), {}};
    proto::dispatch d{node_.term, now(), {}};
    proto::report_results done{node_.term, now(), {}};
    for (unix_ms k = 0; k < per_round; ++k) {
      auto slot = now() - k;
      f.slots.push_back(proto::fire_slot{id, slot, "trace"});
      auto run = proto::make_instance_id(id, slot, 0);
      d.entries.push_back(proto::dispatch_entry{run, "w1"});
      proto::run_result ok;
      ok.instance_id = run;
      ok.worker_id = "w1";
      ok.state = instance_state::success;
      ok.started_at = ok.finished_at = now();
      done.results.push_back(std::move(ok));
    }
    for (auto cmd : {proto::command{std::move(f)}, proto::command{std::move(d)},
                     proto::command{std::move(done)}}) {
      auto a = propose(std::move(cmd));
      ASSERT_TRUE(a) << sys.render(a.error());
    }
  }
  self->send(retry_, proto::inspect_atom::value);
  sched.run();
  std::map<std::string, std::string> details;
  self->receive([&](proto::actor_summary& s) { details = std::move(s.details); },
                caf::after(std::chrono::seconds(0)) >> [] { ADD_FAILURE() << "no summary"; });
  EXPECT_EQ(details["deadlines"], "1");
  ASSERT_FALSE(details["heap_items"].empty());
  EXPECT_LE(std::stoul(details["heap_items"]), 2 + term_state::heap_slack)
      << "stale deadlines piled up behind the running one";
  advance_to(deadline - 1);
  EXPECT_EQ(instance_of(stuck).state, instance_state::dispatched);
  advance_to(deadline);
  EXPECT_EQ(instance_of(stuck).state, instance_state::timed_out) << "its deadline was dropped";
}

}  // namespace
}  // namespace aisched::retry
