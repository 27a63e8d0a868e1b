// The fixture shared by the worker::executor tests: a scratch root per test, the
// executor, curl's global setup, and helpers that read files and wait for pids.
#pragma once

#include "actors/worker/executor.hpp"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace aisched::proto {
inline void PrintTo(instance_state s, std::ostream* os) { *os << name_of(s); }
}  // namespace aisched::proto

namespace aisched::worker {
namespace testing_support {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using proto::execute_request;
using proto::instance_state;
using proto::run_result;
using proto::task_kind;
using steady = std::chrono::steady_clock;

/// libcurl must be initialised once per process before any thread uses it.
class curl_environment : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_EQ(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK); }
  void TearDown() override { curl_global_cleanup(); }
};
[[maybe_unused]] inline ::testing::Environment* const curl_env =
    ::testing::AddGlobalTestEnvironment(new curl_environment);

// -- helpers -------------------------------------------------------------------------

/// A fresh directory under /tmp, removed with everything in it on destruction.
class temp_dir {
 public:
  temp_dir() {
    char tmpl[] = "/tmp/aisched-executor-test-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = fs::canonical(tmpl);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// Single-quotes `s` for /bin/sh (test-controlled paths only).
inline std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

inline bool process_gone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  // A killed orphan may linger as a zombie until init reaps it: that is gone too.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto close_paren = content.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < content.size() &&
         content[close_paren + 2] == 'Z';
}

/// Polls until `pid` is gone or `deadline` passes; kills it if it survived.
inline bool wait_gone(pid_t pid, std::chrono::milliseconds deadline = 2000ms) {
  auto until = steady::now() + deadline;
  while (steady::now() < until) {
    if (process_gone(pid)) return true;
    std::this_thread::sleep_for(20ms);
  }
  kill(pid, SIGKILL);  // do not leave it behind for the next test
  return false;
}

inline std::optional<pid_t> read_pid(const fs::path& file, std::chrono::milliseconds deadline = 2000ms) {
  auto until = steady::now() + deadline;
  while (steady::now() < until) {
    auto text = read_file(file);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(10ms);
  }
  return std::nullopt;
}

/// A `sleep` argument no other process has ("30.<random digits>"): processes of a
/// run are found by it in /proc, since pids inside the run's namespace (`$!`) are
/// not the node's.
inline std::string unique_sleep_arg() {
  static std::atomic<int> counter{0};
  return "30." + std::to_string(100000 + std::random_device{}() % 800000) +
         std::to_string(counter++);
}

/// Pids of live (non-zombie) processes whose argv contains `marker` as an argument.
inline std::vector<pid_t> pids_with_arg(const std::string& marker) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto pid = static_cast<pid_t>(std::stol(name));
    auto cmdline = read_file(e.path() / "cmdline");
    bool has = false;
    for (size_t i = 0; i < cmdline.size();) {
      auto end = cmdline.find('\0', i);
      if (end == std::string::npos) end = cmdline.size();
      if (cmdline.compare(i, end - i, marker) == 0) has = true;
      i = end + 1;
    }
    if (has && !process_gone(pid)) out.push_back(pid);
  }
  return out;
}

/// Polls until no process carries `marker`; SIGKILLs the survivors and returns false
/// if some are still there after `deadline`.
inline bool wait_marker_gone(const std::string& marker, std::chrono::milliseconds deadline = 2000ms) {
  auto until = steady::now() + deadline;
  while (steady::now() < until) {
    if (pids_with_arg(marker).empty()) return true;
    std::this_thread::sleep_for(20ms);
  }
  for (auto pid : pids_with_arg(marker)) kill(pid, SIGKILL);  // not left for the next test
  return false;
}

inline const cancel_fn never = [] { return false; };

/// Milliseconds in `d` (readable in failure messages, unlike a chrono duration).
inline int64_t ms(steady::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

class executor_test : public ::testing::Test {
 protected:
  executor_test() {
    scratch_ = tmp_.path() / "scratch";
    fs::create_directories(scratch_);
    opts_.scratch_root = scratch_.string();
    opts_.supervisor = AISCHED_SUPERVISOR_PATH;
  }

  ~executor_test() override {
    // Whatever the outcome, no run leaves its scratch directory behind.
    std::error_code ec;
    if (fs::exists(scratch_, ec)) {
      EXPECT_TRUE(fs::is_empty(scratch_, ec)) << "scratch root not empty after the test";
    }
  }

  static execute_request shell(std::string command) {
    execute_request req;
    req.instance_id = "42-1700000000000-1";
    req.task_id = 42;
    req.kind = task_kind::shell;
    req.command = std::move(command);
    req.attempt = 2;
    req.shard = 1;
    req.shards = 4;
    req.idempotency_key = "idem-abc";
    req.trace_id = "trace-xyz";
    req.timeout = 10'000;
    return req;
  }

  static execute_request http(std::string url) {
    auto req = shell("");
    req.kind = task_kind::http;
    req.http.url = std::move(url);
    return req;
  }

  run_result run(const execute_request& req, const cancel_fn& cancelled = never,
                 const output_fn& on_output = {}) {
    return execute_task(req, opts_, cancelled, on_output);
  }

  temp_dir tmp_;
  fs::path scratch_;
  exec_options opts_;
};

}  // namespace testing_support
}  // namespace aisched::worker
