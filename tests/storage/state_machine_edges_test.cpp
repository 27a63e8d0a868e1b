// storage::state_machine on a real RocksDB: deleting a task others depend on
// (refused naming them, or cascading in the same entry, also when the dependent
// was created earlier in the same batch), and retry_instance (another attempt of
// a failed, timed-out or cancelled run; any other state is refused).
#include "storage/keys.hpp"
#include "storage/state_machine_fixture.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
using namespace testing_support;

TEST_F(state_machine_test, deleting_a_task_others_depend_on_is_refused_naming_them) {
  auto up = create(make_task("up"));
  auto a = make_task("a");
  a.depends_on = {up};
  auto b = make_task("b");
  b.depends_on = {up};
  auto ida = create(a), idb = create(b);
  auto r = apply_one(delete_task{"", up, 0});
  ASSERT_FALSE(r);
  EXPECT_EQ(code_of(r.error()), errc::has_dependents);
  auto msg = view(r.error()).message;
  EXPECT_NE(msg.find(std::to_string(ida) + ", " + std::to_string(idb)), std::string::npos) << msg;
  EXPECT_EQ(get(up).name, "up") << "nothing deleted";
}

TEST_F(state_machine_test, a_cascading_delete_drops_the_edges_in_the_same_entry) {
  auto up = create(make_task("up"));
  auto other = create(make_task("other"));
  auto a = make_task("a");
  a.depends_on = {up, other};
  auto ida = create(a);
  auto b = make_task("b");
  b.depends_on = {up};
  // b is created in the same batch as the delete: the scan sees the batch's writes.
  auto rs = apply({create_task{b}, delete_task{"", up, 0, true}});
  ASSERT_EQ(rs.size(), 2u);
  ASSERT_TRUE(rs[0]) << view(rs[0].error()).message;
  ASSERT_TRUE(rs[1]) << view(rs[1].error()).message;
  auto idb = rs[0]->tasks.at(0).id;
  EXPECT_EQ(rs[1]->deleted_tasks, std::vector<uint64_t>{up});
  ASSERT_EQ(rs[1]->tasks.size(), 2u) << "the changed dependents are reported";
  EXPECT_EQ(get(ida).depends_on, std::vector<uint64_t>{other});
  EXPECT_EQ(get(ida).version, 2u);
  EXPECT_TRUE(get(idb).depends_on.empty());
  EXPECT_EQ(code_of(sm_->get_task("", up).error()), errc::not_found);
  reopen();
  EXPECT_EQ(get(ida).depends_on, std::vector<uint64_t>{other}) << "durable";
}

TEST_F(state_machine_test, retry_instance_starts_the_next_attempt_of_a_failed_run) {
  auto iid = running_instance();
  must_apply(report_results{1, t0 + 3, {report(iid, instance_state::failed, t0 + 3)}});
  ASSERT_EQ(get_instance(iid).state, instance_state::failed);
  auto a = must_apply(retry_instance{"default", iid, t0 + 10});
  ASSERT_EQ(a.instances.size(), 1u);
  auto x = get_instance(iid);
  EXPECT_EQ(x.state, instance_state::pending);
  EXPECT_EQ(x.attempt, 2u);
  EXPECT_TRUE(x.worker_id.empty());
  EXPECT_EQ(x.finished_at, 0);
  auto attempts = sm_->list_attempts("", iid);
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts->items.size(), 1u) << "the ended attempt stays in the history";
  EXPECT_EQ(attempts->items[0].attempt, 1u);
  EXPECT_EQ(sm_->instance_counts()[static_cast<size_t>(instance_state::pending)], 1u);
  EXPECT_EQ(sm_->instance_counts()[static_cast<size_t>(instance_state::failed)], 0u);
}

TEST_F(state_machine_test, retry_instance_of_a_run_that_did_not_end_badly_is_refused) {
  auto iid = running_instance();
  auto r = apply_one(retry_instance{"", iid, t0 + 10});
  ASSERT_FALSE(r);
  EXPECT_EQ(code_of(r.error()), errc::illegal_transition);
  must_apply(report_results{1, t0 + 3, {report(iid, instance_state::success, t0 + 3)}});
  r = apply_one(retry_instance{"", iid, t0 + 10});
  ASSERT_FALSE(r);
  EXPECT_EQ(code_of(r.error()), errc::illegal_transition);
  EXPECT_EQ(get_instance(iid).state, instance_state::success);
  r = apply_one(retry_instance{"globex", iid, t0 + 10});
  ASSERT_FALSE(r);
  EXPECT_EQ(code_of(r.error()), errc::not_found) << "another tenant's run";
}

}  // namespace
}  // namespace aisched::storage

namespace aisched::storage {
namespace {

using namespace proto;
using namespace testing_support;

// #41 item 2: ids are never reused. A task id counter that is not above every
// task present (its meta record lost or rolled back) stops the open, naming both.
TEST_F(state_machine_test, a_task_id_counter_behind_the_tasks_present_stops_the_open) {
  create(make_task("one"));
  auto two = create(make_task("two"));
  rocksdb::WriteBatch rewind;
  rewind.Put(db_->cf(column::meta), "next_task_id", keys::u64(two));
  ASSERT_FALSE(db_->write(rewind, true));
  sm_.reset();
  auto reopened = state_machine::open(*db_);
  ASSERT_FALSE(reopened) << "the next create would reuse id " << two;
  EXPECT_EQ(code_of(reopened.error()), errc::corrupted);
  auto msg = view(reopened.error()).message;
  EXPECT_NE(msg.find("highest task id present (" + std::to_string(two) + ")"), std::string::npos)
      << msg;
  // Put back, it opens and the next id follows the highest.
  rocksdb::WriteBatch mend;
  mend.Put(db_->cf(column::meta), "next_task_id", keys::u64(two + 1));
  ASSERT_FALSE(db_->write(mend, true));
  auto m = state_machine::open(*db_);
  ASSERT_TRUE(m) << view(m.error()).message;
  sm_ = std::move(*m);
  EXPECT_EQ(create(make_task("three")), two + 1);
}

}  // namespace
}  // namespace aisched::storage
