// The data directory's format stamp (storage/format_version.hpp, issue 44):
// parsed strictly, written durably, and a newer format refused with nothing in
// the directory changed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "proto/errors.hpp"
#include "storage/format_version.hpp"
#include "support/test_dir.hpp"

namespace aisched::storage {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

/// A fresh directory, removed after the test.
struct scratch {
  fs::path path = test::make_test_dir("aisched-format-");
  ~scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

TEST(format_version, a_stamp_reads_back_and_unknown_lines_are_ignored) {
  auto s = parse_format(format_text({0, "0.1.0"}));
  ASSERT_TRUE(s) << to_string(view(s.error()).code);
  EXPECT_EQ(s->version, 0u);
  EXPECT_EQ(s->written_by, "0.1.0");
  auto later = parse_format("aisched-format 3\nwritten-by 2.0.0\nfeatures a,b\n");
  ASSERT_TRUE(later);
  EXPECT_EQ(later->version, 3u);
}

TEST(format_version, a_damaged_stamp_is_corrupted_not_format_zero) {
  for (auto text : {"", "written-by 0.1.0\n", "aisched-format\n", "aisched-format x1\n",
                    "aisched-format 99999999999\n", "aisched-format -1\n"}) {
    auto s = parse_format(text);
    ASSERT_FALSE(s) << "accepted: " << text;
    EXPECT_EQ(view(s.error()).code, errc::corrupted) << text;
  }
}

TEST(format_version, a_directory_without_a_stamp_is_format_zero_and_the_check_writes_nothing) {
  scratch dir;
  auto s = check_format(dir.path.string(), "0.1.0");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->version, 0u);
  EXPECT_FALSE(fs::exists(dir.path / "FORMAT"));
  write_file(dir.path / "FORMAT", format_text({current_format, "0.1.0"}));
  auto again = check_format(dir.path.string(), "0.2.0");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->version, current_format);
  EXPECT_EQ(again->written_by, "0.1.0");
}

TEST(format_version, a_stamp_is_written_durably_in_place) {
  scratch dir;
  ASSERT_FALSE(write_format(dir.path.string(), {current_format, "0.2.0"}));
  EXPECT_EQ(read_file(dir.path / "FORMAT"), format_text({current_format, "0.2.0"}));
  EXPECT_FALSE(fs::exists(dir.path / "FORMAT.tmp"));
}

TEST(format_version, a_newer_format_is_refused_and_nothing_changes) {
  scratch dir;
  auto stamp = dir.path / "FORMAT";
  auto text = "aisched-format " + std::to_string(current_format + 1) + "\nwritten-by 9.9.9\n";
  write_file(stamp, text);
  auto got = check_format(dir.path.string(), "0.1.0");
  ASSERT_FALSE(got);
  auto v = view(got.error());
  EXPECT_EQ(v.code, errc::invalid_argument);
  EXPECT_NE(v.message.find("format " + std::to_string(current_format + 1)), std::string::npos)
      << v.message;
  EXPECT_NE(v.message.find("format " + std::to_string(current_format)), std::string::npos)
      << v.message;
  EXPECT_NE(v.message.find("9.9.9"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("0.1.0"), std::string::npos) << v.message;
  EXPECT_EQ(read_file(stamp), text);
}

TEST(format_version, a_damaged_stamp_stops_the_check) {
  scratch dir;
  write_file(dir.path / "FORMAT", "garbage\n");
  auto got = check_format(dir.path.string(), "0.1.0");
  ASSERT_FALSE(got);
  EXPECT_EQ(view(got.error()).code, errc::corrupted);
  EXPECT_NE(view(got.error()).message.find("FORMAT"), std::string::npos)
      << view(got.error()).message;
}

}  // namespace
}  // namespace aisched::storage
