// Tests for the JSON-lines logger (common/log.cpp): lines go to stderr through a
// buffer, so a busy node does not pay a write(2) a line. A warn or error line is
// written at once (with the lines before it, in order); an info line follows
// within the flush period; nothing is lost, not even at exit.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "common/log.hpp"

namespace aisched::log {
namespace {

namespace fs = std::filesystem;

/// Points fd 2 at a fresh file for the test's life, then back.
class stderr_to_file {
 public:
  stderr_to_file() {
    auto name = "aisched-log-test-" + std::to_string(::getpid());
    path_ = (fs::temp_directory_path() / name).string();
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    saved_ = ::dup(2);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~stderr_to_file() {
    ::dup2(saved_, 2);
    ::close(saved_);
    std::remove(path_.c_str());
  }
  std::string text() const {
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  /// The file once it holds `needle`, polled until `deadline` passes ("" then).
  std::string await(const std::string& needle, std::chrono::milliseconds deadline) const {
    auto until = std::chrono::steady_clock::now() + deadline;
    for (;;) {
      auto t = text();
      if (t.find(needle) != std::string::npos) return t;
      if (std::chrono::steady_clock::now() > until) return {};
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  std::string path_;
  int saved_ = -1;
};

TEST(log, a_warn_line_is_written_at_once_after_the_lines_before_it) {
  init("t1", level::info);
  stderr_to_file err;
  info("first", {{"k", "1"}});
  warn("second");
  auto t = err.text();  // no waiting: the warn line flushed both
  auto a = t.find("\"msg\":\"first\"");
  auto b = t.find("\"msg\":\"second\"");
  ASSERT_NE(a, std::string::npos) << t;
  ASSERT_NE(b, std::string::npos) << t;
  EXPECT_LT(a, b);
  EXPECT_NE(t.find("\"level\":\"warn\""), std::string::npos);
}

TEST(log, info_lines_follow_within_the_flush_period_all_of_them_in_order) {
  init("t2", level::info);
  stderr_to_file err;
  constexpr int n = 20'000;  // more than one buffer's worth
  for (int i = 0; i < n; ++i) info("line", {{"i", std::to_string(i)}});
  auto t = err.await("\"i\":\"" + std::to_string(n - 1) + "\"", std::chrono::seconds(5));
  ASSERT_FALSE(t.empty()) << "the last info line never arrived";
  size_t at = 0;
  for (int i = 0; i < n; ++i) {
    auto next = t.find("\"i\":\"" + std::to_string(i) + "\"", at);
    ASSERT_NE(next, std::string::npos) << "line " << i << " lost or out of order";
    at = next;
  }
}

TEST(log, lines_below_the_level_are_not_written) {
  init("t3", level::warn);
  stderr_to_file err;
  info("quiet");
  error("loud");
  auto t = err.text();
  EXPECT_EQ(t.find("quiet"), std::string::npos);
  EXPECT_NE(t.find("loud"), std::string::npos);
  init("t3", level::info);
}

TEST(log_death, an_info_line_written_just_before_exit_is_not_lost) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: its own logger
  EXPECT_EXIT(
      {
        init("t4", level::info);
        info("last words");
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "last words");
}

}  // namespace
}  // namespace aisched::log
