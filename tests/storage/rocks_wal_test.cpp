// The write-ahead log of the node's RocksDB stays bounded (rocks::open_options
// max_wal_bytes): a column family written once and never again must not keep
// every log file written after it. Without the bound, ten minutes of runs at
// full rate grew the data dir by 1 GB of log files (BENCHMARKS.md "Memory
// under load"). Real RocksDB in a temporary directory.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <rocksdb/write_batch.h>

#include "storage/keys.hpp"
#include "storage/rocks.hpp"
#include "support/test_dir.hpp"

namespace aisched::storage {
namespace {

uint64_t wal_bytes(const std::filesystem::path& dir) {
  uint64_t total = 0;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".log") total += e.file_size();
  return total;
}

struct removed_after {
  std::filesystem::path dir;
  ~removed_after() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

TEST(rocks_wal, a_family_written_once_does_not_keep_the_log_growing) {
  auto dir = test::make_test_dir("rocks-wal-");
  ASSERT_FALSE(dir.empty());
  removed_after cleanup{dir};
  open_options opts;
  opts.max_wal_bytes = 4 << 20;
  auto db = rocks::open(dir.string(), opts);
  ASSERT_TRUE(db) << to_string(db.error());
  rocksdb::WriteBatch once;
  once.Put((*db)->cf(column::meta), "written-once", "1");
  ASSERT_FALSE((*db)->write(once, false));
  // 96 MiB into one family, 1 MiB a batch: three of its 32 MiB memtables.
  const std::string value(1024, 'x');
  for (uint64_t b = 0; b < 96; ++b) {
    rocksdb::WriteBatch batch;
    for (uint64_t i = 0; i < 1024; ++i)
      batch.Put((*db)->cf(column::instances), keys::u64(b * 1024 + i), value);
    ASSERT_FALSE((*db)->write(batch, false));
  }
  // Obsolete log files go after a background flush: poll with a deadline.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (wal_bytes(dir) > (16u << 20) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LE(wal_bytes(dir), 16u << 20) << "log files kept alive by the family written once";
  auto once_read = (*db)->get(column::meta, "written-once");
  ASSERT_TRUE(once_read);
  EXPECT_EQ(once_read->value_or(""), "1");
}

}  // namespace
}  // namespace aisched::storage
