// The worker actor with the simulation's executor (sim_executor, issue 45
// item 2) on CAF's test coordinator: no process, no thread, virtual time. Runs
// end with their seeded exit codes after their seeded durations, the same
// seed gives the same results (another seed other ones), a cancel before the
// end ends a run failed "cancelled", and a run longer than its timeout ends
// timed_out at the timeout. The simulation advances timer by timer
// (trigger_timeout), so each instant is exact.
#define CAF_GTEST_DSL_IMPL
#include "support/caf_gtest_dsl.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "actors/worker/sim_executor.hpp"
#include "actors/worker/worker_actor.hpp"
#include "common/clock.hpp"
#include "proto/registry.hpp"

namespace aisched::worker {
namespace {

using proto::execute_request;
using proto::instance_state;
using proto::run_result;

struct sim_test_config : caf::actor_system_config {
  sim_test_config() { proto::register_types(*this); }
};

using report_log = std::vector<run_result>;

/// Stands in for the worker proxy: keeps the worker's reports, in order, in `out`.
proto::worker_proxy_actor::behavior_type recording_proxy(proto::worker_proxy_actor::pointer,
                                                         std::shared_ptr<report_log> out) {
  return {
      [=](proto::report_atom, const run_result& r) { out->push_back(r); },
      [](proto::report_atom, const run_result&,
         proto::settle_atom) -> caf::result<proto::applied> { return proto::applied{}; },
      [](proto::execute_atom, const execute_request&) {},
      [](proto::execute_atom, proto::flush_atom) {},
      [](proto::cancel_run_atom, const std::string&) {},
      [](proto::wake_atom, const std::string&, unix_ms) {},
      [](proto::flush_atom) {},
  };
}

constexpr unix_ms start_unix = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

/// A final report as two runs of one seed must agree on it: times relative to
/// when the runs were sent.
using final_of = std::tuple<std::string, std::string, int32_t, duration_ms, duration_ms,
                            std::string, std::string>;

class worker_sim_executor_test : public test_coordinator_fixture<sim_test_config>,
                                 public ::testing::Test {
 protected:
  /// A worker with a sim_executor of `opts`, and a proxy that records its reports.
  struct sim_worker {
    proto::worker_actor worker;
    std::shared_ptr<sim_executor> exec;
    std::shared_ptr<report_log> reports = std::make_shared<report_log>();
    proto::worker_proxy_actor proxy;
  };

  worker_sim_executor_test() : clock_(wall_clock::simulated(start_unix, sched.clock().now())) {}

  ~worker_sim_executor_test() override {
    for (auto& w : workers_) {
      w.exec->stop();  // its runs end at their next timer, without a report
      caf::anon_send_exit(w.worker, caf::exit_reason::user_shutdown);
      caf::anon_send_exit(w.proxy, caf::exit_reason::user_shutdown);
    }
    sched.run();
  }

  sim_worker& spawn(sim_options opts) {
    sim_worker w;
    w.exec = std::make_shared<sim_executor>(opts);
    worker_config wcfg;
    wcfg.id = "w-sim";
    wcfg.clock = clock_;  // outbox_dir "": reports in memory only
    w.worker = sys.spawn(worker_actor_impl, wcfg, w.exec);
    w.proxy = sys.spawn(recording_proxy, w.reports);
    sched.run();  // messages only: the worker's 1 s tick re-arms for ever
    workers_.push_back(std::move(w));
    return workers_.back();
  }

  /// The instant now on the simulation's wall clock.
  unix_ms now() const { return clock_.now(sched.clock()); }

  /// Handles every message, then fires the timers one after another (virtual
  /// time jumps to each), until `done()` or the next timer is past `until`.
  template <class Pred>
  void run_until(Pred done, unix_ms until) {
    sched.run();
    auto& clock = sched.clock();
    while (!done() && clock.has_pending_timeout()) {
      auto next = clock.schedule().begin()->first;  // the earliest timer
      auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - clock.now());
      if (now() + wait.count() > until) break;
      sched.trigger_timeout();
      sched.run();
    }
  }

  static execute_request request(std::string instance_id, duration_ms timeout = 60'000) {
    execute_request req;
    req.instance_id = std::move(instance_id);
    req.task_id = 7;
    req.kind = proto::task_kind::shell;
    req.command = "never run: simulated";
    req.attempt = 1;
    req.timeout = timeout;
    return req;
  }

  static size_t finals(const report_log& log) {
    return static_cast<size_t>(std::count_if(
        log.begin(), log.end(), [](auto& r) { return r.state != instance_state::running; }));
  }

  /// Runs `ids` (attempt 1 each) on a new worker of seed `seed`, to their end.
  std::vector<final_of> run_batch(uint64_t seed, const std::vector<std::string>& ids) {
    sim_options opts;
    opts.seed = seed;
    opts.failure_permille = 500;
    auto& w = spawn(opts);
    auto start = now();
    std::vector<execute_request> reqs;
    for (auto& id : ids) reqs.push_back(request(id));
    caf::anon_send(w.worker, proto::execute_atom::value, reqs, w.proxy);
    run_until([&] { return finals(*w.reports) == ids.size(); }, start + opts.max_duration + 1);
    std::vector<final_of> out;
    for (auto& r : *w.reports)
      if (r.state != instance_state::running)
        out.emplace_back(r.instance_id, std::string(proto::name_of(r.state)), r.exit_code,
                         r.started_at - start, r.finished_at - start, r.error, r.output);
    std::sort(out.begin(), out.end());
    return out;
  }

  wall_clock clock_;
  std::deque<sim_worker> workers_;  // stable references as workers are added
};

TEST_F(worker_sim_executor_test, runs_end_with_their_seeded_exit_codes_after_their_seeded_durations) {
  sim_options opts;
  opts.seed = 42;
  opts.min_duration = 200;
  opts.max_duration = 5'000;
  opts.failure_permille = 400;
  opts.max_exit_code = 5;
  auto& w = spawn(opts);
  // Three runs the seed makes succeed and three it makes fail.
  std::vector<execute_request> reqs;
  size_t ok = 0, failing = 0;
  for (int i = 0; i < 1000 && (ok < 3 || failing < 3); ++i) {
    auto id = "7-" + std::to_string(1000 + i) + "-0";
    auto o = w.exec->outcome_of(id, 1);
    ASSERT_GE(o.duration, opts.min_duration);
    ASSERT_LE(o.duration, opts.max_duration);
    ASSERT_GE(o.exit_code, 0);
    ASSERT_LE(o.exit_code, opts.max_exit_code);
    auto& n = o.exit_code == 0 ? ok : failing;
    if (n < 3) {
      ++n;
      reqs.push_back(request(id));
    }
  }
  ASSERT_EQ(reqs.size(), 6u);
  auto t0 = now();
  caf::anon_send(w.worker, proto::execute_atom::value, reqs, w.proxy);
  sched.run();
  ASSERT_EQ(w.reports->size(), 6u) << "each run reports running when it starts";
  for (auto& r : *w.reports) {
    EXPECT_EQ(r.state, instance_state::running) << r.instance_id;
    EXPECT_EQ(r.started_at, t0) << r.instance_id;
  }
  // Timer by timer: each final report arrives at the instant its run ends.
  std::vector<std::pair<run_result, unix_ms>> arrived;  // with the instant it arrived
  size_t seen = w.reports->size();
  run_until(
      [&] {
        for (; seen < w.reports->size(); ++seen) arrived.emplace_back((*w.reports)[seen], now());
        return arrived.size() == reqs.size();
      },
      t0 + opts.max_duration + 1);
  ASSERT_EQ(arrived.size(), reqs.size()) << "every run ends within the longest duration";
  for (auto& [r, at] : arrived) {
    auto o = w.exec->outcome_of(r.instance_id, 1);
    EXPECT_EQ(r.worker_id, "w-sim");
    EXPECT_EQ(r.attempt, 1u);
    EXPECT_EQ(r.exit_code, o.exit_code) << r.instance_id;
    EXPECT_EQ(r.state, o.exit_code == 0 ? instance_state::success : instance_state::failed)
        << r.instance_id;
    EXPECT_EQ(r.error, o.exit_code == 0 ? "" : "exit status " + std::to_string(o.exit_code));
    EXPECT_EQ(r.started_at, t0);
    EXPECT_EQ(r.finished_at, t0 + o.duration) << r.instance_id;
    EXPECT_EQ(at, t0 + o.duration) << r.instance_id << " reported at another instant";
    EXPECT_NE(r.output.find("simulated run"), std::string::npos) << r.output;
  }
  // Nothing more.
  run_until([] { return false; }, now() + 10'000);
  EXPECT_EQ(w.reports->size(), seen) << "a run reported twice";
}

// -- a worker that was stopped (SIGSTOP, a paused VM) and resumes ------------------
// Its proxy stops waiting for an execute's answer after 10 s and counts the
// attempt failed; the leader then places the next attempt. What the stopped
// worker finds waiting when it resumes must not start beside that one
// (tests/sim: AISCHED_SIM_FAULT=worker_freeze).

/// Stops the world's clock-driven part for `d`, as a stopped process sees it:
/// time passes, and the timers due meanwhile are handled only after.
void stop_for(caf::scheduler::test_coordinator& sched, std::chrono::milliseconds d) {
  sched.clock().current_time += d;
  sched.trigger_timeouts();
  sched.run();
}

/// The instance ids of the runs `opts`'s executor starts, in order.
std::shared_ptr<std::vector<std::string>> record_starts(sim_options& opts) {
  auto started = std::make_shared<std::vector<std::string>>();
  opts.observer = [started](const sim_run_event& e) {
    if (e.what == sim_run_event::kind::started) started->push_back(e.instance_id);
  };
  return started;
}

TEST_F(worker_sim_executor_test, a_request_reached_after_its_sender_stopped_waiting_never_starts) {
  sim_options opts;
  auto started = record_starts(opts);
  auto& w = spawn(opts);
  auto stale = request("7-6000-0");
  stale.answer_by = now() + max_skew - 1;  // its sender may have stopped waiting already
  auto fresh = request("7-6001-0");
  fresh.answer_by = now() + 10'000;
  caf::anon_send(w.worker, proto::execute_atom::value, std::vector<execute_request>{stale, fresh},
                 w.proxy);
  sched.run();
  EXPECT_EQ(*started, std::vector<std::string>{"7-6001-0"})
      << "a request its sender had given up on started";
  for (auto& r : *w.reports) EXPECT_NE(r.instance_id, "7-6000-0") << proto::name_of(r.state);
}

TEST_F(worker_sim_executor_test, a_held_run_reached_long_past_its_instant_ends_failed_unstarted) {
  sim_options opts;
  auto started = record_starts(opts);
  auto& w = spawn(opts);
  auto late = request("7-7000-0"), on_time = request("7-7001-0");
  for (auto* r : {&late, &on_time}) {
    r->hold_ms = 500;
    r->not_before = now() + r->hold_ms;
  }
  caf::anon_send(w.worker, proto::execute_atom::value, std::vector<execute_request>{late},
                 w.proxy);
  sched.run();
  // Stopped 12 s: it reaches the instant 11.5 s late, past max_late_start.
  stop_for(sched, std::chrono::milliseconds(max_late_start + 2'000));
  EXPECT_TRUE(started->empty()) << "a run reached 11.5 s past its instant started";
  ASSERT_EQ(w.reports->size(), 1u);
  auto& r = w.reports->front();
  EXPECT_EQ(r.instance_id, "7-7000-0");
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.started_at, 0) << "reported as started";
  EXPECT_NE(r.error.find("late (it was stopped): not started"), std::string::npos) << r.error;

  // Stopped 3 s only: the leader still waits for it; it starts, late.
  on_time.not_before = now() + on_time.hold_ms;
  caf::anon_send(w.worker, proto::execute_atom::value, std::vector<execute_request>{on_time},
                 w.proxy);
  sched.run();
  stop_for(sched, std::chrono::milliseconds(3'000));
  EXPECT_EQ(*started, std::vector<std::string>{"7-7001-0"});
}

TEST_F(worker_sim_executor_test, the_same_seed_gives_the_same_results) {
  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i) ids.push_back("7-" + std::to_string(2000 + i) + "-0");
  auto first = run_batch(7, ids);
  ASSERT_EQ(first.size(), ids.size());
  auto again = run_batch(7, ids);
  EXPECT_EQ(again, first) << "seed 7 replayed differently";
  auto other = run_batch(8, ids);
  ASSERT_EQ(other.size(), ids.size());
  EXPECT_NE(other, first) << "seeds 7 and 8 gave the same durations and exit codes";
}

TEST_F(worker_sim_executor_test, a_cancel_before_the_end_ends_the_run_cancelled) {
  sim_options opts;
  opts.seed = 3;
  opts.min_duration = 1'000;
  opts.max_duration = 5'000;
  auto& w = spawn(opts);
  auto req = request("7-3000-0");
  auto o = w.exec->outcome_of(req.instance_id, 1);
  auto t0 = now();
  caf::anon_send(w.worker, proto::execute_atom::value, req, w.proxy);
  run_until([] { return false; }, t0 + 100);
  ASSERT_EQ(w.reports->size(), 1u);
  EXPECT_EQ(w.reports->front().state, instance_state::running);
  ASSERT_GE(now(), t0 + 50);
  auto cancelled_at = now();
  caf::anon_send(w.worker, proto::cancel_run_atom::value, req.instance_id);
  run_until([&] { return finals(*w.reports) == 1; }, cancelled_at + opts.poll);
  ASSERT_EQ(finals(*w.reports), 1u) << "a cancel is seen within one poll";
  auto& r = w.reports->back();
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.error, "cancelled");
  EXPECT_EQ(r.exit_code, 128 + 9) << "killed, as the real executor's processes";
  EXPECT_EQ(r.started_at, t0);
  EXPECT_GT(r.finished_at, cancelled_at);
  EXPECT_LE(r.finished_at, cancelled_at + opts.poll);
  EXPECT_LT(r.finished_at, t0 + o.duration);
  // Its seeded end passes without another report.
  run_until([] { return false; }, t0 + o.duration + 1'000);
  EXPECT_EQ(w.reports->size(), 2u);
}

TEST_F(worker_sim_executor_test, a_run_longer_than_its_timeout_ends_timed_out_at_the_timeout) {
  sim_options opts;
  opts.seed = 5;
  opts.min_duration = 2'000;
  opts.max_duration = 5'000;
  auto& w = spawn(opts);
  auto req = request("7-4000-0", 500);
  auto t0 = now();
  caf::anon_send(w.worker, proto::execute_atom::value, req, w.proxy);
  run_until([&] { return finals(*w.reports) == 1; }, t0 + opts.max_duration + 1);
  ASSERT_EQ(finals(*w.reports), 1u);
  auto& r = w.reports->back();
  EXPECT_EQ(r.state, instance_state::timed_out);
  EXPECT_EQ(r.error, "timed out after 500ms");
  EXPECT_EQ(r.exit_code, 128 + 9);
  EXPECT_EQ(r.finished_at, t0 + 500);
}

}  // namespace
}  // namespace aisched::worker
