// Tests for storage::raft_log against a real RocksDB in a fresh temporary directory
// per test: appends and the hard state survive a reopen, appends must continue the
// log without holes, reads honour their range and limit, and a damaged log (a hole,
// an entry under the wrong key) is reported as corrupted instead of being served.
#include "storage/raft_log.hpp"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include "proto/codec.hpp"
#include "proto/commands.hpp"
#include "proto/errors.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"
#include "support/test_dir.hpp"

namespace aisched {
void PrintTo(errc x, std::ostream* os) { *os << to_string(x); }
}  // namespace aisched

namespace aisched::storage {
namespace {

using namespace proto;

namespace fs = std::filesystem;

log_entry entry(uint64_t index, uint64_t term) {
  task t;
  t.name = "task of entry " + std::to_string(index);
  t.command = "true";
  switch (index % 3) {
    case 0: return log_entry{index, term, noop{}};
    case 1: return log_entry{index, term, create_task{t}};
    default: return log_entry{index, term, fire{term, 1000 + int64_t(index), {{1, 60'000, "tr"}}}};
  }
}

std::vector<log_entry> entries(uint64_t from, uint64_t to, uint64_t term) {
  std::vector<log_entry> out;
  for (auto i = from; i <= to; ++i) out.push_back(entry(i, term));
  return out;
}

/// Entries are equal when index, term and command are: the command is compared by
/// its encoding (the codec's own round trip is covered by proto_test).
void expect_same_entries(const std::vector<log_entry>& got, const std::vector<log_entry>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("entry " + std::to_string(want[i].index));
    EXPECT_EQ(got[i].index, want[i].index);
    EXPECT_EQ(got[i].term, want[i].term);
    EXPECT_EQ(got[i].cmd.type, want[i].cmd.type);
    EXPECT_EQ(got[i].cmd.data, want[i].cmd.data);
  }
}

void expect_same_state(const hard_state& got, const hard_state& want) {
  EXPECT_EQ(got.term, want.term);
  EXPECT_EQ(got.voted_for, want.voted_for);
  EXPECT_EQ(got.commit, want.commit);
}

errc code_of(const caf::error& err) { return view(err).code; }

using aisched::test::make_test_dir;

class raft_log_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_test_dir("aisched-log-");
    ASSERT_FALSE(dir_.empty()) << "cannot create a temporary directory";
    open();
  }

  void TearDown() override {
    close();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void open() {
    open_db();
    auto log = raft_log::open(*db_);
    ASSERT_TRUE(log) << view(log.error()).message;
    log_ = std::make_unique<raft_log>(std::move(*log));
  }

  void open_db() {
    auto db = rocks::open(dir_.string());
    ASSERT_TRUE(db) << view(db.error()).message;
    db_ = std::move(*db);
  }

  void close() {
    log_.reset();
    db_.reset();
  }

  void reopen() {
    close();
    open();
  }

  /// Writes `e` under key `index` behind raft_log's back, as damage would.
  void put_raw(uint64_t index, const log_entry& e) {
    rocksdb::WriteBatch batch;
    batch.Put(db_->cf(column::raft_log), keys::u64(index), encode(e));
    ASSERT_FALSE(db_->write(batch, true));
  }

  fs::path dir_;
  std::unique_ptr<rocks> db_;
  std::unique_ptr<raft_log> log_;
};

TEST_F(raft_log_test, fresh_log_is_empty) {
  EXPECT_EQ(log_->last_index(), 0u);
  EXPECT_EQ(log_->last_term(), 0u);
  expect_same_state(log_->state(), hard_state{});
  auto r = log_->read(1, 100);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->empty());
}

TEST_F(raft_log_test, appended_entries_and_hard_state_survive_a_reopen) {
  auto first = entries(1, 3, 1);
  ASSERT_FALSE(log_->append(first, hard_state{1, "n1", 0}));
  auto second = entries(4, 5, 2);
  const hard_state hs{2, "n2", 4};
  ASSERT_FALSE(log_->append(second, hs));
  EXPECT_EQ(log_->last_index(), 5u);
  EXPECT_EQ(log_->last_term(), 2u);
  expect_same_state(log_->state(), hs);

  reopen();
  EXPECT_EQ(log_->last_index(), 5u);
  EXPECT_EQ(log_->last_term(), 2u);
  expect_same_state(log_->state(), hs);
  auto all = log_->read(1, 5);
  ASSERT_TRUE(all) << view(all.error()).message;
  auto want = first;
  want.insert(want.end(), second.begin(), second.end());
  expect_same_entries(*all, want);

  ASSERT_FALSE(log_->append(entries(6, 6, 3), hs)) << "appends continue after a reopen";
  EXPECT_EQ(log_->last_index(), 6u);
}

TEST_F(raft_log_test, save_persists_the_hard_state_alone) {
  ASSERT_FALSE(log_->append(entries(1, 2, 1), hard_state{1, "", 0}));
  const hard_state hs{7, "node-with-a-long-name", 2};
  ASSERT_FALSE(log_->save(hs));
  expect_same_state(log_->state(), hs);
  EXPECT_EQ(log_->last_index(), 2u);

  reopen();
  expect_same_state(log_->state(), hs);
  EXPECT_EQ(log_->last_index(), 2u);
  EXPECT_EQ(log_->last_term(), 1u);

  ASSERT_FALSE(log_->save(hard_state{8, "", 2})) << "a vote can be cleared";
  reopen();
  expect_same_state(log_->state(), hard_state{8, "", 2});
}

TEST_F(raft_log_test, append_out_of_order_is_rejected_and_writes_nothing) {
  const hard_state hs{1, "n1", 1};
  ASSERT_FALSE(log_->append(entries(1, 2, 1), hs));

  const hard_state other{9, "n9", 2};
  std::vector<std::vector<log_entry>> bad{
      entries(4, 4, 1),                          // hole before it
      entries(2, 3, 1),                          // repeats the last index
      {entry(3, 1), entry(5, 1)},                // hole inside the batch
      {entry(4, 1), entry(3, 1)},                // descending
  };
  for (auto& batch : bad) {
    SCOPED_TRACE("first index " + std::to_string(batch.front().index));
    auto err = log_->append(batch, other);
    ASSERT_TRUE(err);
    EXPECT_EQ(code_of(err), errc::internal);
    EXPECT_EQ(log_->last_index(), 2u);
    expect_same_state(log_->state(), hs);
  }

  reopen();
  EXPECT_EQ(log_->last_index(), 2u);
  expect_same_state(log_->state(), hs);
  auto tail = log_->read(3, 10);
  ASSERT_TRUE(tail);
  EXPECT_TRUE(tail->empty()) << "no entry of a rejected batch was written";
}

TEST_F(raft_log_test, read_honours_range_and_limit) {
  auto all = entries(1, 10, 1);
  ASSERT_FALSE(log_->append(all, hard_state{1, "", 0}));

  auto mid = log_->read(4, 6);
  ASSERT_TRUE(mid);
  expect_same_entries(*mid, {all.begin() + 3, all.begin() + 6});

  auto capped = log_->read(2, 10, 3);
  ASSERT_TRUE(capped);
  expect_same_entries(*capped, {all.begin() + 1, all.begin() + 4});

  auto one = log_->read(10, 10);
  ASSERT_TRUE(one);
  expect_same_entries(*one, {all.back()});

  auto past_end = log_->read(11, 20);
  ASSERT_TRUE(past_end);
  EXPECT_TRUE(past_end->empty());

  auto to_beyond = log_->read(9, 1000);
  ASSERT_TRUE(to_beyond);
  EXPECT_EQ(to_beyond->size(), 2u);
}

TEST_F(raft_log_test, read_across_a_hole_is_corrupted) {
  ASSERT_FALSE(log_->append(entries(1, 3, 1), hard_state{1, "", 0}));
  put_raw(5, entry(5, 1));  // index 4 is missing

  auto r = log_->read(1, 5);
  ASSERT_FALSE(r) << "served " << r->size() << " entries across a hole";
  EXPECT_EQ(code_of(r.error()), errc::corrupted);

  auto before_hole = log_->read(1, 3);
  ASSERT_TRUE(before_hole);
  EXPECT_EQ(before_hole->size(), 3u);
}

TEST_F(raft_log_test, read_of_an_entry_under_the_wrong_key_is_corrupted) {
  ASSERT_FALSE(log_->append(entries(1, 3, 1), hard_state{1, "", 0}));
  put_raw(2, entry(7, 1));
  auto r = log_->read(1, 3);
  ASSERT_FALSE(r);
  EXPECT_EQ(code_of(r.error()), errc::corrupted);
}

TEST_F(raft_log_test, open_rejects_a_last_entry_under_the_wrong_key) {
  ASSERT_FALSE(log_->append(entries(1, 3, 1), hard_state{1, "", 0}));
  put_raw(4, entry(9, 1));
  log_.reset();
  auto reopened = raft_log::open(*db_);
  ASSERT_FALSE(reopened);
  EXPECT_EQ(code_of(reopened.error()), errc::corrupted);
}

TEST_F(raft_log_test, open_rejects_undecodable_entries) {
  ASSERT_FALSE(log_->append(entries(1, 2, 1), hard_state{1, "", 0}));
  rocksdb::WriteBatch batch;
  batch.Put(db_->cf(column::raft_log), keys::u64(3), "\x01\x02");
  ASSERT_FALSE(db_->write(batch, true));
  log_.reset();
  auto reopened = raft_log::open(*db_);
  ASSERT_FALSE(reopened);
  EXPECT_EQ(code_of(reopened.error()), errc::corrupted);
}

}  // namespace
}  // namespace aisched::storage
