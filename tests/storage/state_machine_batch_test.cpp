// The state machine writes each record once per apply() batch (its last value)
// and keeps an apply cache of tasks, runtimes and unfinished instances across
// batches: several transitions of one run in one batch leave exactly the state
// (and state index) of the last one, a task deleted in the batch that fired it
// leaves no runtime behind, and a state replaced underneath (a snapshot
// install) is read afresh after reload(), not from the cache.
#include "storage/state_machine_fixture.hpp"

#include "proto/codec.hpp"
#include "storage/keys.hpp"

namespace aisched::storage::testing_support {

class state_machine_batch_test : public state_machine_test {
 protected:
  std::vector<std::string> in_state(instance_state s) {
    instance_query q;
    q.by_state = true;
    q.state = s;
    q.limit = 100;
    return page_ids(q);
  }

  std::vector<std::string> active() {
    auto p = sm_->scan_active(instance_query{});
    EXPECT_TRUE(p) << view(p.error()).message;
    std::vector<std::string> out;
    if (p)
      for (auto& x : p->active) out.push_back(x.id);
    return out;
  }
};

TEST_F(state_machine_batch_test, a_run_finished_within_one_batch_leaves_only_its_last_state) {
  auto id = create(make_task("quick"));
  const auto iid = make_instance_id(id, t0, 0);
  std::vector<command> cmds;
  cmds.emplace_back(fire_of({{id, t0, "tr"}}));
  cmds.emplace_back(dispatch{1, t0 + 1, {{iid, "w1"}}});
  cmds.emplace_back(report_results{1, t0 + 2, {report(iid, instance_state::running, t0 + 2)}});
  cmds.emplace_back(report_results{1, t0 + 3, {report(iid, instance_state::success, t0 + 2)}});
  for (auto& r : apply(std::move(cmds))) EXPECT_TRUE(r) << view(r.error()).message;

  auto check = [&] {
    EXPECT_EQ(get_instance(iid).state, instance_state::success);
    EXPECT_EQ(in_state(instance_state::success), std::vector<std::string>{iid});
    for (auto s : {instance_state::pending, instance_state::dispatched, instance_state::running})
      EXPECT_TRUE(in_state(s).empty()) << "a stale index entry for " << name_of(s);
    EXPECT_TRUE(active().empty());
    state_machine::state_counts want{};
    want[static_cast<size_t>(instance_state::success)] = 1;
    EXPECT_EQ(sm_->instance_counts(), want);
    auto rt = sm_->get_task_runtime(id);
    ASSERT_TRUE(rt);
    EXPECT_EQ(rt->last_instance_id, iid);
    EXPECT_EQ(rt->last_state, instance_state::success);
  };
  check();
  reopen();
  check();
}

TEST_F(state_machine_batch_test, an_index_entry_moves_once_across_batches_of_several_transitions) {
  auto id = create(make_task("steps"));
  const auto iid = make_instance_id(id, t0, 0);
  must_apply(fire_of({{id, t0, "tr"}}));
  EXPECT_EQ(active(), std::vector<std::string>{iid});
  std::vector<command> cmds;
  cmds.emplace_back(dispatch{1, t0 + 1, {{iid, "w1"}}});
  cmds.emplace_back(report_results{1, t0 + 2, {report(iid, instance_state::running, t0 + 2)}});
  apply(std::move(cmds));
  EXPECT_TRUE(in_state(instance_state::pending).empty());
  EXPECT_TRUE(in_state(instance_state::dispatched).empty());
  EXPECT_EQ(in_state(instance_state::running), std::vector<std::string>{iid});
  EXPECT_EQ(active(), std::vector<std::string>{iid});
}

TEST_F(state_machine_batch_test, a_task_deleted_in_the_batch_that_fired_it_leaves_no_runtime) {
  auto id = create(make_task("short-lived"));
  const auto iid = make_instance_id(id, t0, 0);
  std::vector<command> cmds;
  cmds.emplace_back(fire_of({{id, t0, "tr"}}));
  cmds.emplace_back(delete_task{"", id, 0});
  for (auto& r : apply(std::move(cmds))) EXPECT_TRUE(r) << view(r.error()).message;
  EXPECT_FALSE(sm_->get_task("", id));
  auto rt = sm_->get_task_runtime(id);
  ASSERT_TRUE(rt);
  EXPECT_TRUE(rt->last_instance_id.empty()) << "the runtime of a deleted task was kept";
  EXPECT_EQ(get_instance(iid).state, instance_state::pending) << "its run stays readable";
  // The delete reached the cache too: a later fire of the same id is a no-op.
  must_apply(fire_of({{id, t0 + minute, "tr"}}));
  EXPECT_FALSE(sm_->get_instance("", make_instance_id(id, t0 + minute, 0)));
}

TEST_F(state_machine_batch_test, a_state_replaced_underneath_is_read_afresh_after_reload) {
  auto id = create(make_task("replaced"));
  const auto iid = make_instance_id(id, t0, 0);
  must_apply(fire_of({{id, t0, "tr"}}));  // the pending run is now in the apply cache

  // What a snapshot install does: the state changes in the database, then reload().
  auto x = get_instance(iid);
  x.state = instance_state::cancelled;
  rocksdb::WriteBatch b;
  b.Put(db_->cf(column::instances), keys::instance(id, t0, 0), proto::encode(x));
  ASSERT_FALSE(db_->write(b, true));
  ASSERT_FALSE(sm_->reload());

  auto r = apply_one(dispatch{1, t0 + 1, {{iid, "w1"}}});
  ASSERT_FALSE(r) << "dispatched a run the database says was cancelled (a stale cache)";
  EXPECT_EQ(code_of(r.error()), errc::illegal_transition);
}

}  // namespace aisched::storage::testing_support
