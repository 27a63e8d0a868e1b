// aisched-chaos's WAL damage (tools/chaos/wal_damage): the newest write-ahead
// log of a data dir, 64 bytes XORed at its middle, skipped with a reason when
// there is none or it is too small.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tools/chaos/wal_damage.hpp"

using aisched::chaos::damage_newest_wal;
namespace fs = std::filesystem;

namespace {

/// A temporary directory, removed with everything in it.
struct temp_dir {
  temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "chaos-wal-XXXXXX").string();
    path = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~temp_dir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
  std::string path;
};

/// Writes `size` bytes to `path`, byte i being i % 251.
void write_file(const std::string& path, size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i % 251);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(size));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(chaos_wal_damage, xors_64_bytes_in_the_middle_of_the_newest_log_only) {
  temp_dir dir;
  ASSERT_FALSE(dir.path.empty());
  write_file(dir.path + "/000009.log", 20000);   // older, larger
  write_file(dir.path + "/000012.log", 10000);   // the newest
  write_file(dir.path + "/MANIFEST-000011", 5000);
  auto before = read_file(dir.path + "/000012.log");
  auto older = read_file(dir.path + "/000009.log");

  auto d = damage_newest_wal(dir.path, 4096);
  ASSERT_TRUE(d.skipped.empty()) << d.skipped;
  EXPECT_EQ(fs::path(d.file).filename().string(), "000012.log");
  EXPECT_EQ(d.size, 10000u);
  EXPECT_EQ(d.offset, 5000u);
  auto after = read_file(dir.path + "/000012.log");
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    bool damaged = i >= 5000 && i < 5064;
    auto expected = damaged ? static_cast<char>(before[i] ^ 0x5a) : before[i];
    ASSERT_EQ(after[i], expected) << "byte " << i;
  }
  EXPECT_EQ(read_file(dir.path + "/000009.log"), older);
  // A second call puts the bytes back.
  damage_newest_wal(dir.path, 4096);
  EXPECT_EQ(read_file(dir.path + "/000012.log"), before);
}

TEST(chaos_wal_damage, a_small_newest_log_is_skipped_with_its_size) {
  temp_dir dir;
  ASSERT_FALSE(dir.path.empty());
  write_file(dir.path + "/000003.log", 20000);
  write_file(dir.path + "/000004.log", 1000);
  auto before = read_file(dir.path + "/000004.log");
  auto d = damage_newest_wal(dir.path);
  EXPECT_TRUE(d.file.empty());
  EXPECT_NE(d.skipped.find("000004.log"), std::string::npos) << d.skipped;
  EXPECT_NE(d.skipped.find("1000 bytes"), std::string::npos) << d.skipped;
  EXPECT_EQ(read_file(dir.path + "/000004.log"), before);
}

TEST(chaos_wal_damage, no_log_is_skipped) {
  temp_dir dir;
  ASSERT_FALSE(dir.path.empty());
  write_file(dir.path + "/CURRENT", 16);
  write_file(dir.path + "/worker.log", 9000);  // not a numbered RocksDB file
  auto d = damage_newest_wal(dir.path);
  EXPECT_TRUE(d.file.empty());
  EXPECT_NE(d.skipped.find("no write-ahead log"), std::string::npos) << d.skipped;
  EXPECT_FALSE(damage_newest_wal(dir.path + "/absent").skipped.empty());
}

}  // namespace
