// A fresh, uniquely named directory for one test's RocksDB.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

namespace aisched::test {

/// A new directory named after `prefix` and the running test ("" if none can be
/// made). RocksDB syncs on open and on synced writes; on a busy disk that
/// dominates the runtime, so tmpfs is preferred unless TMPDIR says otherwise
/// (no test that uses it simulates power loss).
inline std::filesystem::path make_test_dir(const std::string& prefix) {
  namespace fs = std::filesystem;
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto name = prefix + (info ? info->name() : "setup") + "-" + std::to_string(::getpid()) + "-" +
              std::to_string(counter++) + "-" + std::to_string(std::random_device{}());
  // A parameterised test is named "name/3": one directory, not two (the
  // caller removes what it was given, and the parent would stay behind).
  std::replace(name.begin(), name.end(), '/', '_');
  std::vector<fs::path> bases;
  if (!std::getenv("TMPDIR")) bases.emplace_back("/dev/shm");
  bases.push_back(fs::temp_directory_path());
  for (const auto& base : bases) {
    std::error_code ec;
    if (fs::create_directories(base / name, ec)) return base / name;
  }
  return {};
}

}  // namespace aisched::test
