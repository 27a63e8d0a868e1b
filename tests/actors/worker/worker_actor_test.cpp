// Tests for the worker actor on a real actor_system with a real run_pool: a stand-in
// worker_proxy forwards the worker's `report`s to the test's scoped_actor. Checks the report
// sequence (running, then final), dedup by instance id + attempt (a duplicate runs once and
// repeats a known outcome), cancel_run, refusal once the pool stopped, the runs it says
// it holds (executing or unacknowledged), dedup across a restart from its outbox, a
// worker whose outbox will not open refusing runs instead of keeping reports in memory,
// a dedup cache bounded once the leader acknowledged the results, and runs placed
// ahead of their instant (held until it, dropped by a cancel, replaced by a new delivery).
#include "worker_actor_fixture.hpp"

#include <atomic>
#include "common/clock.hpp"

namespace aisched::worker {
namespace {

TEST_F(worker_actor_test, reports_running_then_success) {
  ASSERT_EQ(execute(shell("7-1000-0", "true")), true);
  auto running = next_report();
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, instance_state::running);
  EXPECT_EQ(running->instance_id, "7-1000-0");
  EXPECT_EQ(running->worker_id, "w-test");
  EXPECT_GT(running->started_at, 0);
  auto done = next_report();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, instance_state::success);
  EXPECT_EQ(done->instance_id, "7-1000-0");
  EXPECT_EQ(done->worker_id, "w-test");
  EXPECT_EQ(done->exit_code, 0);
  EXPECT_GE(done->finished_at, done->started_at);
  expect_no_report();
}

TEST_F(worker_actor_test, reports_failure_with_exit_code_and_output) {
  ASSERT_EQ(execute(shell("7-1000-0", "echo bad; exit 4")), true);
  auto running = next_report();
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, instance_state::running);
  auto done = next_report();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, instance_state::failed);
  EXPECT_EQ(done->exit_code, 4);
  EXPECT_EQ(done->output, "bad\n");
  EXPECT_EQ(done->worker_id, "w-test");
}

TEST_F(worker_actor_test, duplicate_delivery_runs_once_and_repeats_the_final_report) {
  auto count = dir_ / "count";
  auto go = dir_ / "go";
  auto req = shell("7-2000-0", gated(count, go));
  ASSERT_EQ(execute(req), true);
  auto running = next_report();
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, instance_state::running);
  // Delivered again while it runs: accepted, but neither run nor reported again.
  ASSERT_EQ(execute(req), true);
  touch(go);
  auto done = next_report();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, instance_state::success) << done->error;
  expect_no_report();
  EXPECT_EQ(line_count(count), 1u);
  // Delivered again after it finished: the known outcome is sent again, nothing runs.
  ASSERT_EQ(execute(req), true);
  auto again = next_report();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->state, instance_state::success);
  EXPECT_EQ(again->instance_id, req.instance_id);
  EXPECT_EQ(again->finished_at, done->finished_at);
  expect_no_report();
  EXPECT_EQ(line_count(count), 1u);
}

TEST_F(worker_actor_test, final_report_goes_to_the_proxy_of_the_latest_delivery) {
  // A new leader's proxy re-delivers a run that is still going: the outcome must reach it.
  auto count = dir_ / "count";
  auto go = dir_ / "go";
  auto req = shell("7-2500-0", gated(count, go));
  ASSERT_EQ(execute(req), true);
  auto running = next_report();
  ASSERT_TRUE(running);
  EXPECT_EQ(last_from_, "proxy");
  auto second = spawn_proxy("second");
  ASSERT_EQ(execute(req, second), true);
  touch(go);
  auto done = next_report();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, instance_state::success);
  EXPECT_EQ(last_from_, "second");
  expect_no_report();
  EXPECT_EQ(line_count(count), 1u);
}

TEST_F(worker_actor_test, another_attempt_of_the_same_instance_runs_again) {
  auto count = dir_ / "count";
  auto go = dir_ / "go";
  touch(go);
  for (uint32_t attempt : {1u, 2u}) {
    ASSERT_EQ(execute(shell("7-3000-0", gated(count, go), attempt)), true);
    auto running = next_report();
    ASSERT_TRUE(running);
    EXPECT_EQ(running->state, instance_state::running);
    auto done = next_report();
    ASSERT_TRUE(done);
    EXPECT_EQ(done->state, instance_state::success);
  }
  EXPECT_EQ(line_count(count), 2u);
}

TEST_F(worker_actor_test, cancel_run_ends_a_running_attempt_as_cancelled) {
  ASSERT_EQ(execute(shell("7-4000-0", "sleep 30")), true);
  auto running = next_report();
  ASSERT_TRUE(running);
  ASSERT_EQ(running->state, instance_state::running);
  auto start = steady::now();
  caf::anon_send(worker_, proto::cancel_run_atom::value, std::string("7-4000-0"));
  auto done = next_report(5000ms);
  ASSERT_TRUE(done) << "no final report after cancel_run";
  EXPECT_EQ(done->state, instance_state::failed);
  EXPECT_EQ(done->error, "cancelled");
  EXPECT_EQ(done->instance_id, "7-4000-0");
  EXPECT_LT(steady::now() - start, 3s);
}

TEST_F(worker_actor_test, cancel_run_leaves_other_instances_running) {
  // "7-5000-1" is a prefix of "7-5000-10": only the exact instance is cancelled.
  auto count = dir_ / "count";
  auto go = dir_ / "go";
  ASSERT_EQ(execute(shell("7-5000-10", gated(count, go))), true);
  auto running = next_report();
  ASSERT_TRUE(running);
  ASSERT_EQ(running->state, instance_state::running);
  caf::anon_send(worker_, proto::cancel_run_atom::value, std::string("7-5000-1"));
  caf::anon_send(worker_, proto::cancel_run_atom::value, std::string("7-5000"));
  expect_no_report(300ms);
  touch(go);
  auto done = next_report();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->instance_id, "7-5000-10");
  EXPECT_EQ(done->state, instance_state::success) << done->error;
}

TEST_F(worker_actor_test, execute_is_refused_once_the_pool_stopped) {
  pool_->stop();
  auto req = shell("7-6000-0", "true");
  EXPECT_EQ(execute(req), false);
  EXPECT_EQ(execute(req), false);  // not remembered as a duplicate either
  expect_no_report();
}

TEST_F(worker_actor_test, holds_its_running_runs_and_its_unacknowledged_reports) {
  auto count = dir_ / "count";
  auto go = dir_ / "go";
  EXPECT_TRUE(held(worker_).empty());
  ASSERT_EQ(execute(shell("7-7000-0", gated(count, go), 1)), true);
  auto running = next_report();
  ASSERT_TRUE(running);
  ASSERT_EQ(execute(shell("7-7001-0", "true", 2)), true);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(next_report());  // 7001: running, success
  using h = proto::held_run;
  EXPECT_EQ(held(worker_), (std::vector<h>{{"7-7000-0", 1}, {"7-7001-0", 2}}));
  caf::anon_send(worker_, proto::ack_atom::value, std::vector<std::string>{"7-7001-0#2"});
  EXPECT_EQ(held(worker_), (std::vector<h>{{"7-7000-0", 1}})) << "acknowledged: not held";
  touch(go);
  auto done = next_report();
  ASSERT_TRUE(done);
  EXPECT_EQ(held(worker_), (std::vector<h>{{"7-7000-0", 1}})) << "finished, not acknowledged";
  caf::anon_send(worker_, proto::ack_atom::value, std::vector<std::string>{"7-7000-0#1"});
  EXPECT_TRUE(held(worker_).empty());
}

TEST_F(worker_actor_test, no_op_runs_finished_in_one_burst_are_held_until_reported_and_kept) {
  // No-op runs finish as they arrive; each message's reports go out after its
  // outbox write. A leader asking what the worker holds while those reports
  // are unacknowledged must hear of every one: a run it does not hear of, it
  // declares lost and runs again.
  constexpr int n = 300;
  std::vector<proto::held_run> want;
  for (int i = 0; i < n; ++i) {
    auto req = shell("7-" + std::to_string(8000 + i) + "-0", "");
    req.kind = proto::task_kind::noop;
    want.push_back({req.instance_id, 1});
    // anon_send: queued at once, behind each other, with no answer waited for.
    caf::anon_send(worker_, proto::execute_atom::value, req, proxy_);
  }
  std::sort(want.begin(), want.end(), [](auto& a, auto& b) { return a.instance_id < b.instance_id; });
  EXPECT_EQ(held(worker_), want) << "finished and not acknowledged: held";
  std::set<std::string> reported;
  for (int i = 0; i < n; ++i) {
    auto r = next_report();
    ASSERT_TRUE(r) << "report " << i << " of " << n;
    EXPECT_EQ(r->state, instance_state::success);
    reported.insert(r->instance_id);
  }
  EXPECT_EQ(reported.size(), static_cast<size_t>(n)) << "each run reported once";
  expect_no_report();
}

/// The worker's figures as aisched-inspect shows them (dedup_cached, running, ...).
std::map<std::string, std::string> details(caf::scoped_actor& self, const proto::worker_actor& w) {
  std::map<std::string, std::string> out;
  self->request(w, 5s, proto::inspect_atom::value)
      .receive([&](proto::actor_summary& s) { out = std::move(s.details); },
               [&](caf::error& e) { ADD_FAILURE() << "inspect: " << to_string(e); });
  return out;
}

TEST_F(worker_actor_test, a_restarted_worker_answers_an_unacknowledged_attempt_without_rerunning) {
  auto box = dir_ / "outbox";
  auto count = dir_ / "count";
  worker_config wcfg;
  wcfg.id = "w-box";
  wcfg.outbox_dir = box.string();
  auto first = sys_.spawn(worker_actor_impl, wcfg, processes());
  auto req = shell("7-8000-0", "echo run >> '" + count.string() + "'");
  std::optional<bool> first_accepted;
  self_->request(first, 5s, proto::execute_atom::value, req, proxy_)
      .receive([&](bool ok) { first_accepted = ok; }, [](caf::error&) {});
  ASSERT_EQ(first_accepted, true);
  std::optional<run_result> done;
  for (int i = 0; i < 2 && !(done && done->state == instance_state::success); ++i)
    done = next_report();
  ASSERT_TRUE(done && done->state == instance_state::success);
  stop_worker(first, box);

  // The next incarnation holds the attempt (its report is not acknowledged) and, handed it
  // again by a new leader, repeats the outcome instead of running it a second time.
  auto second = sys_.spawn(worker_actor_impl, wcfg, processes());
  EXPECT_EQ(held(second), (std::vector<proto::held_run>{{"7-8000-0", 1}}));
  EXPECT_EQ(details(self_, second)["outbox_segments"], "1")
      << "a restart (and the test's own reopen) must not add a segment file each";
  std::optional<bool> accepted;
  self_->request(second, 5s, proto::execute_atom::value, req, proxy_)
      .receive([&](bool ok) { accepted = ok; }, [](caf::error&) {});
  ASSERT_EQ(accepted, true);
  auto again = next_report();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->state, instance_state::success);
  EXPECT_EQ(again->finished_at, done->finished_at) << "the recorded outcome, not a new run";
  expect_no_report();
  EXPECT_EQ(line_count(count), 1u) << "the attempt ran again after the restart";
  stop_worker(second, box);
}

TEST_F(worker_actor_test, a_worker_whose_outbox_will_not_open_refuses_runs_and_says_why) {
  // A regular file where the outbox directory should be: RocksDB cannot open it.
  auto box = dir_ / "outbox";
  std::ofstream(box) << "not a directory\n";
  auto count = dir_ / "count";
  worker_config wcfg;
  wcfg.id = "w-nobox";
  wcfg.outbox_dir = box.string();
  auto w = sys_.spawn(worker_actor_impl, wcfg, processes());

  std::string fault;
  EXPECT_TRUE(held(w, &fault).empty());
  EXPECT_NE(fault.find("open"), std::string::npos)
      << "the worker must say its outbox failed, so its registrar offers no capacity: '" << fault
      << "'";
  std::optional<bool> accepted;
  std::optional<caf::error> refused;
  self_->request(w, 5s, proto::execute_atom::value,
                 shell("7-9000-0", "echo run >> '" + count.string() + "'"), proxy_)
      .receive([&](bool ok) { accepted = ok; }, [&](caf::error& e) { refused = e; });
  EXPECT_FALSE(accepted) << "a worker without its outbox took a run whose report a restart "
                            "would lose";
  ASSERT_TRUE(refused);
  EXPECT_EQ(view(*refused).code, errc::storage_error);
  EXPECT_EQ(view(*refused).field, "outbox");
  expect_no_report();
  EXPECT_FALSE(fs::exists(count)) << "the refused run ran";
  caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
}

/// A worker with an outbox under dir_ whose writes fail while `failing` holds.
worker_config failing_outbox_in(const fs::path& dir, std::shared_ptr<std::atomic<bool>> failing) {
  worker_config wcfg;
  wcfg.id = "w-failing";
  wcfg.outbox_dir = (dir / "outbox").string();
  wcfg.outbox_opts.fail_writes = [failing] { return failing->load(); };
  return wcfg;
}

TEST_F(worker_actor_test, a_run_whose_start_the_outbox_cannot_record_is_refused_unstarted) {
  // The disk fails between the outbox's open and the run: the record that the run may
  // have run cannot be written. Launched anyway, a crash would leave no trace of it, and
  // the leader would place the same attempt again elsewhere: twice.
  auto failing = std::make_shared<std::atomic<bool>>(false);
  auto count = dir_ / "count";
  auto w = spawn_worker(failing_outbox_in(dir_, failing));
  std::string fault;
  held(w, &fault);  // opened, and working
  ASSERT_EQ(fault, "");
  failing->store(true);

  std::optional<caf::error> refused;
  self_->request(w, 5s, proto::execute_atom::value,
                 shell("7-9100-0", "echo run >> '" + count.string() + "'"), proxy_)
      .receive([&](bool) { ADD_FAILURE() << "the worker took a run it could not record"; },
               [&](caf::error& e) { refused = e; });
  ASSERT_TRUE(refused);
  EXPECT_EQ(view(*refused).code, errc::storage_error);
  EXPECT_EQ(view(*refused).field, "outbox");
  EXPECT_TRUE(held(w, &fault).empty()) << "a run that never started is not held";
  EXPECT_NE(fault.find("write"), std::string::npos) << fault;
  expect_no_report();
  EXPECT_FALSE(fs::exists(count)) << "the unrecorded run ran";
}

TEST_F(worker_actor_test, a_held_run_whose_start_the_outbox_cannot_record_fails_unstarted) {
  // Taken ahead of its instant while the outbox worked, the run reaches its instant after
  // the disk failed: it does not start, and its attempt ends failed, saying why.
  auto failing = std::make_shared<std::atomic<bool>>(false);
  auto count = dir_ / "count";
  auto w = spawn_worker(failing_outbox_in(dir_, failing));
  auto req = shell("7-9200-0", "echo run >> '" + count.string() + "'");
  req.hold_ms = 600;
  req.not_before = system_now_ms() + req.hold_ms;
  std::optional<bool> accepted;
  self_->request(w, 5s, proto::execute_atom::value, req, proxy_)
      .receive([&](bool ok) { accepted = ok; },
               [&](caf::error& e) { ADD_FAILURE() << sys_.render(e); });
  ASSERT_EQ(accepted, true);
  failing->store(true);

  auto r = next_report();
  ASSERT_TRUE(r) << "a held run that could not start was never reported";
  EXPECT_EQ(r->instance_id, req.instance_id);
  EXPECT_EQ(r->state, instance_state::failed);
  EXPECT_NE(r->error.find("did not start the run: its outbox failed"), std::string::npos)
      << r->error;
  EXPECT_EQ(r->started_at, 0) << "reported as started";
  expect_no_report();
  EXPECT_FALSE(fs::exists(count)) << "the unrecorded run ran";
}

TEST_F(worker_actor_test, acknowledged_attempts_are_kept_compact_and_at_most_dedup_cap) {
  // Every finished attempt used to stay whole for the 5-minute TTL: 1.6 M of them at full
  // rate, the node's RSS growing without end.
  worker_config wcfg;
  wcfg.id = "w-cap";
  wcfg.dedup_cap = 3;
  auto w = sys_.spawn(worker_actor_impl, wcfg, processes());
  auto noop = [&](const std::string& id) {
    auto req = shell(id, "");
    req.kind = proto::task_kind::noop;
    return req;
  };
  auto run = [&](const execute_request& req) {
    std::optional<bool> ok;
    self_->request(w, 5s, proto::execute_atom::value, req, proxy_)
        .receive([&](bool b) { ok = b; }, [&](caf::error& e) { ADD_FAILURE() << to_string(e); });
    return ok;
  };
  // One attempt never acknowledged, then eight acknowledged.
  ASSERT_EQ(run(noop("7-100-0")), true);
  auto unacked = next_report();
  ASSERT_TRUE(unacked);
  std::vector<run_result> done;
  for (int i = 1; i <= 8; ++i) {
    auto id = "7-" + std::to_string(100 + i) + "-0";
    ASSERT_EQ(run(noop(id)), true);
    auto r = next_report();
    ASSERT_TRUE(r);
    ASSERT_EQ(r->state, instance_state::success);
    done.push_back(*r);
    self_->send(w, proto::ack_atom::value, std::vector<std::string>{id + "#1"});
  }
  auto d = details(self_, w);
  EXPECT_EQ(d["dedup_cached"], "4") << "three settled attempts plus the unacknowledged one";
  EXPECT_EQ(d["unacked_reports"], "1");

  // The newest settled attempt, delivered again, is answered from its compact outcome.
  ASSERT_EQ(run(noop("7-108-0")), true);
  auto again = next_report();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->instance_id, "7-108-0");
  EXPECT_EQ(again->attempt, 1u);
  EXPECT_EQ(again->worker_id, "w-cap");
  EXPECT_EQ(again->state, instance_state::success);
  EXPECT_EQ(again->finished_at, done.back().finished_at) << "the recorded outcome, not a new run";
  EXPECT_EQ(details(self_, w)["unacked_reports"], "1") << "the duplicate ran and reported anew";
  // The unacknowledged one is never dropped, however many settle after it.
  EXPECT_EQ(held(w), (std::vector<proto::held_run>{{"7-100-0", 1}}));
  ASSERT_EQ(run(noop("7-100-0")), true);
  auto kept = next_report();
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->finished_at, unacked->finished_at);
  expect_no_report();
  caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
}

TEST_F(worker_actor_test, a_settled_attempt_repeats_its_outcome_without_its_output) {
  // At the defaults: the output reached the leader, which committed it before acknowledging.
  ASSERT_EQ(execute(shell("7-200-0", "head -c 10000 /dev/zero | tr '\\0' x; exit 3")), true);
  std::optional<run_result> done;
  for (int i = 0; i < 2 && !(done && done->state != instance_state::running); ++i)
    done = next_report();
  ASSERT_TRUE(done);
  ASSERT_EQ(done->state, instance_state::failed);
  EXPECT_EQ(done->output.size(), 10000u);
  self_->send(worker_, proto::ack_atom::value, std::vector<std::string>{"7-200-0#1"});
  EXPECT_TRUE(held(worker_).empty());
  ASSERT_EQ(execute(shell("7-200-0", "echo ran again; exit 0")), true);
  auto again = next_report();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->state, instance_state::failed);
  EXPECT_EQ(again->exit_code, 3);
  EXPECT_EQ(again->started_at, done->started_at);
  EXPECT_EQ(again->finished_at, done->finished_at);
  EXPECT_TRUE(again->output.empty());
  expect_no_report();
}

// -- runs placed ahead of their instant (execute_request::not_before, hold_ms) -----

TEST_F(worker_actor_test, a_run_placed_ahead_of_its_instant_is_held_then_starts_on_it) {
  auto stamp = dir_ / "stamp";
  auto req = shell("7-3000-0", "date +%s%3N > '" + stamp.string() + "'");
  req.hold_ms = 1500;
  const auto instant = req.not_before = system_now_ms() + req.hold_ms;
  ASSERT_EQ(execute(req), true);
  // Held, not started: a new leader asking what it holds must not call it lost.
  EXPECT_EQ(held(worker_).size(), 1u);
  EXPECT_FALSE(fs::exists(stamp)) << "started before its instant";
  auto running = next_report();
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, instance_state::running);
  EXPECT_GE(running->started_at, instant) << "reported a start before the instant";
  auto done = next_report();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, instance_state::success) << done->error;
  std::ifstream in(stamp);
  int64_t started = 0;
  in >> started;
  EXPECT_GE(started, instant) << "the process ran before its instant";
}

TEST_F(worker_actor_test, a_cancel_before_the_instant_drops_the_held_run_unstarted) {
  auto count = dir_ / "count";
  auto req = shell("7-4000-0", "echo run >> '" + count.string() + "'");
  req.hold_ms = 800;
  req.not_before = system_now_ms() + req.hold_ms;
  ASSERT_EQ(execute(req), true);
  caf::anon_send(worker_, proto::cancel_run_atom::value, req.instance_id);
  EXPECT_TRUE(held(worker_).empty()) << "a withdrawn run is no longer held";
  // Past the instant: nothing ran, nothing was reported (the cancel was committed).
  expect_no_report(1500ms);
  EXPECT_FALSE(fs::exists(count));
  // The same attempt delivered afresh (its slot fired again) is taken anew.
  req.hold_ms = 0;
  ASSERT_EQ(execute(req), true);
  auto running = next_report();
  ASSERT_TRUE(running);
  auto done = next_report();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, instance_state::success) << done->error;
  EXPECT_EQ(line_count(count), 1u);
}

TEST_F(worker_actor_test, a_held_run_delivered_again_runs_once_with_the_latest_request) {
  auto out = dir_ / "out";
  auto req = shell("7-5000-0", "echo old >> '" + out.string() + "'");
  req.hold_ms = 1000;
  req.not_before = system_now_ms() + req.hold_ms;
  ASSERT_EQ(execute(req), true);
  req.command = "echo new >> '" + out.string() + "'";  // its task changed before the instant
  ASSERT_EQ(execute(req), true);
  auto running = next_report();
  ASSERT_TRUE(running);
  auto done = next_report();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, instance_state::success) << done->error;
  expect_no_report();
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "new\n");
}

TEST_F(worker_actor_test, runs_held_for_one_instant_all_start_on_it_but_a_cancelled_one) {
  const auto instant = system_now_ms() + 1500;
  for (int i = 0; i < 20; ++i) {
    execute_request req;
    req.instance_id = "7-7000-" + std::to_string(i);
    req.task_id = 7;
    req.kind = proto::task_kind::noop;
    req.not_before = instant;
    req.hold_ms = instant - system_now_ms();
    ASSERT_EQ(execute(req), true);
  }
  EXPECT_EQ(held(worker_).size(), 20u);
  caf::anon_send(worker_, proto::cancel_run_atom::value, std::string("7-7000-3"));
  std::set<std::string> started;
  for (int i = 0; i < 19; ++i) {
    auto r = next_report();
    ASSERT_TRUE(r) << "report " << i << " of 19 missing";
    EXPECT_EQ(r->state, instance_state::success);
    EXPECT_GE(r->started_at, instant) << r->instance_id << " started before its instant";
    started.insert(r->instance_id);
  }
  EXPECT_EQ(started.size(), 19u);
  EXPECT_EQ(started.count("7-7000-3"), 0u) << "the cancelled run started";
  expect_no_report();
}

TEST_F(worker_actor_test, a_worker_whose_clock_is_behind_holds_a_run_little_longer_than_asked) {
  // The leader's instant is a minute ahead of this worker's clock, but the
  // leader asked for a 300 ms hold: the run starts within max_skew after it.
  auto req = shell("7-8000-0", "true");
  req.hold_ms = 300;
  req.not_before = system_now_ms() + 60'000;
  const auto sent = system_now_ms();
  ASSERT_EQ(execute(req), true);
  auto running = next_report(5000ms);
  ASSERT_TRUE(running) << "held far longer than asked";
  EXPECT_GE(running->started_at, sent + req.hold_ms);
  EXPECT_LE(running->started_at, sent + req.hold_ms + max_skew + 1000);
}

TEST_F(worker_actor_test, a_run_due_further_ahead_than_it_holds_is_refused) {
  auto req = shell("7-6000-0", "true");
  req.hold_ms = max_hold + 1;  // a lying leader: no fire-ahead is that long
  req.not_before = system_now_ms() + req.hold_ms;
  std::optional<caf::error> refused;
  self_->request(worker_, 5s, proto::execute_atom::value, req, proxy_)
      .receive([&](bool) {}, [&](caf::error& err) { refused = err; });
  ASSERT_TRUE(refused) << "accepted a run to hold longer than it holds any";
  EXPECT_EQ(view(*refused).code, errc::invalid_argument);
  EXPECT_EQ(view(*refused).field, "hold_ms");
  EXPECT_TRUE(held(worker_).empty());
}

}  // namespace
}  // namespace aisched::worker
