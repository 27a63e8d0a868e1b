// Tests for storage::state_machine against a real RocksDB in a fresh temporary
// directory per test: task commands (ids, versions, tenants), durability across a
// reopen, idempotent replay, fires with deterministic instance ids, the instance
// state machine, and instance counts. Paged reads are in state_queries_test.cpp,
// idempotency keys in state_machine_idempotency_test.cpp.
#include "proto/codec.hpp"
#include "storage/state_machine_fixture.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
using namespace testing_support;
// -- tasks ---------------------------------------------------------------------

TEST_F(state_machine_test, create_task_assigns_sequential_ids_and_version_one) {
  auto rs = apply({create_task{make_task("a")}, create_task{make_task("b")},
                   create_task{make_task("c")}});
  ASSERT_EQ(rs.size(), 3u);
  for (size_t i = 0; i < rs.size(); ++i) {
    ASSERT_TRUE(rs[i]);
    EXPECT_EQ(rs[i]->index, i + 1);
    ASSERT_EQ(rs[i]->tasks.size(), 1u);
    EXPECT_EQ(rs[i]->tasks[0].id, i + 1);
    EXPECT_EQ(rs[i]->tasks[0].version, 1u);
  }
  EXPECT_EQ(sm_->applied_index(), 3u);
  auto b = get(2);
  EXPECT_EQ(b.name, "b");
  EXPECT_EQ(b.version, 1u);
  EXPECT_EQ(b.created_at, t0);
  EXPECT_EQ(b, rs[1]->tasks[0]) << "the stored task is the one returned";
  EXPECT_EQ(create(make_task("d")), 4u) << "ids continue across batches";

  auto preset = make_task("e");
  preset.id = 77;
  preset.version = 9;
  auto e = must_apply(create_task{preset});
  ASSERT_EQ(e.tasks.size(), 1u);
  EXPECT_EQ(e.tasks[0].id, 5u) << "the proposer's id is ignored";
  EXPECT_EQ(e.tasks[0].version, 1u);
  EXPECT_FALSE(sm_->get_task("", 77));
}

TEST_F(state_machine_test, task_list_filters_by_name_labels_and_paused) {
  auto a = make_task("db-backup");
  a.labels = {{"zone", "eu"}, {"gpu", "true"}};
  auto b = make_task("db-restore");
  b.labels = {{"zone", "us"}};
  auto c = make_task("report");
  c.labels = {{"zone", "eu"}};
  auto ida = create(a), idb = create(b), idc = create(c);
  must_apply(set_paused{"default", idc, true, t0});
  auto ids = [&](task_query q) {
    q.tenant = "default";
    std::vector<uint64_t> out;
    auto page = sm_->list_tasks(q);
    EXPECT_TRUE(page);
    if (page)
      for (auto& t : page->items) out.push_back(t.id);
    return out;
  };
  task_query by_name;
  by_name.name_contains = "db-";
  EXPECT_EQ(ids(by_name), (std::vector<uint64_t>{ida, idb}));
  task_query by_labels;
  by_labels.labels = {{"zone", "eu"}};
  EXPECT_EQ(ids(by_labels), (std::vector<uint64_t>{ida, idc}));
  by_labels.labels["gpu"] = "true";
  EXPECT_EQ(ids(by_labels), (std::vector<uint64_t>{ida}));
  task_query paused;
  paused.paused = task_query::paused_filter::paused;
  EXPECT_EQ(ids(paused), (std::vector<uint64_t>{idc}));
  paused.paused = task_query::paused_filter::active;
  paused.name_contains = "re";
  EXPECT_EQ(ids(paused), (std::vector<uint64_t>{idb})) << "filters combine";
}

TEST_F(state_machine_test, update_with_matching_version_bumps_it_and_keeps_identity) {
  auto id = create(make_task("old", "acme"));
  auto t = make_task("new", "acme");
  t.id = id;
  t.created_at = t0 + 999;  // not the proposer's to change
  t.updated_at = t0 + minute;
  auto a = must_apply(update_task{t, 1});
  ASSERT_EQ(a.tasks.size(), 1u);
  EXPECT_EQ(a.tasks[0].version, 2u);
  auto stored = get(id);
  EXPECT_EQ(stored.name, "new");
  EXPECT_EQ(stored.version, 2u);
  EXPECT_EQ(stored.tenant, "acme");
  EXPECT_EQ(stored.created_at, t0);
  EXPECT_EQ(stored.updated_at, t0 + minute);

  t.name = "unchecked";
  must_apply(update_task{t, 0});
  EXPECT_EQ(get(id).version, 3u) << "expected_version 0 skips the check";
}

TEST_F(state_machine_test, update_with_stale_version_is_a_conflict_and_changes_nothing) {
  auto id = create(make_task("v1"));
  auto t = make_task("v2");
  t.id = id;
  must_apply(update_task{t, 1});
  const auto before = get(id);

  t.name = "lost update";
  auto r = apply_one(update_task{t, 1});
  ASSERT_FALSE(r);
  EXPECT_EQ(code_of(r.error()), errc::version_conflict);
  EXPECT_EQ(get(id), before);
  EXPECT_EQ(sm_->applied_index(), 3u) << "a rejected command still counts as applied";

  auto d = apply_one(delete_task{"", id, 1});
  ASSERT_FALSE(d);
  EXPECT_EQ(code_of(d.error()), errc::version_conflict);
  EXPECT_EQ(get(id), before);
}

TEST_F(state_machine_test, commands_on_an_unknown_task_are_not_found) {
  create(make_task("exists"));
  auto t = make_task("ghost");
  t.id = 99;
  std::vector<command> cmds{update_task{t, 0}, delete_task{"", 99, 0},
                            set_paused{"", 99, true, t0}};
  auto rs = apply(cmds);
  ASSERT_EQ(rs.size(), 3u);
  for (auto& r : rs) {
    ASSERT_FALSE(r);
    EXPECT_EQ(code_of(r.error()), errc::not_found);
    EXPECT_EQ(view(r.error()).field, "id");
  }
  EXPECT_EQ(all_tasks().size(), 1u);
  auto g = sm_->get_task("", 99);
  ASSERT_FALSE(g);
  EXPECT_EQ(code_of(g.error()), errc::not_found);
}

TEST_F(state_machine_test, tasks_are_isolated_by_tenant) {
  auto id = create(make_task("mine", "acme"));
  create(make_task("theirs", "globex"));

  auto other = sm_->get_task("globex", id);
  ASSERT_FALSE(other);
  EXPECT_EQ(code_of(other.error()), errc::not_found);
  EXPECT_EQ(get(id, "acme").name, "mine");
  EXPECT_EQ(get(id, "").name, "mine") << "tenant \"\" reads across tenants";

  auto t = make_task("hijack", "globex");
  t.id = id;
  for (auto r : apply({update_task{t, 0}, delete_task{"globex", id, 0},
                       set_paused{"globex", id, true, t0}})) {
    ASSERT_FALSE(r);
    EXPECT_EQ(code_of(r.error()), errc::not_found);
  }
  auto kept = get(id);
  EXPECT_EQ(kept.name, "mine");
  EXPECT_FALSE(kept.paused);
  EXPECT_EQ(kept.version, 1u);

  auto page = sm_->list_tasks(task_query{"acme", 0, 50});
  ASSERT_TRUE(page);
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].id, id);
}

TEST_F(state_machine_test, set_paused_toggles_and_bumps_version_only_on_change) {
  auto id = create(make_task("p"));
  must_apply(set_paused{"default", id, true, t0 + minute});
  auto paused = get(id);
  EXPECT_TRUE(paused.paused);
  EXPECT_EQ(paused.version, 2u);
  EXPECT_EQ(paused.updated_at, t0 + minute);
  must_apply(set_paused{"", id, true, t0 + 2 * minute});
  EXPECT_EQ(get(id), paused) << "pausing a paused task changes nothing";
  must_apply(set_paused{"", id, false, t0 + 3 * minute});
  EXPECT_FALSE(get(id).paused);
  EXPECT_EQ(get(id).version, 3u);
}

TEST_F(state_machine_test, a_field_of_a_later_build_is_kept_through_each_rewrite_of_the_task) {
  // A task as a later build writes it: field 99, which this build does not know.
  auto bytes = encode(make_task("later"));
  std::string field_99;
  wire::put_tag(field_99, 99, wire::length);
  wire::put_varint(field_99, 5);
  field_99 += "hello";
  auto later = decode<task>(bytes + field_99);
  ASSERT_TRUE(later) << to_string(later.error());
  EXPECT_EQ(later->unknown.bytes, field_99);
  auto id = create(*later);
  // Stored, rewritten by a command of this build, read back: still there.
  must_apply(set_paused{"default", id, true, t0 + minute});
  auto got = get(id);
  EXPECT_TRUE(got.paused);
  EXPECT_EQ(got.unknown.bytes, field_99);
  auto again = encode(got);
  EXPECT_EQ(again.substr(again.size() - field_99.size()), field_99);
}

TEST_F(state_machine_test, delete_removes_the_task_but_keeps_its_instances_readable) {
  auto id = create(make_task("gone"));
  must_apply(fire_of({{id, t0, "tr"}}));
  must_apply(delete_task{"default", id, 1});
  auto g = sm_->get_task("", id);
  ASSERT_FALSE(g);
  EXPECT_EQ(code_of(g.error()), errc::not_found);
  EXPECT_TRUE(all_tasks().empty());
  EXPECT_EQ(get_instance(make_instance_id(id, t0, 0)).task_id, id);
}

// -- durability and replay --------------------------------------------------------

TEST_F(state_machine_test, reopen_restores_tasks_applied_index_and_next_task_id) {
  create(make_task("a"));
  auto b = create(make_task("b"));
  create(make_task("c"));
  must_apply(delete_task{"", 3, 0});  // the highest id is gone: it must still not be reused
  auto t = make_task("b2");
  t.id = b;
  must_apply(update_task{t, 1});
  const auto before = all_tasks();
  ASSERT_EQ(before.size(), 2u);

  reopen();
  EXPECT_EQ(sm_->applied_index(), 5u);
  EXPECT_EQ(all_tasks(), before);
  EXPECT_EQ(get(b).version, 2u);
  EXPECT_EQ(create(make_task("d")), 4u);
  EXPECT_EQ(sm_->applied_index(), 6u);
}

TEST_F(state_machine_test, replaying_applied_entries_is_a_no_op) {
  std::vector<log_entry> entries;
  for (uint64_t i = 1; i <= 3; ++i)
    entries.push_back(log_entry{i, 1, create_task{make_task("t" + std::to_string(i))}});
  apply_entries(entries);
  ASSERT_EQ(sm_->applied_index(), 3u);

  auto replay = apply_entries(entries);
  ASSERT_EQ(replay.size(), 3u);
  for (auto& r : replay) {
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->tasks.empty());
  }
  EXPECT_EQ(all_tasks().size(), 3u);
  EXPECT_EQ(sm_->applied_index(), 3u);

  // A batch that overlaps: 2 and 3 are skipped, 4 applies.
  auto overlap = entries;
  overlap.erase(overlap.begin());
  overlap.push_back(log_entry{4, 1, create_task{make_task("t4")}});
  auto rs = apply_entries(overlap);
  ASSERT_EQ(rs.size(), 3u);
  ASSERT_TRUE(rs[2]);
  ASSERT_EQ(rs[2]->tasks.size(), 1u);
  EXPECT_EQ(rs[2]->tasks[0].id, 4u) << "replayed creates did not advance the id counter";
  EXPECT_EQ(all_tasks().size(), 4u);

  reopen();
  apply_entries(entries);
  EXPECT_EQ(all_tasks().size(), 4u) << "replay after a restart is a no-op too";
  EXPECT_EQ(create(make_task("t5")), 5u);
}

TEST_F(state_machine_test, gap_in_indexes_fails_the_whole_batch) {
  create(make_task("a"));
  auto gap = sm_->apply({log_entry{3, 1, create_task{make_task("skipped 2")}}});
  EXPECT_FALSE(gap);
  EXPECT_EQ(sm_->applied_index(), 1u);

  auto partial = sm_->apply({log_entry{2, 1, create_task{make_task("b")}},
                             log_entry{4, 1, create_task{make_task("c")}}});
  EXPECT_FALSE(partial);
  EXPECT_EQ(sm_->applied_index(), 1u) << "nothing of a failed batch is applied";
  EXPECT_EQ(all_tasks().size(), 1u);
  EXPECT_EQ(create(make_task("b")), 2u);
}

// -- fire ------------------------------------------------------------------------

TEST_F(state_machine_test, fire_creates_one_pending_instance_per_shard) {
  auto id = create(make_task("sharded", "acme", 3));
  auto a = must_apply(fire_of({{id, t0, "trace-1"}}, t0 + 5));
  ASSERT_EQ(a.instances.size(), 3u);
  for (uint32_t shard = 0; shard < 3; ++shard) {
    SCOPED_TRACE(shard);
    const auto expected_id = std::to_string(id) + "-" + std::to_string(t0) + "-" +
                             std::to_string(shard);
    EXPECT_EQ(a.instances[shard].id, expected_id);
    auto x = get_instance(expected_id);
    EXPECT_EQ(x, a.instances[shard]);
    EXPECT_EQ(x.tenant, "acme");
    EXPECT_EQ(x.task_id, id);
    EXPECT_EQ(x.slot, t0);
    EXPECT_EQ(x.shard, shard);
    EXPECT_EQ(x.shards, 3u);
    EXPECT_EQ(x.attempt, 1u);
    EXPECT_EQ(x.state, instance_state::pending);
    EXPECT_EQ(x.created_at, t0 + 5);
    EXPECT_EQ(x.trace_id, "trace-1");
    EXPECT_EQ(x.idempotency_key, expected_id);
  }
  auto rt = sm_->get_task_runtime(id);
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->task_id, id);
  EXPECT_EQ(rt->last_slot, t0);
  EXPECT_EQ(rt->last_instance_id, make_instance_id(id, t0, 0));
  EXPECT_EQ(rt->last_state, instance_state::pending);
}

TEST_F(state_machine_test, firing_the_same_slot_again_creates_nothing) {
  auto id = create(make_task("once", "default", 2));
  // Same slot twice in one command and again in a second entry of the same batch.
  auto rs = apply({fire_of({{id, t0, "a"}, {id, t0, "b"}}), fire_of({{id, t0, "c"}})});
  ASSERT_EQ(rs.size(), 2u);
  ASSERT_TRUE(rs[0]);
  ASSERT_TRUE(rs[1]);
  EXPECT_EQ(rs[0]->instances.size(), 2u);
  EXPECT_TRUE(rs[1]->instances.empty());

  // A run has moved on; a later repeat of the slot must not reset it.
  const auto first = make_instance_id(id, t0, 0);
  must_apply(dispatch{1, t0 + 1, {{first, "w1"}}});
  auto again = must_apply(fire_of({{id, t0, "d"}}));
  EXPECT_TRUE(again.instances.empty());
  auto x = get_instance(first);
  EXPECT_EQ(x.state, instance_state::dispatched);
  EXPECT_EQ(x.trace_id, "a");
  EXPECT_EQ(page_ids(instance_query{"", id, false, {}, "", 100}).size(), 2u);
}

TEST_F(state_machine_test, slots_fired_out_of_order_are_each_created_once) {
  // A fire of a slot after the task's last one creates without looking its
  // runs up; one at or before it (a backfill, a repeat) looks them up. Fired
  // in every order, in one command and apart, each slot's runs exist once.
  auto id = create(make_task("backfilled", "default", 2));
  const unix_ms late = t0 + 10 * minute, early = t0, middle = t0 + 5 * minute;
  EXPECT_EQ(must_apply(fire_of({{id, late, "late"}})).instances.size(), 2u);
  EXPECT_EQ(must_apply(fire_of({{id, early, "early"}, {id, late, "again"}})).instances.size(), 2u);
  auto rs = apply({fire_of({{id, middle, "m"}, {id, early, "e2"}}), fire_of({{id, middle, "m2"}})});
  ASSERT_TRUE(rs[0]);
  ASSERT_TRUE(rs[1]);
  EXPECT_EQ(rs[0]->instances.size(), 2u);
  EXPECT_TRUE(rs[1]->instances.empty());
  EXPECT_TRUE(must_apply(fire_of({{id, late, "x"}, {id, early, "y"}})).instances.empty());
  EXPECT_EQ(get_instance(make_instance_id(id, late, 1)).trace_id, "late");
  EXPECT_EQ(page_ids(instance_query{"", id, false, {}, "", 100}).size(), 6u);
  auto rt = sm_->get_task_runtime(id);
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->runs, 6u);
  EXPECT_EQ(rt->last_slot, late);
}

TEST_F(state_machine_test, fire_for_a_deleted_task_is_a_no_op) {
  auto id = create(make_task("doomed"));
  auto keep = create(make_task("kept"));
  must_apply(delete_task{"", id, 0});
  auto a = must_apply(fire_of({{id, t0, "x"}, {keep, t0, "y"}}));
  ASSERT_EQ(a.instances.size(), 1u);
  EXPECT_EQ(a.instances[0].task_id, keep);
  auto missing = sm_->get_instance("", make_instance_id(id, t0, 0));
  ASSERT_FALSE(missing);
  EXPECT_EQ(code_of(missing.error()), errc::not_found);
  auto rt = sm_->get_task_runtime(id);
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->last_slot, 0);
  EXPECT_TRUE(rt->last_instance_id.empty());
}

TEST_F(state_machine_test, task_runtime_follows_the_newest_slot_and_its_state) {
  auto id = create(make_task("rt"));
  must_apply(fire_of({{id, t0 + minute, "new"}}));
  must_apply(fire_of({{id, t0, "late older slot"}}));
  auto rt = sm_->get_task_runtime(id);
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->last_slot, t0 + minute) << "an older slot does not move last_slot back";
  EXPECT_EQ(rt->last_instance_id, make_instance_id(id, t0 + minute, 0));

  must_apply(dispatch{1, t0, {{make_instance_id(id, t0 + minute, 0), "w1"}}});
  must_apply(dispatch{1, t0, {{make_instance_id(id, t0, 0), "w1"}}});
  must_apply(report_results{1, t0, {report(make_instance_id(id, t0, 0), instance_state::failed)}});
  rt = sm_->get_task_runtime(id);
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->last_state, instance_state::dispatched)
      << "only the newest slot's instance sets last_state";
}

// -- instance transitions ---------------------------------------------------------

TEST_F(state_machine_test, instance_goes_dispatched_running_success) {
  auto id = create(make_task("run"));
  must_apply(fire_of({{id, t0, "tr"}}));
  const auto iid = make_instance_id(id, t0, 0);

  auto d = must_apply(dispatch{1, t0 + 10, {{iid, "w7"}}});
  ASSERT_EQ(d.instances.size(), 1u);
  auto x = get_instance(iid);
  EXPECT_EQ(x.state, instance_state::dispatched);
  EXPECT_EQ(x.worker_id, "w7");
  EXPECT_EQ(x.dispatched_at, t0 + 10);

  run_result running;
  running.instance_id = iid;
  running.state = instance_state::running;
  running.started_at = t0 + 20;
  must_apply(report_results{1, t0 + 21, {running}});
  x = get_instance(iid);
  EXPECT_EQ(x.state, instance_state::running);
  EXPECT_EQ(x.started_at, t0 + 20);
  EXPECT_EQ(x.worker_id, "w7") << "an empty worker_id in a report keeps the assigned one";

  run_result ok;
  ok.instance_id = iid;
  ok.worker_id = "w7";
  ok.state = instance_state::success;
  ok.exit_code = 0;
  ok.output = "done\n";
  ok.finished_at = t0 + 30;
  must_apply(report_results{1, t0 + 31, {ok}});
  x = get_instance(iid);
  EXPECT_EQ(x.state, instance_state::success);
  EXPECT_EQ(x.output, "done\n");
  EXPECT_EQ(x.started_at, t0 + 20);
  EXPECT_EQ(x.finished_at, t0 + 30);

  auto rt = sm_->get_task_runtime(id);
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->last_state, instance_state::success);
}

TEST_F(state_machine_test, report_for_a_finished_run_with_the_same_state_is_acknowledged) {
  const auto iid = running_instance();
  run_result ok = report(iid, instance_state::success, t0 + 5);
  ok.output = "first";
  must_apply(report_results{1, t0 + 6, {ok}});
  const auto before = get_instance(iid);

  ok.output = "second delivery";
  ok.exit_code = 3;
  ok.finished_at = t0 + 99;
  auto dup = apply_one(report_results{1, t0 + 100, {ok}});
  ASSERT_TRUE(dup) << view(dup.error()).message;
  ASSERT_EQ(dup->instances.size(), 1u);
  EXPECT_EQ(dup->instances[0], before);
  EXPECT_EQ(get_instance(iid), before);
}

TEST_F(state_machine_test, illegal_transitions_are_rejected_and_change_nothing) {
  const auto iid = running_instance();
  must_apply(report_results{1, t0 + 5, {report(iid, instance_state::success, t0 + 5)}});
  const auto done = get_instance(iid);

  auto back_to_running = apply_one(report_results{1, t0 + 6, {report(iid, instance_state::running)}});
  ASSERT_FALSE(back_to_running);
  EXPECT_EQ(code_of(back_to_running.error()), errc::illegal_transition);

  auto cancel_done = apply_one(cancel{"", iid, t0 + 7, "too late"});
  ASSERT_FALSE(cancel_done);
  EXPECT_EQ(code_of(cancel_done.error()), errc::illegal_transition);

  auto failed_after_success =
      apply_one(report_results{1, t0 + 8, {report(iid, instance_state::failed)}});
  ASSERT_FALSE(failed_after_success);
  EXPECT_EQ(code_of(failed_after_success.error()), errc::illegal_transition);

  auto redispatch = apply_one(dispatch{1, t0 + 9, {{iid, "w2"}}});
  ASSERT_FALSE(redispatch);
  EXPECT_EQ(code_of(redispatch.error()), errc::illegal_transition);

  EXPECT_EQ(get_instance(iid), done);
  auto success = page_ids(instance_query{"", 0, true, instance_state::success, "", 10});
  EXPECT_EQ(success, std::vector<std::string>{iid});
}

TEST_F(state_machine_test, pending_instance_cannot_skip_dispatch) {
  auto id = create(make_task("p"));
  must_apply(fire_of({{id, t0, "tr"}}));
  const auto iid = make_instance_id(id, t0, 0);
  for (auto s : {instance_state::running, instance_state::success}) {
    SCOPED_TRACE(name_of(s));
    auto r = apply_one(report_results{1, t0, {report(iid, s)}});
    ASSERT_FALSE(r);
    EXPECT_EQ(code_of(r.error()), errc::illegal_transition);
  }
  auto bad_state = apply_one(report_results{1, t0, {report(iid, instance_state::pending)}});
  ASSERT_FALSE(bad_state);
  EXPECT_EQ(code_of(bad_state.error()), errc::invalid_argument) << "a report cannot set pending";
  EXPECT_EQ(get_instance(iid).state, instance_state::pending);
}

TEST_F(state_machine_test, retry_moves_retry_waiting_back_to_pending_with_next_attempt) {
  const auto iid = running_instance();
  auto waiting = report(iid, instance_state::retry_waiting, t0 + 5);
  waiting.exit_code = 1;
  waiting.next_attempt_at = t0 + minute;
  must_apply(report_results{1, t0 + 6, {waiting}});
  auto x = get_instance(iid);
  EXPECT_EQ(x.state, instance_state::retry_waiting);
  EXPECT_EQ(x.next_attempt_at, t0 + minute);
  EXPECT_EQ(x.attempt, 1u);

  must_apply(retry{1, t0 + minute, {iid}});
  x = get_instance(iid);
  EXPECT_EQ(x.state, instance_state::pending);
  EXPECT_EQ(x.attempt, 2u);
  EXPECT_TRUE(x.worker_id.empty());
  EXPECT_EQ(x.next_attempt_at, 0);
  EXPECT_EQ(x.dispatched_at, 0);

  auto twice = apply_one(retry{1, t0 + minute, {iid}});
  ASSERT_FALSE(twice);
  EXPECT_EQ(code_of(twice.error()), errc::illegal_transition) << "retry only from retry_waiting";
  EXPECT_EQ(get_instance(iid).attempt, 2u);
}

TEST_F(state_machine_test, retry_of_a_running_or_dispatched_instance_is_illegal) {
  const auto iid = running_instance();
  auto r = apply_one(retry{1, t0, {iid}});
  ASSERT_FALSE(r);
  EXPECT_EQ(code_of(r.error()), errc::illegal_transition);

  auto id = create(make_task("d"));
  must_apply(fire_of({{id, t0, "tr"}}));
  const auto dispatched = make_instance_id(id, t0, 0);
  must_apply(dispatch{1, t0, {{dispatched, "w1"}}});
  auto d = apply_one(retry{1, t0, {dispatched}});
  ASSERT_FALSE(d);
  EXPECT_EQ(code_of(d.error()), errc::illegal_transition);
  EXPECT_EQ(get_instance(dispatched).state, instance_state::dispatched);
  EXPECT_EQ(get_instance(dispatched).attempt, 1u);
}

TEST_F(state_machine_test, cancel_finishes_an_unfinished_run_in_its_tenant_only) {
  auto id = create(make_task("c", "acme"));
  must_apply(fire_of({{id, t0, "tr"}}));
  const auto iid = make_instance_id(id, t0, 0);

  auto foreign = apply_one(cancel{"globex", iid, t0 + 1, "nope"});
  ASSERT_FALSE(foreign);
  EXPECT_EQ(code_of(foreign.error()), errc::not_found);
  EXPECT_EQ(get_instance(iid).state, instance_state::pending);

  must_apply(cancel{"acme", iid, t0 + 2, "operator"});
  auto x = get_instance(iid);
  EXPECT_EQ(x.state, instance_state::cancelled);
  EXPECT_EQ(x.finished_at, t0 + 2);
  EXPECT_EQ(x.error, "operator");
}

TEST_F(state_machine_test, commands_on_an_unknown_instance_are_not_found) {
  auto id = create(make_task("x"));
  must_apply(fire_of({{id, t0, "tr"}}));
  const auto unknown = make_instance_id(id, t0 + 1, 0);
  auto rs = apply({report_results{1, t0, {report(unknown, instance_state::success)}},
                   dispatch{1, t0, {{unknown, "w1"}}}, retry{1, t0, {unknown}},
                   cancel{"", unknown, t0, ""}});
  ASSERT_EQ(rs.size(), 4u);
  for (auto& r : rs) {
    ASSERT_FALSE(r);
    EXPECT_EQ(code_of(r.error()), errc::not_found);
    EXPECT_EQ(view(r.error()).field, "instance_id");
  }
  auto malformed = apply_one(report_results{1, t0, {report("not-an-id", instance_state::success)}});
  ASSERT_FALSE(malformed);
  EXPECT_EQ(code_of(malformed.error()), errc::invalid_argument);

  auto g = sm_->get_instance("", unknown);
  ASSERT_FALSE(g);
  EXPECT_EQ(code_of(g.error()), errc::not_found);
  auto bad = sm_->get_instance("", "1-x-0");
  ASSERT_FALSE(bad);
  EXPECT_EQ(code_of(bad.error()), errc::invalid_argument);
}

TEST_F(state_machine_test, instance_state_survives_a_reopen) {
  const auto iid = running_instance();
  const auto before = get_instance(iid);
  reopen();
  EXPECT_EQ(get_instance(iid), before);
  must_apply(report_results{1, t0 + 5, {report(iid, instance_state::success)}});
  EXPECT_EQ(page_ids(instance_query{"", 0, true, instance_state::running, "", 10}).size(), 0u);
  EXPECT_EQ(page_ids(instance_query{"", 0, true, instance_state::success, "", 10}).size(), 1u);
}

// -- metrics -------------------------------------------------------------------

size_t idx(instance_state s) { return static_cast<size_t>(s); }

TEST_F(state_machine_test, instance_counts_follow_transitions_and_survive_a_reopen) {
  auto id = create(make_task("sharded", "default", 2));
  must_apply(fire_of({{id, t0, "tr"}}));
  must_apply(fire_of({{id, t0, "tr"}}));  // a repeated slot creates nothing
  const auto iid = make_instance_id(id, t0, 0);
  must_apply(dispatch{1, t0 + 1, {{iid, "w1"}}});
  EXPECT_FALSE(apply_one(proto::retry{1, t0 + 2, {iid}}));  // illegal: changes nothing
  must_apply(report_results{1, t0 + 3, {report(iid, instance_state::success)}});

  state_machine::state_counts want{};
  want[idx(instance_state::pending)] = 1;
  want[idx(instance_state::success)] = 1;
  EXPECT_EQ(sm_->instance_counts(), want);
  auto& gauges = obs::get().instances;
  EXPECT_EQ(gauges[idx(instance_state::pending)].value(), 1);
  EXPECT_EQ(gauges[idx(instance_state::success)].value(), 1);
  EXPECT_EQ(gauges[idx(instance_state::dispatched)].value(), 0);

  gauges[idx(instance_state::pending)].set(99);  // a stale value from before a restart
  reopen();
  EXPECT_EQ(sm_->instance_counts(), want);
  EXPECT_EQ(gauges[idx(instance_state::pending)].value(), 1) << "open() publishes the counts";
}

TEST_F(state_machine_test, instance_counts_are_recounted_once_for_a_database_without_them) {
  running_instance(t0);
  auto id = create(make_task("two", "default", 2));
  must_apply(fire_of({{id, t0, "tr"}}));
  const auto want = sm_->instance_counts();
  // A database written before the counts were kept has no such key.
  rocksdb::WriteBatch b;
  b.Delete(db_->cf(column::meta), "instance_counts");
  ASSERT_FALSE(db_->write(b, true));
  reopen();
  EXPECT_EQ(sm_->instance_counts(), want);
  EXPECT_EQ(sm_->instance_counts()[idx(instance_state::running)], 1u);
  EXPECT_EQ(sm_->instance_counts()[idx(instance_state::pending)], 2u);
  auto stored = db_->get(column::meta, "instance_counts");
  ASSERT_TRUE(stored);
  EXPECT_TRUE(stored->has_value()) << "the recount is stored, so the next open reads it";
}

TEST_F(state_machine_test, task_mutations_are_counted_by_action_once_applied) {
  auto& m = obs::get();
  auto before = [&] {
    return std::vector<double>{m.task_created.value(), m.task_updated.value(),
                               m.task_deleted.value(), m.task_paused.value(),
                               m.task_resumed.value()};
  };
  auto start = before();
  auto id = create(make_task("t"));
  auto t = get(id);
  must_apply(update_task{t, 0});
  must_apply(set_paused{"", id, true, t0});
  must_apply(set_paused{"", id, true, t0});  // no change: not a mutation
  must_apply(set_paused{"", id, false, t0});
  EXPECT_FALSE(apply_one(update_task{t, 1}));  // stale version: rejected
  must_apply(delete_task{"", id, 0});
  auto now = before();
  std::vector<double> delta;
  for (size_t i = 0; i < now.size(); ++i) delta.push_back(now[i] - start[i]);
  EXPECT_EQ(delta, (std::vector<double>{1, 1, 1, 1, 1}));
}

}  // namespace
}  // namespace aisched::storage

