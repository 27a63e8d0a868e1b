// Tests for the attempt history the state machine keeps (storage/attempt_history):
// one record per ended attempt (final or retried, lost with a worker, timed
// out, cancelled) with its worker, times and outcome, the attempt in flight
// listed last, output and record count capped, tenant scoping, and the same
// history on every replica and after a replay or a reopen.
#include <rocksdb/iterator.h>

#include "storage/state_machine_fixture.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
using namespace testing_support;

class attempt_history_test : public state_machine_test {
 protected:
  /// A task retried up to `max_attempts` times, fired at t0: its instance id.
  std::string retried_instance(uint32_t max_attempts = 3, std::string tenant = "default") {
    auto t = make_task("retried", std::move(tenant));
    t.retry.kind = retry_kind::fixed;
    t.retry.interval = 1000;
    t.retry.max_attempts = max_attempts;
    auto id = create(t);
    must_apply(fire_of({{id, t0, "tr"}}));
    return make_instance_id(id, t0, 0);
  }

  /// Dispatches attempt `attempt` of `iid` to `worker` at `at` and reports it running.
  void start(const std::string& iid, const std::string& worker, unix_ms at) {
    must_apply(dispatch{1, at, {{iid, worker}}});
    auto r = report(iid, instance_state::running, at + 1);
    r.worker_id = worker;
    must_apply(report_results{1, at + 1, {r}});
  }

  /// The report that ends the attempt in flight on `worker` with `state`.
  static report_results ending(const std::string& iid, const std::string& worker,
                               uint32_t attempt, instance_state state, unix_ms at,
                               std::string error = {}, std::string output = {},
                               int32_t exit_code = 0) {
    auto r = report(iid, state, at);
    r.worker_id = worker;
    r.attempt = attempt;
    r.error = std::move(error);
    r.output = std::move(output);
    r.exit_code = exit_code;
    return report_results{1, at + 1, {r}};
  }

  /// Ends the attempt in flight on `worker` with `state`.
  void end(const std::string& iid, const std::string& worker, uint32_t attempt,
           instance_state state, unix_ms at, std::string error = {}, std::string output = {},
           int32_t exit_code = 0) {
    must_apply(ending(iid, worker, attempt, state, at, std::move(error), std::move(output),
                      exit_code));
  }

  std::vector<attempt_record> attempts(const std::string& iid, std::string tenant = "") {
    auto a = sm_->list_attempts(tenant, iid);
    EXPECT_TRUE(a) << view(a.error()).message;
    if (!a) return {};
    EXPECT_EQ(a->instance_id, iid);
    return a->items;
  }
};

TEST_F(attempt_history_test, each_ended_attempt_is_recorded_and_the_one_in_flight_listed_last) {
  const auto iid = retried_instance();
  EXPECT_TRUE(attempts(iid).empty()) << "a pending run has no attempt yet";

  start(iid, "w1", t0 + 10);
  auto now = attempts(iid);
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].attempt, 1u);
  EXPECT_EQ(now[0].state, instance_state::running);
  EXPECT_EQ(now[0].worker_id, "w1");
  EXPECT_EQ(now[0].dispatched_at, t0 + 10);

  end(iid, "w1", 1, instance_state::failed, t0 + 20, "exit status 2", "first\n", 2);
  ASSERT_EQ(get_instance(iid).state, instance_state::retry_waiting);
  must_apply(retry{1, t0 + 1100, {iid}});
  start(iid, "w2", t0 + 1200);
  end(iid, "w2", 2, instance_state::success, t0 + 1300, "", "second\n");

  auto h = attempts(iid);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].attempt, 1u);
  EXPECT_EQ(h[0].state, instance_state::failed) << "a retried attempt records how it ended";
  EXPECT_EQ(h[0].worker_id, "w1");
  EXPECT_EQ(h[0].dispatched_at, t0 + 10);
  EXPECT_EQ(h[0].started_at, t0 + 20);
  EXPECT_EQ(h[0].finished_at, t0 + 21);
  EXPECT_EQ(h[0].exit_code, 2);
  EXPECT_EQ(h[0].error, "exit status 2");
  EXPECT_EQ(h[0].output, "first\n") << "the first attempt's output survives the second";
  EXPECT_EQ(h[1].attempt, 2u);
  EXPECT_EQ(h[1].state, instance_state::success);
  EXPECT_EQ(h[1].worker_id, "w2");
  EXPECT_EQ(h[1].output, "second\n");
  EXPECT_EQ(get_instance(iid).output, "second\n");

  // A repeated final report is acknowledged and records nothing more.
  end(iid, "w2", 2, instance_state::success, t0 + 1300, "", "second\n");
  EXPECT_EQ(attempts(iid).size(), 2u);
}

TEST_F(attempt_history_test, an_attempt_lost_with_its_worker_is_recorded_and_retried_as_the_next) {
  const auto iid = retried_instance();
  start(iid, "n1", t0 + 10);
  end(iid, "n1", 1, instance_state::failed, t0 + 30, "worker_lost: worker n1 restarted without it",
      "", -1);
  auto x = get_instance(iid);
  ASSERT_EQ(x.state, instance_state::retry_waiting) << "retried per the task's policy";
  must_apply(retry{1, x.next_attempt_at, {iid}});
  EXPECT_EQ(get_instance(iid).attempt, 2u);
  auto h = attempts(iid);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].state, instance_state::failed);
  EXPECT_EQ(h[0].worker_id, "n1");
  EXPECT_EQ(h[0].error.rfind("worker_lost: ", 0), 0u) << h[0].error;
}

TEST_F(attempt_history_test, timed_out_and_cancelled_attempts_are_recorded) {
  const auto iid = retried_instance();
  start(iid, "w1", t0 + 10);
  // The retry actor's deadline report names neither worker nor attempt.
  run_result expired;
  expired.instance_id = iid;
  expired.state = instance_state::timed_out;
  expired.exit_code = -1;
  expired.error = "no report from the worker before the run's deadline";
  must_apply(report_results{1, t0 + 500, {expired}});
  must_apply(retry{1, get_instance(iid).next_attempt_at, {iid}});
  start(iid, "w2", t0 + 2000);
  must_apply(cancel{"", iid, t0 + 2500, "operator"});

  auto h = attempts(iid);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].state, instance_state::timed_out);
  EXPECT_EQ(h[0].attempt, 1u);
  EXPECT_EQ(h[0].worker_id, "w1") << "the attempt's worker, from the committed state";
  EXPECT_EQ(h[0].finished_at, t0 + 500);
  EXPECT_EQ(h[1].state, instance_state::cancelled);
  EXPECT_EQ(h[1].attempt, 2u);
  EXPECT_EQ(h[1].error, "operator");
  EXPECT_EQ(h[1].exit_code, 0);
  EXPECT_EQ(h[1].finished_at, t0 + 2500);
}

TEST_F(attempt_history_test, a_cancelled_attempt_keeps_what_its_worker_reported) {
  // The cancel commits first; the killed attempt's report comes after it. The
  // run stays cancelled and keeps that attempt's output and exit code.
  const auto iid = retried_instance();
  start(iid, "w1", t0 + 10);
  must_apply(cancel{"", iid, t0 + 4000, "operator"});
  EXPECT_TRUE(get_instance(iid).output.empty());
  auto other_worker = apply_one(
      ending(iid, "w2", 1, instance_state::failed, t0 + 4100, "cancelled", "not mine\n", 137));
  ASSERT_FALSE(other_worker);
  EXPECT_EQ(code_of(other_worker.error()), errc::illegal_transition);
  end(iid, "w1", 1, instance_state::failed, t0 + 4100, "cancelled", "line 1\nline 2\n", 137);
  auto x = get_instance(iid);
  EXPECT_EQ(x.state, instance_state::cancelled);
  EXPECT_EQ(x.error, "operator");
  EXPECT_EQ(x.output, "line 1\nline 2\n");
  EXPECT_EQ(x.exit_code, 137);
  EXPECT_EQ(x.finished_at, t0 + 4000);
  // The same report again changes nothing.
  end(iid, "w1", 1, instance_state::failed, t0 + 4200, "cancelled", "other\n", 137);
  EXPECT_EQ(get_instance(iid).output, "line 1\nline 2\n");
  auto h = attempts(iid);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].state, instance_state::cancelled);
  EXPECT_EQ(h[0].error, "operator");
  EXPECT_EQ(h[0].output, "line 1\nline 2\n");
  EXPECT_EQ(h[0].exit_code, 137);
  // Retried by hand, the record stays as it is, and the next attempt starts clean.
  must_apply(retry_instance{"", iid, t0 + 5000});
  start(iid, "w1", t0 + 5100);
  must_apply(cancel{"", iid, t0 + 5200, "again"});
  EXPECT_TRUE(get_instance(iid).output.empty()) << "not the earlier attempt's output";
  h = attempts(iid);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].output, "line 1\nline 2\n");
  EXPECT_TRUE(h[1].output.empty());
}

TEST_F(attempt_history_test, a_run_cancelled_before_dispatch_has_no_attempt) {
  const auto iid = retried_instance();
  must_apply(cancel{"", iid, t0 + 5, "operator"});
  EXPECT_TRUE(attempts(iid).empty());
}

TEST_F(attempt_history_test, output_is_capped_per_attempt_and_the_newest_attempts_are_kept) {
  const uint32_t n = attempts_kept + 5;
  const auto iid = retried_instance(n + 1);
  std::string big(3 * attempt_output_cap, 'a');
  big += "\xE2\x82\xAC";  // a three-byte character across the cut, then the end marker
  big += std::string(attempt_output_cap - 2, 'z');
  unix_ms at = t0 + 10;
  for (uint32_t a = 1; a <= n; ++a) {
    start(iid, "w1", at);
    end(iid, "w1", a, instance_state::failed, at + 10, "exit status 1", a == 1 ? big : "", 1);
    at = get_instance(iid).next_attempt_at;
    must_apply(retry{1, at, {iid}});
  }
  auto h = attempts(iid);
  ASSERT_EQ(h.size(), attempts_kept);
  EXPECT_EQ(h.front().attempt, n - attempts_kept + 1) << "the oldest attempts go first";
  EXPECT_EQ(h.back().attempt, n);
  for (size_t i = 1; i < h.size(); ++i) EXPECT_EQ(h[i].attempt, h[i - 1].attempt + 1);

  // The first attempt's record, before it was dropped, had a capped tail.
  const auto iid2 = retried_instance(2);
  start(iid2, "w1", t0 + 10);
  end(iid2, "w1", 1, instance_state::success, t0 + 20, "", big);
  auto one = attempts(iid2);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_LE(one[0].output.size(), attempt_output_cap);
  EXPECT_GE(one[0].output.size(), attempt_output_cap - 3);
  EXPECT_EQ(big.compare(big.size() - one[0].output.size(), std::string::npos, one[0].output), 0)
      << "the record keeps the end of the output";
  EXPECT_NE(static_cast<uint8_t>(one[0].output.front()) & 0xC0, 0x80)
      << "the tail does not start inside a UTF-8 character";
}

/// Records in the `attempts` column family, all instances together.
size_t stored_records(rocks& db) {
  size_t n = 0;
  auto it = db.iterate(column::attempts);
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  return n;
}

TEST_F(attempt_history_test, the_attempt_that_ends_a_run_is_kept_by_its_instance_not_written_apart) {
  // A run that succeeds at once writes no attempt record (a key less per run,
  // #17), and its history still lists that attempt whole.
  const auto iid = retried_instance();
  start(iid, "w1", t0 + 10);
  end(iid, "w1", 1, instance_state::success, t0 + 20, "", "done\n");
  EXPECT_EQ(stored_records(*db_), 0u) << "the finished instance holds the attempt";
  auto h = attempts(iid);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].attempt, 1u);
  EXPECT_EQ(h[0].state, instance_state::success);
  EXPECT_EQ(h[0].worker_id, "w1");
  EXPECT_EQ(h[0].dispatched_at, t0 + 10);
  EXPECT_EQ(h[0].started_at, t0 + 20);
  EXPECT_EQ(h[0].finished_at, t0 + 21);
  EXPECT_EQ(h[0].output, "done\n");
}

TEST_F(attempt_history_test, a_run_retried_by_hand_keeps_the_attempt_that_had_ended_it) {
  // Failed for good (one attempt allowed), then retried by an operator: the
  // failed attempt is written before the instance takes attempt 2, so the
  // history keeps it even though the instance no longer does.
  const auto iid = retried_instance(1);
  start(iid, "w1", t0 + 10);
  end(iid, "w1", 1, instance_state::failed, t0 + 20, "exit status 3", "boom\n", 3);
  ASSERT_EQ(get_instance(iid).state, instance_state::failed);
  must_apply(retry_instance{"", iid, t0 + 100});
  EXPECT_EQ(stored_records(*db_), 1u);
  start(iid, "w2", t0 + 200);
  end(iid, "w2", 2, instance_state::failed, t0 + 300, "exit status 4", "again\n", 4);
  // Again by hand; attempt 3 is cancelled on its worker and retried in one batch.
  must_apply(retry_instance{"", iid, t0 + 400});
  must_apply(dispatch{1, t0 + 500, {{iid, "w1"}}});
  apply({command{cancel{"", iid, t0 + 600, "operator"}},
         command{retry_instance{"", iid, t0 + 700}}});

  auto h = attempts(iid);
  ASSERT_EQ(h.size(), 3u) << "attempt 4 is pending: not begun";
  EXPECT_EQ(h[0].attempt, 1u);
  EXPECT_EQ(h[0].state, instance_state::failed);
  EXPECT_EQ(h[0].output, "boom\n");
  EXPECT_EQ(h[0].exit_code, 3);
  EXPECT_EQ(h[1].attempt, 2u);
  EXPECT_EQ(h[1].worker_id, "w2");
  EXPECT_EQ(h[1].output, "again\n");
  EXPECT_EQ(h[2].attempt, 3u);
  EXPECT_EQ(h[2].state, instance_state::cancelled);
  EXPECT_EQ(h[2].error, "operator");
  EXPECT_EQ(get_instance(iid).attempt, 4u);
}

TEST_F(attempt_history_test, a_run_cancelled_while_waiting_to_retry_keeps_how_its_attempt_ended) {
  // Attempt 1 fails and waits to be retried (its record written), then is
  // cancelled and retried by hand, all in one batch: the record of attempt 1
  // says failed, not cancelled (the cancel ended no attempt).
  const auto iid = retried_instance(3);
  start(iid, "w1", t0 + 10);
  apply({command{ending(iid, "w1", 1, instance_state::failed, t0 + 20, "exit status 1")},
         command{cancel{"", iid, t0 + 30, "operator"}},
         command{retry_instance{"", iid, t0 + 40}}});
  auto x = get_instance(iid);
  EXPECT_EQ(x.state, instance_state::pending);
  EXPECT_EQ(x.attempt, 2u);
  auto h = attempts(iid);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].state, instance_state::failed);
  EXPECT_EQ(h[0].error, "exit status 1");
}

TEST_F(attempt_history_test, attempts_are_tenant_scoped_like_the_instance) {
  const auto iid = retried_instance(3, "acme");
  start(iid, "w1", t0 + 10);
  end(iid, "w1", 1, instance_state::success, t0 + 20);
  auto foreign = sm_->list_attempts("globex", iid);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(code_of(foreign.error()), errc::not_found);
  EXPECT_EQ(attempts(iid, "acme").size(), 1u);
  auto bad = sm_->list_attempts("", "not-an-id");
  ASSERT_FALSE(bad);
  EXPECT_EQ(code_of(bad.error()), errc::invalid_argument);
}

TEST_F(attempt_history_test, history_is_the_same_on_every_replica_after_replay_and_reopen) {
  // The log of a run that fails, is lost with its worker, then succeeds.
  auto t = make_task("replicated");
  t.retry.kind = retry_kind::exponential;
  t.retry.jitter = true;
  t.retry.max_attempts = 5;
  std::vector<log_entry> log;
  auto add = [&](command c) { log.push_back(log_entry{log.size() + 1, 1, std::move(c)}); };
  add(create_task{t});
  add(fire_of({{1, t0, "tr"}}));
  const auto iid = make_instance_id(1, t0, 0);
  auto result = [&](std::string worker, uint32_t attempt, instance_state s, unix_ms at,
                    std::string error) {
    auto r = report(iid, s, at);
    r.worker_id = std::move(worker);
    r.attempt = attempt;
    r.error = std::move(error);
    r.output = "attempt " + std::to_string(attempt);
    return report_results{1, at, {r}};
  };
  add(dispatch{1, t0 + 1, {{iid, "w1"}}});
  add(result("w1", 1, instance_state::failed, t0 + 100, "exit status 1"));
  add(retry{1, t0 + 5000, {iid}});
  add(dispatch{1, t0 + 5001, {{iid, "w2"}}});
  add(result("w2", 2, instance_state::failed, t0 + 6000, "worker_lost: worker w2 restarted"));
  add(retry{1, t0 + 20000, {iid}});
  add(dispatch{1, t0 + 20001, {{iid, "w1"}}});
  add(result("w1", 3, instance_state::success, t0 + 21000, ""));

  // Replica A applies the log in one batch, then sees it all again (a replay).
  apply_entries(log);
  auto a = attempts(iid);
  ASSERT_EQ(a.size(), 3u);
  apply_entries(log);
  EXPECT_EQ(attempts(iid), a) << "a replay adds nothing";
  reopen();
  EXPECT_EQ(attempts(iid), a) << "durable";

  // Replica B applies the same log one entry at a time.
  auto dir_b = make_test_dir("aisched-sm-b-");
  ASSERT_FALSE(dir_b.empty());
  {
    auto db_b = rocks::open(dir_b.string());
    ASSERT_TRUE(db_b);
    auto sm_b = state_machine::open(**db_b);
    ASSERT_TRUE(sm_b);
    for (auto& e : log) ASSERT_TRUE((*sm_b)->apply({e}));
    auto b = (*sm_b)->list_attempts("", iid);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->items, a) << "every replica holds the same history";
  }
  std::error_code ec;
  fs::remove_all(dir_b, ec);
}

}  // namespace
}  // namespace aisched::storage
