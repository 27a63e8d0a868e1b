// Storage faults against a real RocksDB whose file writes fail on demand
// (rocks::open_options::fault, storage/fault_fs.cpp): a failed write comes back
// as an error value (storage_full for ENOSPC, storage_unavailable for EIO), is
// recorded in health() and the storage metrics, changes nothing, keeps failing
// while the fault lasts, and writes resume through recover() once an ENOSPC
// clears, with everything written before still there after a reopen (an EIO
// RocksDB marks fatal: only a reopen mends it).
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <memory>
#include <ostream>
#include <string>

#include <gtest/gtest.h>
#include <rocksdb/write_batch.h>

#include "obs/metrics.hpp"
#include "proto/errors.hpp"
#include "storage/health.hpp"
#include "storage/raft_log.hpp"
#include "storage/rocks.hpp"
#include "storage/state_machine.hpp"
#include "storage/wal_sync.hpp"
#include "support/test_dir.hpp"

namespace aisched {
void PrintTo(errc x, std::ostream* os) { *os << to_string(x); }
}  // namespace aisched

namespace aisched::storage {
namespace {

using namespace proto;

struct faulty_db {
  std::filesystem::path dir = test::make_test_dir("storage-fault-");
  std::shared_ptr<std::atomic<fault_kind>> fault = std::make_shared<std::atomic<fault_kind>>();
  std::unique_ptr<rocks> db;

  faulty_db() { reopen(); }

  void reopen() {
    db.reset();
    open_options opts;
    opts.fault = [f = fault] { return f->load(); };
    auto r = rocks::open(dir.string(), std::move(opts));
    if (!r) throw std::runtime_error(view(r.error()).message);
    db = std::move(*r);
  }
  ~faulty_db() {
    db.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

caf::error put(rocks& db, const std::string& key, bool sync = true) {
  rocksdb::WriteBatch b;
  b.Put(db.cf(column::meta), key, "v");
  return db.write(b, sync);
}

/// Calls recover() until it succeeds (RocksDB's own ENOSPC recovery may hold
/// it off for a moment: it polls every 5 s) or 10 s pass; returns the last answer.
caf::error recover_soon(rocks& db) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto err = db.recover();
  while (err && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    err = db.recover();
  }
  return err;
}

std::vector<log_entry> entries(uint64_t from, uint64_t to, uint64_t term) {
  std::vector<log_entry> out;
  for (auto i = from; i <= to; ++i) out.push_back(log_entry{i, term, noop{}});
  return out;
}

TEST(storage_fault, no_space_is_storage_full_and_writes_resume_after_recover) {
  faulty_db f;
  auto& m = obs::get();
  auto errors_before = m.storage_errors_no_space.value();
  ASSERT_FALSE(put(*f.db, "before"));
  EXPECT_TRUE(f.db->health()->ok());

  f.fault->store(fault_kind::no_space);
  auto err = put(*f.db, "during");
  ASSERT_TRUE(err);
  EXPECT_EQ(view(err).code, errc::storage_full);
  EXPECT_NE(view(err).message.find("No space left on device"), std::string::npos)
      << view(err).message;
  auto health = f.db->health();
  EXPECT_FALSE(health->ok());
  EXPECT_EQ(health->code(), errc::storage_full);
  EXPECT_NE(health->problem().find("No space"), std::string::npos) << health->problem();
  EXPECT_EQ(m.storage_healthy.value(), 0);
  EXPECT_GE(m.storage_errors_no_space.value(), errors_before + 1);
  // Unsynced writes (the state machine's) fail too, and so do probes while it lasts.
  EXPECT_EQ(view(put(*f.db, "during2", false)).code, errc::storage_full);
  EXPECT_EQ(view(f.db->recover()).code, errc::storage_full);
  EXPECT_FALSE(f.db->get(column::meta, "during")->has_value());

  f.fault->store(fault_kind::none);
  ASSERT_FALSE(recover_soon(*f.db));
  EXPECT_TRUE(health->ok());
  EXPECT_EQ(m.storage_healthy.value(), 1);
  ASSERT_FALSE(put(*f.db, "after"));
  f.reopen();
  EXPECT_TRUE(f.db->get(column::meta, "before")->has_value());
  EXPECT_TRUE(f.db->get(column::meta, "after")->has_value());
  EXPECT_FALSE(f.db->get(column::meta, "during")->has_value());
}

// RocksDB marks an EIO on its WAL fatal: no Resume() mends it, only a reopen.
// recover() says so with a code that is no storage fault (the raft actor then
// ends, and the node with it), and a reopened database writes again.
TEST(storage_fault, io_error_is_storage_unavailable_and_mended_by_a_reopen) {
  faulty_db f;
  auto errors_before = obs::get().storage_errors_io.value();
  ASSERT_FALSE(put(*f.db, "before"));
  f.fault->store(fault_kind::io_error);
  auto err = put(*f.db, "during");
  ASSERT_TRUE(err);
  EXPECT_EQ(view(err).code, errc::storage_unavailable) << view(err).message;
  EXPECT_NE(view(err).message.find("Input/output error"), std::string::npos) << view(err).message;
  EXPECT_GE(obs::get().storage_errors_io.value(), errors_before + 1);
  EXPECT_EQ(f.db->health()->code(), errc::storage_unavailable);
  f.fault->store(fault_kind::none);
  auto fatal = f.db->recover();
  ASSERT_TRUE(fatal);
  EXPECT_EQ(view(fatal).code, errc::internal) << view(fatal).message;
  EXPECT_FALSE(is_storage_fault(view(fatal).code));
  f.reopen();
  ASSERT_FALSE(put(*f.db, "after"));
  EXPECT_TRUE(f.db->health()->ok());
  EXPECT_TRUE(f.db->get(column::meta, "before")->has_value());
  EXPECT_FALSE(f.db->get(column::meta, "during")->has_value());
}

TEST(storage_fault, failed_raft_append_changes_nothing_and_resumes) {
  faulty_db f;
  auto log = raft_log::open(*f.db);
  ASSERT_TRUE(log) << view(log.error()).message;
  ASSERT_FALSE(log->append(entries(1, 3, 1), {1, "n1", 0}));

  f.fault->store(fault_kind::no_space);
  auto err = log->append(entries(4, 6, 2), {2, "n1", 3});
  ASSERT_TRUE(err);
  EXPECT_EQ(view(err).code, errc::storage_full);
  EXPECT_EQ(log->last_index(), 3u);  // the log did not move
  EXPECT_EQ(log->state().term, 1u);
  EXPECT_EQ(view(log->save({3, "n2", 3})).code, errc::storage_full);

  f.fault->store(fault_kind::none);
  ASSERT_FALSE(recover_soon(*f.db));
  ASSERT_FALSE(log->append(entries(4, 6, 2), {2, "n1", 3}));
  f.reopen();
  auto reopened = raft_log::open(*f.db);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->last_index(), 6u);
  EXPECT_EQ(reopened->state().term, 2u);
  auto read = reopened->read(1, 6);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->size(), 6u);
}

/// A create of task `name` at log index `index`.
log_entry create_entry(uint64_t index, const std::string& name) {
  task t;
  t.name = name;
  t.command = "true";
  t.schedule = "* * * * *";
  return log_entry{index, 1, create_task{t, ""}};
}

// The raft actor writes a ready's entries without sync and syncs them in the
// background (storage/wal_sync.hpp) while the state machine computes its
// batch, which it writes only once the sync succeeded. An fsync that fails
// while appends succeed (EIO on fsync) fails the batch: nothing of it is
// visible, and the applied index stays; a sync that succeeds makes the
// entries durable, the batch written after it.
TEST(storage_fault, a_failed_background_sync_fails_the_batch_and_shows_nothing_of_it) {
  faulty_db f;
  {
    auto sm = state_machine::open(*f.db);
    ASSERT_TRUE(sm) << view(sm.error()).message;
    auto log = raft_log::open(*f.db);
    ASSERT_TRUE(log) << view(log.error()).message;
    wal_sync syncer(*f.db);

    std::vector<log_entry> first{create_entry(1, "kept")};
    ASSERT_FALSE(log->append(first, {1, "n1", 1}, std::nullopt, false));
    syncer.start();
    auto r = (*sm)->apply(first, [&] { return syncer.wait(); });
    ASSERT_TRUE(r) << view(r.error()).message;
    ASSERT_TRUE(r->at(0)) << view(r->at(0).error()).message;
    ASSERT_EQ(r->at(0)->tasks.size(), 1u);
    auto kept = r->at(0)->tasks[0].id;
    EXPECT_TRUE((*sm)->get_task("default", kept));

    f.fault->store(fault_kind::sync_error);
    std::vector<log_entry> second{create_entry(2, "lost")};
    ASSERT_FALSE(log->append(second, {1, "n1", 2}, std::nullopt, false));  // appends succeed
    syncer.start();
    bool asked = false;
    r = (*sm)->apply(second, [&] {
      asked = true;
      return syncer.wait();
    });
    EXPECT_TRUE(asked);
    ASSERT_FALSE(r);
    EXPECT_EQ(view(r.error()).code, errc::storage_unavailable) << view(r.error()).message;
    EXPECT_EQ((*sm)->applied_index(), 1u);
    auto page = (*sm)->list_tasks(task_query{});
    ASSERT_TRUE(page) << view(page.error()).message;
    ASSERT_EQ(page->items.size(), 1u);
    EXPECT_EQ(page->items[0].name, "kept");
    EXPECT_FALSE(f.db->health()->ok());
  }
  // What was synced is there after a reopen.
  f.fault->store(fault_kind::none);
  f.reopen();
  auto sm = state_machine::open(*f.db);
  ASSERT_TRUE(sm) << view(sm.error()).message;
  EXPECT_GE((*sm)->applied_index(), 1u);
  auto page = (*sm)->list_tasks(task_query{});
  ASSERT_TRUE(page);
  ASSERT_GE(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].name, "kept");
}

}  // namespace
}  // namespace aisched::storage
