// An apply() that cannot read what it needs fails its whole batch: a task
// record that does not decode is never taken for "no retry" or "a 1 h
// timeout", which would let this member's state differ from the others'.
// The raft actor turns that error into fencing (a storage fault) or a stop
// (corruption) — actors/raft/raft_actor.cpp, fail().
#include "storage/state_machine_fixture.hpp"

#include "storage/keys.hpp"

namespace aisched::storage::testing_support {

class state_machine_read_fault_test : public state_machine_test {
 protected:
  /// Overwrites task `id`'s record with bytes that do not decode and drops
  /// the apply cache, as a damaged SST block read afresh would look.
  void corrupt_task(uint64_t id) {
    rocksdb::WriteBatch b;
    b.Put(db_->cf(column::tasks), keys::task(id), std::string("\xff\x01garbage", 9));
    ASSERT_FALSE(db_->write(b, true));
    ASSERT_FALSE(sm_->reload());
  }

  /// Applies `c` as the next entry and returns apply()'s own result.
  caf::expected<std::vector<caf::expected<applied>>> apply_raw(command c) {
    std::vector<log_entry> entries{log_entry{sm_->applied_index() + 1, 1, std::move(c)}};
    return sm_->apply(entries);
  }
};

TEST_F(state_machine_read_fault_test, a_failed_report_whose_task_cannot_be_read_fails_the_batch) {
  auto t = make_task("retried");
  t.retry.kind = retry_kind::fixed;
  t.retry.max_attempts = 3;
  auto id = create(t);
  must_apply(fire_of({{id, t0, "tr"}}));
  auto iid = make_instance_id(id, t0, 0);
  must_apply(dispatch{1, t0 + 1, {{iid, "w1"}}});
  must_apply(report_results{1, t0 + 2, {report(iid, instance_state::running, t0 + 2)}});
  corrupt_task(id);
  auto before = sm_->applied_index();

  auto r = apply_raw(report_results{1, t0 + 3, {report(iid, instance_state::failed, t0 + 3)}});

  ASSERT_FALSE(r) << "the retry policy could not be read, yet the batch applied (the run is now "
                  << name_of(get_instance(iid).state) << ")";
  EXPECT_EQ(code_of(r.error()), errc::corrupted);
  EXPECT_EQ(sm_->applied_index(), before) << "a failed batch must leave nothing applied";
  EXPECT_EQ(get_instance(iid).state, instance_state::running);
}

TEST_F(state_machine_read_fault_test, a_dispatch_whose_task_cannot_be_read_fails_the_batch) {
  auto id = create(make_task("dispatched"));
  must_apply(fire_of({{id, t0, "tr"}}));
  auto iid = make_instance_id(id, t0, 0);
  corrupt_task(id);
  auto before = sm_->applied_index();

  auto r = apply_raw(dispatch{1, t0 + 1, {{iid, "w1"}}});

  ASSERT_FALSE(r) << "the timeout could not be read, yet the run was dispatched with deadline "
                  << get_instance(iid).deadline;
  EXPECT_EQ(code_of(r.error()), errc::corrupted);
  EXPECT_EQ(sm_->applied_index(), before);
  EXPECT_EQ(get_instance(iid).state, instance_state::pending);
}

TEST_F(state_machine_read_fault_test, a_rejected_entry_still_applies_its_batch) {
  // The line between the two kinds of error: an unknown instance is the same
  // on every member, so only its entry is rejected.
  auto r = apply_raw(dispatch{1, t0, {{make_instance_id(999, t0, 0), "w1"}}});
  ASSERT_TRUE(r) << view(r.error()).message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_FALSE(r->front());
  EXPECT_EQ(code_of(r->front().error()), errc::not_found);
}

}  // namespace aisched::storage::testing_support
