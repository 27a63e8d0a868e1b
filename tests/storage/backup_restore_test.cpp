// A backup of a state machine (storage/backup_export.hpp) restored into a new
// data directory (storage/backup_restore.hpp): tasks, finished and pending
// runs, task runtimes (the last fired slot) and sealed secrets come back as
// they were; runs in flight end worker_lost with the reason, retried per their
// task's policy; the data directory gets the new membership, the new cluster
// id, a log based at the restored index and a FORMAT stamp. A used directory,
// a damaged file and a wrong secrets key are refused and leave nothing.
#include <fstream>
#include <iterator>

#include "common/secret_crypto.hpp"
#include "storage/backup_export.hpp"
#include "storage/backup_restore.hpp"
#include "storage/format_version.hpp"
#include "storage/membership_store.hpp"
#include "storage/raft_log.hpp"
#include "storage/secret_keeper.hpp"
#include "storage/state_machine_fixture.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
using namespace testing_support;

class backup_restore_test : public state_machine_test {
 protected:
  void SetUp() override {
    state_machine_test::SetUp();
    key_ = secret_crypto::random_key();
    populate();
    file_ = (dir_.parent_path() / (dir_.filename().string() + ".snapshot")).string();
    target_ = (dir_.parent_path() / (dir_.filename().string() + "-restored")).string();
    save(file_);
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove(file_, ec);
    fs::remove_all(target_, ec);
    fs::remove_all(target_ + "-second", ec);  // members_restored_from_one_file_...'s
    state_machine_test::TearDown();
  }

  /// Four runs of four tasks: running (retried up to 3 attempts), dispatched
  /// (no retry), pending and finished; a secret; a membership; a cluster id.
  void populate() {
    auto retried = make_task("retried");
    retried.retry.kind = retry_kind::fixed;
    retried.retry.max_attempts = 3;
    ids_.push_back(create(retried));
    for (auto name : {"once", "waiting", "done"}) ids_.push_back(create(make_task(name)));
    for (auto id : ids_) must_apply(fire_of({{id, t0, "tr"}}));
    for (auto i : {0, 1, 3}) must_apply(dispatch{1, t0 + 1, {{run(i), "w1"}}});
    for (auto i : {0, 3})
      must_apply(report_results{1, t0 + 2, {report(run(i), instance_state::running, t0 + 2)}});
    must_apply(report_results{1, t0 + 3, {report(run(3), instance_state::success, t0 + 3)}});
    secret_keeper keeper(*db_, key_, std::nullopt);
    auto sealed = keeper.seal("default", "db_password", "hunter2", t0);
    ASSERT_TRUE(sealed) << view(sealed.error()).message;
    ASSERT_TRUE(sealed->first_key);
    must_apply(*sealed->first_key);
    must_apply(put_secret{sealed->record});
    must_apply(set_membership{{{"n1", true, "127.0.0.1:7401", "127.0.0.1:8081"}}});
    ASSERT_FALSE(write_cluster_id(*db_, "old-cluster"));
  }

  std::string run(size_t i) const { return make_instance_id(ids_[i], t0, 0); }

  void save(const std::string& path) {
    auto x = backup_export::open(*db_, {"n1", "test", t0 + minute});
    ASSERT_TRUE(x) << view(x.error()).message;
    std::ofstream out(path, std::ios::binary);
    for (int guard = 0; guard < 100'000; ++guard) {
      auto piece = (*x)->next(4096);  // small pieces: many records per column split
      ASSERT_TRUE(piece) << view(piece.error()).message;
      if (piece->empty()) break;
      out << *piece;
    }
    ASSERT_TRUE((*x)->done());
    EXPECT_EQ((*x)->header().index, sm_->applied_index());
    EXPECT_EQ((*x)->header().cluster_id, "old-cluster");
    EXPECT_EQ((*x)->header().key_checks, std::vector<std::string>{secret_crypto::key_check(key_)});
  }

  restore_plan plan() const {
    restore_plan p;
    p.file = file_;
    p.data_dir = target_;
    p.members = {{"m1", true, "127.0.0.1:7501", ""}};
    p.cluster_id_for = [](const backup::backup_header& h) { return "new-" + h.cluster_id; };
    p.secrets_key = key_;
    p.written_by = "test";
    return p;
  }

  /// Nothing at the target, nor a temporary directory beside it.
  void expect_nothing_written() {
    EXPECT_FALSE(fs::exists(target_));
    for (auto& e : fs::directory_iterator(fs::path(target_).parent_path()))
      EXPECT_EQ(e.path().filename().string().find(fs::path(target_).filename().string() +
                                                   ".restoring"),
                std::string::npos)
          << e.path();
  }

  secret_crypto::key key_{};
  std::vector<uint64_t> ids_;
  std::string file_, target_;
};

TEST_F(backup_restore_test, restores_the_state_and_ends_the_runs_in_flight) {
  auto backup_index = sm_->applied_index();
  auto done = restore_backup(plan());
  ASSERT_TRUE(done) << view(done.error()).message;
  EXPECT_EQ(done->backup.header.index, backup_index);
  EXPECT_EQ(done->runs_lost, 2u);      // running and dispatched
  EXPECT_EQ(done->runs_retrying, 1u);  // the task with retries
  EXPECT_EQ(done->index, backup_index + 1);
  EXPECT_EQ(done->cluster_id, "new-old-cluster");
  EXPECT_FALSE(done->secrets_unchecked);

  std::unique_ptr<rocks> db;
  std::unique_ptr<state_machine> sm;
  open_at(target_, db, sm);
  EXPECT_EQ(sm->applied_index(), backup_index + 1);
  auto tasks = sm->list_tasks(task_query{"", 0, 1000});
  ASSERT_TRUE(tasks);
  EXPECT_EQ(tasks->items, all_tasks());
  for (auto id : ids_) {
    auto a = sm_->get_task_runtime(id), b = sm->get_task_runtime(id);
    ASSERT_TRUE(a && b);
    // The last fired slot: the trigger plans from it, so no slot fires twice.
    EXPECT_EQ(a->last_slot, b->last_slot) << "task " << id;
    EXPECT_EQ(a->last_instance_id, b->last_instance_id) << "task " << id;
    EXPECT_EQ(a->scheduled_fires, b->scheduled_fires) << "task " << id;
  }
  auto in = [&](size_t i) {
    auto x = sm->get_instance("", run(i));
    EXPECT_TRUE(x) << run(i);
    return x ? *x : instance{};
  };
  auto retried = in(0), once = in(1), waiting = in(2), finished = in(3);
  EXPECT_EQ(retried.state, instance_state::retry_waiting);
  EXPECT_EQ(retried.attempt, 1u) << "the next attempt is the retry's, not a silent re-run";
  EXPECT_EQ(retried.error, lost_in_restore(backup_index, "w1"));
  EXPECT_EQ(once.state, instance_state::failed);
  EXPECT_EQ(once.error.rfind("worker_lost: worker w1", 0), 0u) << once.error;
  EXPECT_EQ(waiting, get_instance(run(2)));
  EXPECT_EQ(finished, get_instance(run(3)));

  auto members = read_membership(*db);
  ASSERT_TRUE(members && *members);
  EXPECT_EQ(**members, plan().members);
  auto bootstrap = read_bootstrap_membership(*db);
  ASSERT_TRUE(bootstrap && *bootstrap);
  EXPECT_EQ(**bootstrap, plan().members);
  auto id = read_cluster_id(*db);
  ASSERT_TRUE(id);
  EXPECT_EQ(*id, "new-old-cluster");
  auto log = raft_log::open(*db);
  ASSERT_TRUE(log);
  EXPECT_EQ(log->base().index, backup_index + 1);
  EXPECT_EQ(log->last_index(), backup_index + 1);
  EXPECT_EQ(log->state().commit, backup_index + 1);
  EXPECT_GE(log->base().term, 1u);
  auto format = read_format(target_);
  ASSERT_TRUE(format);
  EXPECT_EQ(format->version, current_format);
  EXPECT_EQ(format->written_by, "test");

  secret_keeper keeper(*db, key_, std::nullopt);
  EXPECT_FALSE(keeper.check());
  auto values = keeper.reveal("default", {"db_password"});
  ASSERT_TRUE(values) << view(values.error()).message;
  EXPECT_EQ(values->at("db_password"), "hunter2");
}

TEST_F(backup_restore_test, members_restored_from_one_file_hold_the_same_state) {
  // Each member of the new cluster restores the file on its own machine, at its
  // own moment (it once took that moment from its clock): the entry that ends the runs in flight (index + 1, below the
  // log base, so never sent by a leader) must be the same on every one.
  auto first = restore_backup(plan());
  ASSERT_TRUE(first) << view(first.error()).message;
  auto p = plan();
  p.data_dir = target_ + "-second";
  auto second = restore_backup(p);
  ASSERT_TRUE(second) << view(second.error()).message;
  EXPECT_EQ(first->index, second->index);
  std::unique_ptr<rocks> db1, db2;
  std::unique_ptr<state_machine> sm1, sm2;
  open_at(target_, db1, sm1);
  open_at(p.data_dir, db2, sm2);
  for (size_t i = 0; i < 4; ++i) {
    auto a = sm1->get_instance("", run(i)), b = sm2->get_instance("", run(i));
    ASSERT_TRUE(a && b) << run(i);
    EXPECT_EQ(*a, *b) << run(i);
  }
  auto lost = sm1->get_instance("", run(1));
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->finished_at, t0 + minute) << "ended at the instant the backup was saved";
}

TEST_F(backup_restore_test, a_data_directory_that_is_not_empty_is_refused) {
  fs::create_directories(target_);
  std::ofstream(fs::path(target_) / "CURRENT") << "something\n";
  auto done = restore_backup(plan());
  ASSERT_FALSE(done);
  EXPECT_EQ(view(done.error()).code, errc::invalid_argument);
  EXPECT_EQ(view(done.error()).field, "data_dir");
  EXPECT_NE(view(done.error()).message.find("not empty"), std::string::npos);
  EXPECT_EQ(std::distance(fs::directory_iterator(target_), fs::directory_iterator()), 1);
}

TEST_F(backup_restore_test, an_empty_data_directory_is_used) {
  fs::create_directories(target_);
  auto done = restore_backup(plan());
  ASSERT_TRUE(done) << view(done.error()).message;
  EXPECT_TRUE(fs::exists(fs::path(target_) / "CURRENT"));
}

TEST_F(backup_restore_test, a_wrong_secrets_key_is_refused_naming_the_key_check) {
  auto p = plan();
  auto other = secret_crypto::random_key();
  p.secrets_key = other;
  auto done = restore_backup(p);
  ASSERT_FALSE(done);
  EXPECT_EQ(view(done.error()).field, "secrets-key-file");
  auto msg = view(done.error()).message;
  EXPECT_NE(msg.find("key check"), std::string::npos) << msg;
  EXPECT_NE(msg.find(secret_crypto::key_check(key_)), std::string::npos) << msg;
  EXPECT_NE(msg.find(secret_crypto::key_check(other)), std::string::npos) << msg;
  expect_nothing_written();
}

TEST_F(backup_restore_test, without_a_key_the_secrets_stay_sealed_and_unchecked) {
  auto p = plan();
  p.secrets_key.reset();
  auto done = restore_backup(p);
  ASSERT_TRUE(done) << view(done.error()).message;
  EXPECT_TRUE(done->secrets_unchecked);
}

TEST_F(backup_restore_test, a_damaged_file_is_refused_and_leaves_nothing) {
  std::string bytes;
  {
    std::ifstream in(file_, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), 1000u);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x40);
  std::ofstream(file_, std::ios::binary | std::ios::trunc) << bytes;
  auto done = restore_backup(plan());
  ASSERT_FALSE(done);
  EXPECT_EQ(view(done.error()).code, errc::corrupted);
  EXPECT_NE(view(done.error()).message.find("checksum mismatch"), std::string::npos)
      << view(done.error()).message;
  expect_nothing_written();
}

}  // namespace
}  // namespace aisched::storage
