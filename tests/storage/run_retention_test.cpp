// Run-history retention in the state machine, on a real RocksDB: the rule
// (storage/run_retention: which finished runs a policy lets go), the sweep
// that finds them (a task's oldest as a span), and prune_history (and
// prune_runs of older logs), which removes each run with its state-index
// entry, attempt history and failure analysis, lowers the task's count and
// the state counts, and leaves a mark so a read of the run answers `gone`
// (to its own tenant only). Runs not finished are never removed, also when a
// command names them.
#include "storage/run_retention.hpp"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include "storage/keys.hpp"
#include "storage/snapshot.hpp"
#include "storage/state_machine_fixture.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
using namespace testing_support;

constexpr unix_ms hour = 3'600'000;

class retention_test : public state_machine_test {
 protected:
  /// Fires `id` at `slot`, dispatches it and reports `s` at `ended`.
  std::string finished_run(uint64_t id, unix_ms slot, unix_ms ended,
                           instance_state s = instance_state::success) {
    must_apply(fire_of({{id, slot, "tr"}}, slot));
    auto iid = make_instance_id(id, slot, 0);
    must_apply(dispatch{1, slot, {{iid, "w1"}}});
    auto r = report(iid, s, ended - 1);
    must_apply(report_results{1, ended, {r}});
    return iid;
  }

  /// Like finished_run, after a first attempt that failed and was retried (so
  /// the run has an attempt record of its own: the last attempt is its
  /// instance's, storage/attempt_history.hpp). The task must allow 2 attempts.
  std::string retried_run(uint64_t id, unix_ms slot, unix_ms ended) {
    must_apply(fire_of({{id, slot, "tr"}}, slot));
    auto iid = make_instance_id(id, slot, 0);
    must_apply(dispatch{1, slot, {{iid, "w1"}}});
    must_apply(report_results{1, slot + 2, {report(iid, instance_state::failed, slot + 1)}});
    EXPECT_EQ(get_instance(iid).state, instance_state::retry_waiting);
    must_apply(retry{1, slot + 3, {iid}});
    must_apply(dispatch{1, slot + 4, {{iid, "w1"}}});
    auto r = report(iid, instance_state::success, ended - 1);
    r.attempt = 2;
    must_apply(report_results{1, ended, {r}});
    return iid;
  }

  /// A second database holding a copy of this one's state (as a snapshot
  /// install leaves it). The fixture's helpers read sm_ and db_: swap() puts
  /// the copy in their place, and swaps back when called again; the copy is
  /// swapped out and removed when it goes.
  class state_copy {
   public:
    state_copy(retention_test& t, size_t chunk_bytes) : t_(t) {
      dir_ = make_test_dir("aisched-sm-copy-");
      EXPECT_FALSE(dir_.empty());
      open_at(dir_, db_, sm_);
      EXPECT_TRUE(sm_);
      if (!sm_) return;
      EXPECT_FALSE(copy_state(*t_.db_, *db_, chunk_bytes));
      EXPECT_FALSE(sm_->reload());
    }
    state_copy(const state_copy&) = delete;
    state_copy& operator=(const state_copy&) = delete;
    ~state_copy() {
      if (swapped_) swap();
      sm_.reset();
      db_.reset();
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
    bool ok() const { return sm_ != nullptr; }
    void swap() {
      std::swap(t_.db_, db_);
      std::swap(t_.sm_, sm_);
      swapped_ = !swapped_;
    }

   private:
    retention_test& t_;
    fs::path dir_;
    std::unique_ptr<rocks> db_;
    std::unique_ptr<state_machine> sm_;
    bool swapped_ = false;
  };

  /// What a sweep at `now` lets go, as the command the leader proposes.
  prune_history sweep(unix_ms now, retention_policy defaults = {}) {
    prune_history out{1, {}, {}};
    prune_query q{{}, now, defaults, 500, 1000};
    for (int guard = 0; guard < 100; ++guard) {
      auto page = sm_->scan_prunable(q);
      EXPECT_TRUE(page) << view(page.error()).message;
      if (!page) break;
      out.spans.insert(out.spans.end(), page->spans.begin(), page->spans.end());
      out.instance_ids.insert(out.instance_ids.end(), page->instance_ids.begin(),
                              page->instance_ids.end());
      if (page->done) break;
      q.from = page->next;
    }
    return out;
  }

  /// The runs `c` names, stored now: its spans' (each task's runs from the
  /// span's first through its last), then its ids.
  std::vector<std::string> ids_of(const prune_history& c) {
    std::vector<std::string> out;
    for (auto& s : c.spans) {
      auto last = keys::instance(s.task_id, s.slot, s.shard);
      auto it = db_->iterate(column::instances);
      for (it->Seek(keys::instance(s.task_id, s.from_slot, s.from_shard));
           it->Valid() && it->key().ToString() <= last; it->Next()) {
        auto ref = keys::parse_instance(it->key().ToString());
        if (ref) out.push_back(make_instance_id(ref->task_id, ref->slot, ref->shard));
      }
    }
    out.insert(out.end(), c.instance_ids.begin(), c.instance_ids.end());
    return out;
  }

  errc read_code(const std::string& id, const std::string& tenant = "") {
    auto x = sm_->get_instance(tenant, id);
    return x ? errc::none : code_of(x.error());
  }

  uint64_t runs_of(uint64_t id) {
    auto rt = sm_->get_task_runtime(id);
    EXPECT_TRUE(rt);
    return rt ? rt->runs : 0;
  }
};

TEST(retention_rule, a_task_field_left_at_zero_takes_the_default) {
  auto p = retention::effective({0, 5}, {7 * hour, 1000});
  EXPECT_EQ(p.keep_for, 7 * hour);
  EXPECT_EQ(p.keep_runs, 5u);
  auto c = retention::cut_for(p, 8, 10 * hour);
  EXPECT_EQ(c.excess, 3u);
  EXPECT_EQ(c.ended_before, 3 * hour);
  instance done;
  done.state = instance_state::success;
  done.finished_at = 9 * hour;
  EXPECT_TRUE(c.lets_go(2, done)) << "beyond the newest 5 of 8";
  EXPECT_FALSE(c.lets_go(3, done)) << "among the newest 5, ended within keep_for";
  done.finished_at = 3 * hour - 1;
  EXPECT_TRUE(c.lets_go(7, done)) << "ended before keep_for";
  instance running;
  running.state = instance_state::running;
  EXPECT_FALSE(c.lets_go(0, running)) << "a run not finished never goes";
  EXPECT_FALSE(c.past(2, 0));
  EXPECT_FALSE(c.past(3, 3 * hour - 1)) << "scheduled before the bound: may have ended before it";
  EXPECT_TRUE(c.past(3, 3 * hour));
  auto none = retention::cut_for({0, 0}, 1'000'000, 10 * hour);
  EXPECT_TRUE(none.past(0, std::numeric_limits<unix_ms>::min())) << "no bounds: keep everything";
}

TEST_F(retention_test, keep_runs_removes_the_oldest_finished_runs_and_everything_they_left) {
  auto t = make_task("nightly");
  t.retention.keep_runs = 3;
  t.retry.kind = retry_kind::fixed;
  t.retry.interval = 1;
  t.retry.max_attempts = 2;
  auto id = create(t);
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(retried_run(id, t0 + i * minute, t0 + i * minute + 1000));
  // One analysis stored for a run that will go, one for a run that stays.
  put_ai_records ai;
  ai.records.push_back({ai_column::analyses, keys::analysis("default", ids[0]), "a0", false});
  ai.records.push_back({ai_column::analyses, keys::analysis("default", ids[5]), "a5", false});
  must_apply(ai);
  EXPECT_EQ(runs_of(id), 6u);
  auto success_before = sm_->instance_counts()[static_cast<size_t>(instance_state::success)];

  auto found = sweep(t0 + hour);
  ASSERT_EQ(found.spans.size(), 1u) << "the oldest runs of a task go as one span";
  EXPECT_TRUE(found.instance_ids.empty());
  ASSERT_EQ(ids_of(found), (std::vector<std::string>{ids[0], ids[1], ids[2]}));
  EXPECT_EQ(found.spans[0].runs, 3u);
  auto a = must_apply(found);
  EXPECT_EQ(a.pruned, 3u);

  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(read_code(ids[i]), errc::gone) << ids[i];
    auto at = sm_->list_attempts("", ids[i]);
    ASSERT_FALSE(at);
    EXPECT_EQ(code_of(at.error()), errc::gone);
  }
  for (int i = 3; i < 6; ++i) EXPECT_EQ(read_code(ids[i]), errc::none) << ids[i];
  EXPECT_EQ(page_ids(instance_query{}), (std::vector<std::string>{ids[3], ids[4], ids[5]}));
  instance_query by_state;
  by_state.by_state = true;
  by_state.state = instance_state::success;
  EXPECT_EQ(page_ids(by_state).size(), 3u) << "the state index lost the removed runs too";
  EXPECT_EQ(sm_->instance_counts()[static_cast<size_t>(instance_state::success)],
            success_before - 3);
  EXPECT_EQ(runs_of(id), 3u);
  auto gone_analysis = db_->get(column::ai_analysis, keys::analysis("default", ids[0]));
  ASSERT_TRUE(gone_analysis);
  EXPECT_FALSE(*gone_analysis) << "the failure analysis of a removed run stayed";
  auto kept_analysis = db_->get(column::ai_analysis, keys::analysis("default", ids[5]));
  ASSERT_TRUE(kept_analysis);
  EXPECT_TRUE(*kept_analysis);
  {
    auto first_attempt = db_->iterate(column::attempts);
    first_attempt->Seek(keys::instance(id, t0, 0));
    ASSERT_TRUE(first_attempt->Valid());
    EXPECT_EQ(first_attempt->key().ToString(),
              keys::attempt(keys::instance(id, t0 + 3 * minute, 0), 1))
        << "an attempt record of a removed run stayed";
  }  // (an iterator must not outlive the database: reopen() below)

  EXPECT_TRUE(ids_of(sweep(t0 + hour)).empty()) << "a second sweep finds nothing more";
  EXPECT_EQ(must_apply(found).pruned, 0u) << "a repeated command removes nothing";
  EXPECT_EQ(runs_of(id), 3u);
  EXPECT_EQ(page_ids(instance_query{}), (std::vector<std::string>{ids[3], ids[4], ids[5]}));
  reopen();
  EXPECT_EQ(read_code(ids[1]), errc::gone) << "the mark is durable";
  EXPECT_EQ(runs_of(id), 3u);
}

// A prune writes no tombstone for what a run never had: a run that succeeded
// at its first attempt has no attempt record (its instance holds it), and a
// run without an analysis has none to delete. An analysis written in the
// same batch as the prune (not yet in the database) still goes.
TEST_F(retention_test, a_prune_deletes_only_what_the_run_left_and_sees_its_own_batch) {
  auto t = make_task("plain");
  t.retention.keep_runs = 1;
  auto id = create(t);
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(finished_run(id, t0 + i * minute, t0 + i * minute + 10));
  auto deletes = [&](column c) {
    uint64_t n = 0;
    EXPECT_TRUE(db_->db()->GetIntProperty(db_->cf(c), "rocksdb.num-deletes-active-mem-table", &n));
    return n;
  };
  auto attempts_before = deletes(column::attempts);
  auto analyses_before = deletes(column::ai_analysis);
  EXPECT_EQ(must_apply(prune_runs{1, {ids[0], ids[1]}}).pruned, 2u);
  EXPECT_EQ(read_code(ids[0]), errc::gone);
  EXPECT_EQ(deletes(column::attempts), attempts_before)
      << "a tombstone for an attempt record never written, on every run pruned";
  EXPECT_EQ(deletes(column::ai_analysis), analyses_before)
      << "a tombstone for an analysis never written, on every run pruned";

  // The analysis and the prune in one apply() batch.
  put_ai_records ai;
  ai.records.push_back({ai_column::analyses, keys::analysis("default", ids[2]), "a2", false});
  auto rs = apply({ai, prune_runs{1, {ids[2]}}});
  ASSERT_EQ(rs.size(), 2u);
  ASSERT_TRUE(rs[1]) << view(rs[1].error()).message;
  EXPECT_EQ(rs[1]->pruned, 1u);
  auto left = db_->get(column::ai_analysis, keys::analysis("default", ids[2]));
  ASSERT_TRUE(left);
  EXPECT_FALSE(*left) << "the analysis written in the prune's own batch outlived its run";
  EXPECT_EQ(read_code(ids[3]), errc::none);

  // Named twice, or gone already: each run is removed once and counted once.
  auto runs_before = runs_of(id);
  auto again = finished_run(id, t0 + 10 * minute, t0 + 10 * minute + 10);
  EXPECT_EQ(runs_of(id), runs_before + 1);
  EXPECT_EQ(must_apply(prune_runs{1, {again, ids[0], again}}).pruned, 1u);
  EXPECT_EQ(read_code(again), errc::gone);
  EXPECT_EQ(runs_of(id), runs_before);
}

// A sweep that fills page after page inside one task resumes each page
// after the last run the previous one named: it walks the task once, not
// again over what each page removed (RocksDB keeps a tombstone per removed
// record until compaction; walking them again made a sweep of a busy task
// quadratic, a fifth of a loaded node's CPU).
TEST_F(retention_test, a_sweep_of_many_pages_walks_a_task_once_and_keeps_exactly_keep_runs) {
  auto t = make_task("busy");
  t.retention.keep_runs = 10;
  auto id = create(t);
  std::vector<std::string> ids;
  for (int i = 0; i < 400; ++i) ids.push_back(finished_run(id, t0 + i * 1000, t0 + i * 1000 + 10));

  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  prune_query q{{}, t0 + hour, {}, 25, 1000};
  std::vector<std::string> named;
  int pages = 0;
  for (int guard = 0; guard < 100; ++guard) {
    auto page = sm_->scan_prunable(q);
    ++pages;
    ASSERT_TRUE(page) << view(page.error()).message;
    prune_history c{1, page->spans, page->instance_ids};
    auto in_page = ids_of(c);
    EXPECT_LE(in_page.size(), 25u);
    if (!in_page.empty()) {
      EXPECT_EQ(must_apply(c).pruned, in_page.size());
    }
    named.insert(named.end(), in_page.begin(), in_page.end());
    if (page->done) break;
    q.from = page->next;
  }
  const auto skipped = rocksdb::get_perf_context()->internal_delete_skipped_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);

  EXPECT_GE(pages, 16) << "390 runs to remove, 25 a page";
  ASSERT_EQ(named.size(), 390u);
  EXPECT_EQ(named, std::vector<std::string>(ids.begin(), ids.begin() + 390));
  EXPECT_EQ(runs_of(id), 10u);
  for (int i = 390; i < 400; ++i) EXPECT_EQ(read_code(ids[i]), errc::none) << ids[i];
  // Walking the task again from its start on each page skips ~25 * (0 + 1 +
  // ... + 15) = 3 000 tombstones; resuming skips none of them.
  EXPECT_LT(skipped, 100u) << "the sweep walked again over what its pages removed";
}

// A run a page named that was not removed (retried by hand in between) still
// counts where it stood: resuming never lets go a run among the newest
// keep_runs.
TEST_F(retention_test, a_resumed_page_counts_a_named_run_that_was_not_removed) {
  auto t = make_task("retried");
  t.retention.keep_runs = 3;
  auto id = create(t);
  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i)
    ids.push_back(finished_run(id, t0 + i * minute, t0 + i * minute + 10,
                               i == 1 ? instance_state::failed : instance_state::success));
  prune_query q{{}, t0 + hour, {}, 2, 1000};
  auto first = sm_->scan_prunable(q);
  ASSERT_TRUE(first);
  prune_history c{1, first->spans, first->instance_ids};
  ASSERT_EQ(ids_of(c), (std::vector<std::string>{ids[0], ids[1]}));
  must_apply(retry_instance{"", ids[1], t0 + hour});
  EXPECT_EQ(must_apply(c).pruned, 0u)
      << "a span with a run not finished in it stays whole, for the next sweep";
  EXPECT_EQ(read_code(ids[0]), errc::none);
  // The rest of this sweep resumes after the last run the first page named
  // and removes the three after it (the count holds where the retried run
  // stood), as spans of their own.
  q.from = first->next;
  std::vector<std::string> rest;
  for (int guard = 0; guard < 10; ++guard) {
    auto page = sm_->scan_prunable(q);
    ASSERT_TRUE(page);
    prune_history next{1, page->spans, page->instance_ids};
    auto in_page = ids_of(next);
    if (!in_page.empty()) {
      EXPECT_EQ(must_apply(next).pruned, in_page.size());
    }
    rest.insert(rest.end(), in_page.begin(), in_page.end());
    if (page->done) break;
    q.from = page->next;
  }
  EXPECT_EQ(rest, (std::vector<std::string>{ids[2], ids[3], ids[4]}))
      << "the page after the resume starts at the run after the last one named";
  for (int i = 5; i < 8; ++i) EXPECT_EQ(read_code(ids[i]), errc::none) << ids[i];
  EXPECT_EQ(get_instance(ids[1]).state, instance_state::pending);
  // The next sweep: the oldest run goes; the retried one and the newest three stay.
  auto again = sweep(t0 + hour);
  EXPECT_EQ(ids_of(again), (std::vector<std::string>{ids[0]}));
  EXPECT_EQ(must_apply(again).pruned, 1u);
  EXPECT_EQ(read_code(ids[0]), errc::gone);
  for (int i : {1, 5, 6, 7}) EXPECT_EQ(read_code(ids[i]), errc::none) << ids[i];
}

TEST_F(retention_test, keep_for_removes_runs_that_ended_long_ago_but_never_one_in_flight) {
  auto t = make_task("hourly");
  t.retention.keep_for = hour;
  auto id = create(t);
  auto old_done = finished_run(id, t0, t0 + 1000, instance_state::failed);
  auto old_running = make_instance_id(id, t0 + minute, 0);
  must_apply(fire_of({{id, t0 + minute, "tr"}}, t0 + minute));
  must_apply(dispatch{1, t0 + minute, {{old_running, "w1"}}});
  auto recent = finished_run(id, t0 + 90 * minute, t0 + 90 * minute + 1000);
  // A run scheduled long ago (a backfill) that ended just now is kept.
  auto backfilled = finished_run(id, t0 - 10 * hour, t0 + 100 * minute);

  auto found = ids_of(sweep(t0 + 2 * hour));
  EXPECT_EQ(found, (std::vector<std::string>{old_done}));
  // The leader also names the running run (as a stale sweep might): it stays.
  must_apply(prune_runs{1, {old_done, old_running}});
  EXPECT_EQ(read_code(old_done), errc::gone);
  EXPECT_EQ(read_code(old_running), errc::none);
  EXPECT_EQ(read_code(recent), errc::none);
  EXPECT_EQ(read_code(backfilled), errc::none);
}

TEST_F(retention_test, a_run_retried_by_hand_after_the_sweep_is_not_removed) {
  auto t = make_task("flaky");
  t.retention.keep_runs = 1;
  auto id = create(t);
  auto first = finished_run(id, t0, t0 + 1000, instance_state::failed);
  finished_run(id, t0 + minute, t0 + minute + 1000);
  auto found = sweep(t0 + hour);
  ASSERT_EQ(ids_of(found), (std::vector<std::string>{first}));
  must_apply(retry_instance{"", first, t0 + hour});
  EXPECT_EQ(must_apply(found).pruned, 0u);
  EXPECT_EQ(must_apply(prune_runs{1, {first}}).pruned, 0u);
  EXPECT_EQ(get_instance(first).state, instance_state::pending);
}

TEST_F(retention_test, gone_is_told_only_to_the_runs_own_tenant_and_only_below_the_mark) {
  auto t = make_task("t", "acme");
  t.retention.keep_runs = 1;
  auto id = create(t);
  auto first = finished_run(id, t0, t0 + 1000);
  auto second = finished_run(id, t0 + minute, t0 + minute + 1000);
  must_apply(sweep(t0 + hour));
  EXPECT_EQ(read_code(first, "acme"), errc::gone);
  EXPECT_EQ(read_code(first, "other"), errc::not_found)
      << "another tenant learns nothing of a removed run";
  EXPECT_EQ(read_code(second, "other"), errc::not_found);
  EXPECT_EQ(read_code(make_instance_id(id, t0 + 2 * minute, 0), "acme"), errc::not_found)
      << "a run after the mark was never there";
}

TEST_F(retention_test, defaults_apply_and_a_deleted_tasks_runs_go_by_age_only) {
  auto kept = create(make_task("kept"));
  auto gone = create(make_task("gone"));
  std::vector<std::string> kept_ids, gone_ids;
  for (int i = 0; i < 4; ++i) {
    kept_ids.push_back(finished_run(kept, t0 + i * minute, t0 + i * minute + 1000));
    gone_ids.push_back(finished_run(gone, t0 + i * minute, t0 + i * minute + 1000));
  }
  must_apply(delete_task{"", gone});
  auto found = ids_of(sweep(t0 + 10 * minute, {hour, 2}));
  EXPECT_EQ(found, (std::vector<std::string>{kept_ids[0], kept_ids[1]}))
      << "the deleted task has no count left; its runs are within keep_for";
  auto late = sweep(t0 + 2 * hour, {hour, 2});
  EXPECT_EQ(ids_of(late).size(), 8u) << "beyond keep_for, every finished run goes";
  EXPECT_TRUE(ids_of(sweep(t0 + 2 * hour, {0, 0})).empty()) << "no bounds at all: nothing goes";
  EXPECT_EQ(must_apply(late).pruned, 8u) << "a deleted task's span goes too";
  EXPECT_EQ(read_code(gone_ids[3]), errc::gone);
}

// A member that catches up by snapshot (raft install) holds what the sender
// pruned exactly as the sender does: the removed runs answer `gone`, the kept
// ones read back, the counts agree, and the next sweep and prune, applied on
// both, remove the same runs.
TEST_F(retention_test, a_snapshot_carries_the_pruned_state_and_the_next_prune_agrees) {
  auto t = make_task("t");
  t.retention.keep_runs = 2;
  auto id = create(t);
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(finished_run(id, t0 + i * minute, t0 + i * minute + 1000));
  must_apply(sweep(t0 + hour));

  state_copy copy(*this, 4096);  // small chunks: many of them
  ASSERT_TRUE(copy.ok());
  auto counts = sm_->instance_counts();
  auto listed = page_ids(instance_query{});
  ASSERT_EQ(listed, (std::vector<std::string>{ids[3], ids[4]}));

  copy.swap();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(read_code(ids[i]), errc::gone) << ids[i];
  for (int i = 3; i < 5; ++i) EXPECT_EQ(read_code(ids[i]), errc::none) << ids[i];
  EXPECT_EQ(page_ids(instance_query{}), listed);
  EXPECT_EQ(sm_->instance_counts(), counts);
  EXPECT_EQ(runs_of(id), 2u);
  EXPECT_TRUE(ids_of(sweep(t0 + hour)).empty());

  // One more run on both; each sweep finds the same oldest run, each prune removes it.
  std::vector<std::string> found;
  for (int side = 0; side < 2; ++side) {
    finished_run(id, t0 + 5 * minute, t0 + 5 * minute + 1000);
    auto f = sweep(t0 + hour);
    auto named = ids_of(f);
    EXPECT_EQ(named, (std::vector<std::string>{ids[3]})) << "side " << side;
    EXPECT_EQ(must_apply(f).pruned, 1u) << "side " << side;
    EXPECT_EQ(read_code(ids[3]), errc::gone) << "side " << side;
    found.insert(found.end(), named.begin(), named.end());
    copy.swap();  // the copy, then the original again
  }
  auto copy_counts = sm_->instance_counts();  // sm_ is the copy again here
  copy.swap();
  EXPECT_EQ(sm_->instance_counts(), copy_counts);
}

// A task's oldest runs go as one span: range deletions, not a tombstone per
// run. A span goes only as the leader saw it: with one run more than it
// counted, or one not finished (also when a command earlier in the same
// batch retried it), it stays whole, for the next sweep. It goes alike in a
// batch with other commands and alone (members batch entries differently):
// what earlier commands wrote counts, and later ones find its runs gone.
TEST_F(retention_test, a_span_goes_whole_as_the_leader_saw_it_or_stays) {
  auto t = make_task("spans");
  t.retention.keep_runs = 1;
  auto id = create(t);
  std::vector<std::string> ids;
  for (int i = 0; i < 50; ++i)
    ids.push_back(
        finished_run(id, t0 + i * 1000, t0 + i * 1000 + 10,
                     i == 1 || i == 3 ? instance_state::failed : instance_state::success));
  auto plan = sweep(t0 + hour);
  ASSERT_EQ(plan.spans.size(), 1u);
  EXPECT_EQ(plan.spans[0].runs, 49u);
  EXPECT_TRUE(plan.instance_ids.empty());

  auto off = plan;
  off.spans[0].runs = 48;  // a run came into the span since the leader looked
  EXPECT_EQ(must_apply(off).pruned, 0u);
  EXPECT_EQ(read_code(ids[0]), errc::none);

  auto rs = apply({retry_instance{"", ids[3], t0 + hour}, plan});
  ASSERT_EQ(rs.size(), 2u);
  ASSERT_TRUE(rs[1]) << view(rs[1].error()).message;
  EXPECT_EQ(rs[1]->pruned, 0u) << "the span went with a run its batch wrote";
  EXPECT_EQ(get_instance(ids[3]).state, instance_state::pending);
  EXPECT_EQ(must_apply(plan).pruned, 0u) << "the span went with a run not finished in it";
  EXPECT_EQ(read_code(ids[0]), errc::none);

  // The next sweep: the span ends before the retried run; the runs after it go one by one.
  auto next = sweep(t0 + hour);
  ASSERT_EQ(next.spans.size(), 1u);
  EXPECT_EQ(next.spans[0].runs, 3u);
  EXPECT_EQ(next.instance_ids.size(), 45u);
  auto deletes = [&] {
    uint64_t n = 0;
    EXPECT_TRUE(db_->db()->GetIntProperty(db_->cf(column::instances),
                                          "rocksdb.num-deletes-active-mem-table", &n));
    return n;
  };
  auto deletes_before = deletes();
  auto counts = sm_->instance_counts();
  // Analyses written in the same batch (not in the database yet): the one of
  // a run in the span goes with it, the other stays.
  put_ai_records ai;
  ai.records.push_back({ai_column::analyses, keys::analysis("default", ids[2]), "a2", false});
  ai.records.push_back({ai_column::analyses, keys::analysis("default", ids[49]), "a49", false});
  rs = apply({ai, next, retry_instance{"", ids[1], t0 + hour}});
  ASSERT_EQ(rs.size(), 3u);
  ASSERT_TRUE(rs[1]) << view(rs[1].error()).message;
  EXPECT_EQ(rs[1]->pruned, 48u) << "a span went otherwise in a batch than alone";
  EXPECT_FALSE(rs[2]) << "a retry later in the batch found a run of the span";
  auto a2 = db_->get(column::ai_analysis, keys::analysis("default", ids[2]));
  ASSERT_TRUE(a2);
  EXPECT_FALSE(*a2) << "the analysis of a run of the span stayed";
  auto a49 = db_->get(column::ai_analysis, keys::analysis("default", ids[49]));
  ASSERT_TRUE(a49);
  EXPECT_TRUE(*a49);
  EXPECT_EQ(deletes() - deletes_before, 45u) << "the span wrote a tombstone per run";
  for (int i : {0, 1, 2, 4, 48}) EXPECT_EQ(read_code(ids[i]), errc::gone) << ids[i];
  EXPECT_EQ(get_instance(ids[3]).state, instance_state::pending);
  EXPECT_EQ(read_code(ids[49]), errc::none);
  EXPECT_EQ(page_ids(instance_query{}), (std::vector<std::string>{ids[3], ids[49]}));
  EXPECT_EQ(runs_of(id), 2u);
  auto now = sm_->instance_counts();
  EXPECT_EQ(counts[size_t(instance_state::success)] - now[size_t(instance_state::success)], 47u);
  EXPECT_EQ(counts[size_t(instance_state::failed)] - now[size_t(instance_state::failed)], 1u);
  instance_query failed;
  failed.by_state = true;
  failed.state = instance_state::failed;
  EXPECT_TRUE(page_ids(failed).empty()) << "the span left an index entry";
  reopen();
  EXPECT_EQ(read_code(ids[2]), errc::gone);
  EXPECT_EQ(runs_of(id), 2u);
}

// Members batch the same entries differently (the leader applies what
// committed in its round, a follower what it received in its own): a batch of
// prunes and of the writes they meet leaves the state that its entries leave
// applied one at a time.
TEST_F(retention_test, a_batch_of_prunes_leaves_what_its_entries_leave_one_at_a_time) {
  auto t = make_task("batched");
  t.retention.keep_runs = 2;
  auto id = create(t);
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i)
    ids.push_back(finished_run(id, t0 + i * minute, t0 + i * minute + 10,
                               i == 5 ? instance_state::failed : instance_state::success));
  auto plan = sweep(t0 + hour);
  ASSERT_EQ(plan.spans.size(), 1u);
  ASSERT_EQ(plan.spans[0].runs, 8u);
  // What a later sweep would name once the fifth run is retried: a span to
  // the fourth, and the two after the retried run by id.
  prune_history later{1, {{id, t0, 0, t0 + 4 * minute, 0, 5}}, {ids[6], ids[7]}};
  put_ai_records ai;
  for (int i : {1, 7, 9})
    ai.records.push_back({ai_column::analyses, keys::analysis("default", ids[i]), "a", false});
  std::vector<command> entries{ai, retry_instance{"", ids[5], t0 + hour}, plan, later,
                               prune_runs{1, {ids[8]}}};

  state_copy copy(*this, 1 << 20);
  ASSERT_TRUE(copy.ok());

  auto together = apply(entries);  // one batch, here
  copy.swap();
  std::vector<caf::expected<applied>> alone;  // one batch each, on the copy
  for (auto& e : entries) alone.push_back(apply({e}).at(0));
  auto dump = [&] {
    std::vector<std::pair<std::string, std::string>> out;
    for (auto c : {column::instances, column::instances_by_state, column::attempts,
                   column::ai_analysis, column::task_state, column::meta}) {
      auto it = db_->iterate(c);
      for (it->SeekToFirst(); it->Valid(); it->Next())
        out.emplace_back(std::to_string(int(c)) + ":" + it->key().ToString(),
                         it->value().ToString());
    }
    return out;
  };
  auto alone_state = dump();
  auto alone_counts = sm_->instance_counts();
  copy.swap();
  auto together_state = dump();
  ASSERT_EQ(together.size(), alone.size());
  for (size_t i = 0; i < together.size(); ++i) {
    ASSERT_EQ(bool(together[i]), bool(alone[i])) << "entry " << i;
    if (together[i]) {
      EXPECT_EQ(together[i]->pruned, alone[i]->pruned) << "entry " << i;
    }
  }
  EXPECT_EQ(together[2]->pruned, 0u) << "the span met the retried run";
  EXPECT_EQ(together[3]->pruned, 7u);
  EXPECT_EQ(together[4]->pruned, 1u);
  EXPECT_EQ(together_state, alone_state) << "the batch left another state";
  EXPECT_EQ(sm_->instance_counts(), alone_counts);
  for (int i : {0, 1, 4, 6, 7, 8}) EXPECT_EQ(read_code(ids[i]), errc::gone) << ids[i];
  EXPECT_EQ(get_instance(ids[5]).state, instance_state::pending);
}

TEST_F(retention_test, a_prune_of_a_deposed_leaders_term_changes_nothing) {
  auto t = make_task("t");
  t.retention.keep_runs = 1;
  auto id = create(t);
  auto first = finished_run(id, t0, t0 + 1000);
  finished_run(id, t0 + minute, t0 + minute + 1000);
  auto index = sm_->applied_index();
  auto rs = apply_entries({log_entry{index + 1, 2, command{prune_runs{1, {first}}}},
                           log_entry{index + 2, 2, command{sweep(t0 + hour)}}});
  ASSERT_EQ(rs.size(), 2u);
  for (auto& r : rs) {
    ASSERT_FALSE(r);
    EXPECT_EQ(code_of(r.error()), errc::not_leader);
  }
  EXPECT_EQ(read_code(first), errc::none);
}

}  // namespace
}  // namespace aisched::storage
