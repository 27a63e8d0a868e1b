// Tests for worker::execute_task with real processes and a loopback HTTP stub: exit codes,
// the minimal environment, the scratch directory, timeouts and cancellation killing the
// whole process group, the output tail cap, shell-injection safety of the identity fields,
// HTTP status mapping and identity headers, container without runtime, and noop.
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
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace aisched::proto {
// Failure messages name the state instead of dumping its byte.
void PrintTo(instance_state s, std::ostream* os) { *os << name_of(s); }
}  // namespace aisched::proto

namespace aisched::worker {
namespace {

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
[[maybe_unused]] ::testing::Environment* const curl_env =
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

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// Single-quotes `s` for /bin/sh (test-controlled paths only).
std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

bool process_gone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  // A killed orphan may linger as a zombie until init reaps it: that is gone too.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto close_paren = content.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < content.size() &&
         content[close_paren + 2] == 'Z';
}

/// Polls until `pid` is gone or `deadline` passes; kills it if it survived.
bool wait_gone(pid_t pid, std::chrono::milliseconds deadline = 2000ms) {
  auto until = steady::now() + deadline;
  while (steady::now() < until) {
    if (process_gone(pid)) return true;
    std::this_thread::sleep_for(20ms);
  }
  kill(pid, SIGKILL);  // do not leave it behind for the next test
  return false;
}

std::optional<pid_t> read_pid(const fs::path& file, std::chrono::milliseconds deadline = 2000ms) {
  auto until = steady::now() + deadline;
  while (steady::now() < until) {
    auto text = read_file(file);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(10ms);
  }
  return std::nullopt;
}

const cancel_fn never = [] { return false; };

/// Milliseconds in `d` (readable in failure messages, unlike a chrono duration).
int64_t ms(steady::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

class executor_test : public ::testing::Test {
 protected:
  executor_test() {
    scratch_ = tmp_.path() / "scratch";
    fs::create_directories(scratch_);
    opts_.scratch_root = scratch_.string();
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

// -- shell: exit codes and output ----------------------------------------------------

TEST_F(executor_test, exit_zero_is_success_with_output) {
  auto before = now_ms();
  auto r = run(shell("echo hello; echo oops >&2"));
  EXPECT_EQ(r.state, instance_state::success);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.error, "");
  EXPECT_NE(r.output.find("hello\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("oops\n"), std::string::npos) << r.output;  // stderr too
  EXPECT_EQ(r.instance_id, "42-1700000000000-1");
  EXPECT_GE(r.started_at, before);
  EXPECT_GE(r.finished_at, r.started_at);
}

TEST_F(executor_test, nonzero_exit_is_failed_with_that_code) {
  auto r = run(shell("echo partial; exit 3"));
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.error, "exit status 3");
  EXPECT_EQ(r.output, "partial\n");
}

TEST_F(executor_test, missing_command_is_exit_127_command_not_found) {
  auto r = run(shell("aisched-no-such-command-xyz --flag"));
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.error.find("command not found"), std::string::npos) << r.error;
  EXPECT_NE(r.output.find("not found"), std::string::npos) << r.output;  // the shell's message
}

TEST_F(executor_test, killed_by_a_signal_is_128_plus_signal) {
  auto r = run(shell("kill -TERM $$; sleep 5"));
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM);
}

TEST_F(executor_test, stdin_is_empty) {
  auto r = run(shell("wc -c"));  // would block forever if stdin were a terminal or pipe
  EXPECT_EQ(r.state, instance_state::success);
  EXPECT_EQ(r.output, "0\n");
}

TEST_F(executor_test, memory_cap_stops_a_run_that_allocates_past_it) {
  // python3 asks for 256 MiB at once: refused under a 64 MiB cap, fine without one.
  const std::string grab = "/usr/bin/python3 -c 'b = bytearray(256 * 1024 * 1024); print(len(b))'";
  auto capped = shell(grab);
  capped.memory_mb = 64;
  auto r = run(capped);
  EXPECT_EQ(r.state, instance_state::failed) << r.output;
  EXPECT_NE(r.output.find("MemoryError"), std::string::npos) << r.output;
  auto free_run = run(shell(grab));
  EXPECT_EQ(free_run.state, instance_state::success) << free_run.output;
  EXPECT_NE(free_run.output.find("268435456"), std::string::npos) << free_run.output;
}

// -- environment and scratch directory -------------------------------------------------

TEST_F(executor_test, run_sees_only_the_documented_environment) {
  ASSERT_EQ(setenv("AISCHED_TEST_LEAK", "parent-secret", 1), 0);
  auto r = run(shell("env"));
  unsetenv("AISCHED_TEST_LEAK");
  ASSERT_EQ(r.state, instance_state::success) << r.error << r.output;
  std::map<std::string, std::string> env;
  for (auto& line : lines_of(r.output)) {
    auto eq = line.find('=');
    ASSERT_NE(eq, std::string::npos) << line;
    env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  EXPECT_EQ(env.count("AISCHED_TEST_LEAK"), 0u);
  EXPECT_EQ(r.output.find("parent-secret"), std::string::npos);
  std::set<std::string> names;
  for (auto& [k, v] : env) names.insert(k);
  // PWD is set and exported by dash itself, not inherited.
  EXPECT_EQ(names, (std::set<std::string>{"PATH", "HOME", "IDEMPOTENCY_KEY", "SHARD_NO",
                                          "SHARD_TOTAL", "SCHEDULE_INSTANCE_ID", "ATTEMPT",
                                          "TRACE_ID", "TASK_ID", "PWD"}));
  EXPECT_EQ(env["PATH"], "/usr/local/bin:/usr/bin:/bin");
  EXPECT_EQ(env["IDEMPOTENCY_KEY"], "idem-abc");
  EXPECT_EQ(env["SHARD_NO"], "1");
  EXPECT_EQ(env["SHARD_TOTAL"], "4");
  EXPECT_EQ(env["SCHEDULE_INSTANCE_ID"], "42-1700000000000-1");
  EXPECT_EQ(env["ATTEMPT"], "2");
  EXPECT_EQ(env["TRACE_ID"], "trace-xyz");
  EXPECT_EQ(env["TASK_ID"], "42");
  EXPECT_EQ(env["HOME"], env["PWD"]);
  EXPECT_EQ(fs::path(env["HOME"]).parent_path(), scratch_);
}

TEST_F(executor_test, runs_in_a_scratch_dir_that_is_removed_afterwards) {
  auto r = run(shell("pwd -P; echo \"$HOME\"; echo data > made-here; ls"));
  ASSERT_EQ(r.state, instance_state::success) << r.error << r.output;
  auto lines = lines_of(r.output);
  ASSERT_EQ(lines.size(), 3u) << r.output;
  fs::path cwd = lines[0];
  EXPECT_EQ(cwd.parent_path(), scratch_);
  EXPECT_EQ(lines[1], cwd.string());  // HOME is the scratch dir
  EXPECT_EQ(lines[2], "made-here");   // it started empty
  EXPECT_FALSE(fs::exists(cwd));
  EXPECT_TRUE(fs::is_empty(scratch_));
}

TEST_F(executor_test, scratch_dir_is_removed_after_a_failed_run) {
  auto r = run(shell("pwd -P; mkdir -p a/b/c && touch a/b/c/f; exit 9"));
  EXPECT_EQ(r.exit_code, 9);
  auto lines = lines_of(r.output);
  ASSERT_FALSE(lines.empty());
  EXPECT_FALSE(fs::exists(lines[0]));
  EXPECT_TRUE(fs::is_empty(scratch_));
}

TEST_F(executor_test, scratch_dir_stays_below_the_root_for_any_instance_id) {
  for (std::string id : {"../escaped", "nested/dir"}) {
    auto req = shell("pwd -P");
    req.instance_id = id;
    auto r = run(req);
    ASSERT_EQ(r.state, instance_state::success) << id << ": " << r.error;
    auto cwd = fs::path(lines_of(r.output).at(0));
    EXPECT_EQ(cwd.parent_path(), scratch_) << id << " ran in " << cwd;
    EXPECT_TRUE(fs::is_empty(scratch_)) << id << " left directories behind";
    EXPECT_FALSE(fs::exists(tmp_.path() / "escaped-2")) << id;
  }
}

TEST_F(executor_test, identity_fields_never_reach_a_shell) {
  auto marker = [&](int i) { return tmp_.path() / ("injected-" + std::to_string(i)); };
  auto req = shell("printf '%s\\n' \"$SCHEDULE_INSTANCE_ID\" \"$TRACE_ID\" \"$IDEMPOTENCY_KEY\"");
  req.instance_id = "inst$(touch " + marker(1).string() + ")";
  req.trace_id = "t; touch " + marker(2).string() + "; echo";
  req.idempotency_key = "`touch " + marker(3).string() + "` && touch " + marker(4).string();
  req.http.url = "$(touch " + marker(5).string() + ")";
  req.image = "; touch " + marker(6).string();
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error << r.output;
  // The values arrive verbatim, as data.
  EXPECT_EQ(lines_of(r.output),
            (std::vector<std::string>{req.instance_id, req.trace_id, req.idempotency_key}));
  for (int i = 1; i <= 6; ++i) EXPECT_FALSE(fs::exists(marker(i))) << marker(i);
  // The '/' in the hostile id nests directories below the scratch root; clean those up
  // here (see scratch_dir_stays_below_the_root_for_any_instance_id).
  std::error_code ec;
  for (auto& e : fs::directory_iterator(scratch_, ec)) fs::remove_all(e.path(), ec);
}

// -- timeout and cancellation ----------------------------------------------------------

TEST_F(executor_test, timeout_kills_the_whole_process_group) {
  auto bg_pid = tmp_.path() / "bg.pid";
  auto orphan_pid = tmp_.path() / "orphan.pid";
  // A background child of the shell, and an orphan whose parent shell has exited.
  auto req = shell("sh -c 'sleep 30 & echo $! > " + orphan_pid.string() +
                   "'; sleep 30 & echo $! > " + quoted(bg_pid) + "; sleep 30; wait");
  req.timeout = 300;
  auto start = steady::now();
  auto r = run(req);
  auto took = steady::now() - start;
  EXPECT_EQ(r.state, instance_state::timed_out);
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_EQ(r.error, "timed out after 300ms");
  EXPECT_GE(ms(took), 250);
  EXPECT_LT(ms(took), 5000);
  for (auto& file : {bg_pid, orphan_pid}) {
    auto pid = read_pid(file, 100ms);
    ASSERT_TRUE(pid) << "no pid in " << file;
    EXPECT_TRUE(wait_gone(*pid)) << "process " << *pid << " from " << file << " survived";
  }
}

TEST_F(executor_test, timeout_applies_after_the_command_closes_its_output) {
  auto req = shell("exec >/dev/null 2>&1; sleep 3");
  req.timeout = 300;
  auto start = steady::now();
  auto r = run(req);
  auto took = steady::now() - start;
  EXPECT_EQ(r.state, instance_state::timed_out);
  EXPECT_LT(ms(took), 2000);
}

TEST_F(executor_test, cancel_kills_the_run_quickly) {
  auto bg_pid = tmp_.path() / "bg.pid";
  auto start = steady::now();
  auto cancel_at = start + 200ms;
  auto r = run(shell("sleep 30 & echo $! > " + quoted(bg_pid) + "; sleep 30"),
               [&] { return steady::now() >= cancel_at; });
  auto took = steady::now() - start;
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.error, "cancelled");
  EXPECT_GE(ms(took), 200);
  EXPECT_LT(ms(took), 3000);
  auto pid = read_pid(bg_pid, 100ms);
  ASSERT_TRUE(pid);
  EXPECT_TRUE(wait_gone(*pid)) << "background child " << *pid << " survived the cancel";
}

TEST_F(executor_test, cancel_after_the_command_closes_its_output) {
  auto start = steady::now();
  auto r =
      run(shell("exec >/dev/null 2>&1; sleep 3"), [&] { return steady::now() >= start + 200ms; });
  EXPECT_EQ(r.error, "cancelled");
  EXPECT_LT(ms(steady::now() - start), 2000);
}

// -- output -------------------------------------------------------------------------

std::string numbered_lines_command(int n) {
  return "i=0; while [ $i -lt " + std::to_string(n) +
         " ]; do printf 'line %05d 0123456789012345678901234567890123456789\\n' $i; "
         "i=$((i+1)); done";
}

std::string numbered_lines(int n) {
  std::string out;
  char buf[64];
  for (int i = 0; i < n; ++i) {
    snprintf(buf, sizeof buf, "line %05d 0123456789012345678901234567890123456789\n", i);
    out += buf;
  }
  return out;
}

TEST_F(executor_test, output_cap_keeps_the_last_bytes) {
  opts_.output_cap = 1024;
  const int n = 2000;  // 52 bytes a line: 104 000 bytes
  auto expected = numbered_lines(n);
  ASSERT_GT(expected.size(), 100'000u);
  std::string streamed;
  auto r = run(shell(numbered_lines_command(n)), never,
               [&](std::string_view chunk) { streamed.append(chunk); });
  ASSERT_EQ(r.state, instance_state::success) << r.error;
  ASSERT_EQ(r.output.size(), 1024u);
  EXPECT_EQ(r.output, expected.substr(expected.size() - 1024));
  EXPECT_EQ(r.output.substr(r.output.size() - 52),
            "line 01999 0123456789012345678901234567890123456789\n");
  EXPECT_EQ(streamed, expected);  // the output callback sees everything, uncapped
}

TEST_F(executor_test, output_below_the_cap_is_kept_whole) {
  opts_.output_cap = 1024;
  auto r = run(shell(numbered_lines_command(10)));
  EXPECT_EQ(r.output, numbered_lines(10));
}

// -- http ---------------------------------------------------------------------------

/// A one-thread HTTP/1.1 server on 127.0.0.1 (port chosen by the kernel) answering every
/// request with `status` and `body`, or, with `hang`, never answering. Records requests.
class http_stub {
 public:
  http_stub(int status, std::string body, bool hang = false)
      : status_(status), body_(std::move(body)), hang_(hang) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd_, 8) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      close(fd_);
      throw std::runtime_error("bind/listen failed");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }

  ~http_stub() {
    stop_ = true;
    thread_.join();
    for (int c : held_) close(c);
    close(fd_);
  }

  http_stub(const http_stub&) = delete;
  http_stub& operator=(const http_stub&) = delete;

  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> guard(mtx_);
    return requests_;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      auto request = read_request(c);
      {
        std::lock_guard<std::mutex> guard(mtx_);
        requests_.push_back(request);
      }
      if (hang_) {
        held_.push_back(c);  // closed by the destructor
        continue;
      }
      std::string response = "HTTP/1.1 " + std::to_string(status_) +
                             " Stub\r\nContent-Length: " + std::to_string(body_.size()) +
                             "\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n" + body_;
      for (size_t sent = 0; sent < response.size();) {
        auto n = send(c, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
      }
      close(c);
    }
  }

  /// Reads the head and a Content-Length body (2 s at most).
  std::string read_request(int c) {
    std::string data;
    auto until = steady::now() + 2s;
    size_t want = std::string::npos;
    char buf[4096];
    while (steady::now() < until && data.size() < want) {
      pollfd p{c, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      auto n = recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      data.append(buf, static_cast<size_t>(n));
      auto head_end = data.find("\r\n\r\n");
      if (head_end != std::string::npos && want == std::string::npos) {
        size_t body = 0;
        auto lower = data.substr(0, head_end);
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        auto cl = lower.find("\r\ncontent-length:");
        if (cl != std::string::npos) body = std::stoul(lower.substr(cl + 17));
        want = head_end + 4 + body;
      }
    }
    return data;
  }

  int status_;
  std::string body_;
  bool hang_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<int> held_;  // serve thread only
  mutable std::mutex mtx_;
  std::vector<std::string> requests_;
};

/// The value of header `name` (case-insensitive) in a raw request, or nullopt.
std::optional<std::string> header_of(const std::string& request, const std::string& name) {
  for (auto& line : lines_of(request)) {
    auto colon = line.find(':');
    if (colon == std::string::npos || colon != name.size()) continue;
    if (!std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        }))
      continue;
    auto v = line.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ')) v.erase(0, 1);
    while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) v.pop_back();
    return v;
  }
  return std::nullopt;
}

TEST_F(executor_test, http_2xx_is_success_with_status_and_body) {
  http_stub server(200, "all good");
  auto req = http(server.url());
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  EXPECT_EQ(r.exit_code, 200);
  EXPECT_EQ(r.output, "all good");
  EXPECT_EQ(r.error, "");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].rfind("GET /hook HTTP/1.1\r\n", 0), 0u) << server.requests()[0];
}

TEST_F(executor_test, http_204_is_success) {
  http_stub server(204, "");
  auto req = http(server.url());
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  EXPECT_EQ(r.exit_code, 204);
}

TEST_F(executor_test, http_5xx_and_4xx_are_failed_with_the_status) {
  for (int status : {500, 404}) {
    http_stub server(status, "broken");
    auto req = http(server.url());
    auto r = run(req);
    EXPECT_EQ(r.state, instance_state::failed) << status;
    EXPECT_EQ(r.exit_code, status);
    EXPECT_EQ(r.error, "HTTP status " + std::to_string(status));
    EXPECT_EQ(r.output, "broken");
  }
}

TEST_F(executor_test, http_sends_method_body_headers_and_run_identity) {
  http_stub server(201, "created");
  auto req = http(server.url("/jobs?x=1"));
  req.http.method = "POST";
  req.http.body = R"({"a":1})";
  req.http.headers = {{"Content-Type", "application/json"}, {"X-Custom", "yes"}};
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  EXPECT_EQ(r.exit_code, 201);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  const auto& got = reqs[0];
  EXPECT_EQ(got.rfind("POST /jobs?x=1 HTTP/1.1\r\n", 0), 0u) << got;
  EXPECT_EQ(got.substr(got.find("\r\n\r\n") + 4), R"({"a":1})");
  EXPECT_EQ(header_of(got, "Content-Type"), "application/json");
  EXPECT_EQ(header_of(got, "X-Custom"), "yes");
  EXPECT_EQ(header_of(got, "Idempotency-Key"), "idem-abc");
  EXPECT_EQ(header_of(got, "Shard-No"), "1");
  EXPECT_EQ(header_of(got, "Shard-Total"), "4");
  EXPECT_EQ(header_of(got, "Schedule-Instance-Id"), "42-1700000000000-1");
  EXPECT_EQ(header_of(got, "Attempt"), "2");
  EXPECT_EQ(header_of(got, "Trace-Id"), "trace-xyz");
  EXPECT_EQ(header_of(got, "Task-Id"), "42");
  EXPECT_FALSE(header_of(got, "Path")) << "PATH must not travel as a header";
  EXPECT_FALSE(header_of(got, "Home")) << "HOME must not travel as a header";
}

TEST_F(executor_test, http_connection_refused_is_failed_with_the_curl_error) {
  // A bound socket that does not listen: connecting to it is refused, and no one else
  // can take the port meanwhile.
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(s, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto req = http("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/");
  auto start = steady::now();
  auto r = run(req);
  close(s);
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.error, curl_easy_strerror(CURLE_COULDNT_CONNECT));
  EXPECT_LT(ms(steady::now() - start), 5000);
}

TEST_F(executor_test, http_without_answer_times_out) {
  http_stub server(200, "", /*hang=*/true);
  auto req = http(server.url());
  req.timeout = 300;
  auto start = steady::now();
  auto r = run(req);
  auto took = steady::now() - start;
  EXPECT_EQ(r.state, instance_state::timed_out) << r.error;
  EXPECT_EQ(r.error, "timed out after 300ms");
  EXPECT_GE(ms(took), 250);
  EXPECT_LT(ms(took), 5000);
}

TEST_F(executor_test, http_cancel_aborts_the_request) {
  http_stub server(200, "", /*hang=*/true);
  auto req = http(server.url());
  auto start = steady::now();
  auto r = run(req, [&] { return steady::now() >= start + 200ms; });
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.error, "cancelled");
  EXPECT_LT(ms(steady::now() - start), 5000);
}

// -- container and noop ------------------------------------------------------------

TEST_F(executor_test, container_without_runtime_fails_with_127) {
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"})
    for (const char* name : {"podman", "docker"}) {
      auto p = std::string(dir) + "/" + name;
      if (access(p.c_str(), X_OK) == 0) GTEST_SKIP() << "a container runtime exists: " << p;
    }
  auto req = shell("echo hi");
  req.kind = task_kind::container;
  req.image = "alpine:3";
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.error.find("docker or podman"), std::string::npos) << r.error;
  EXPECT_TRUE(fs::is_empty(scratch_));
}

TEST_F(executor_test, noop_succeeds_at_once_without_running_anything) {
  auto marker = tmp_.path() / "noop-ran";
  auto req = shell("touch " + quoted(marker));
  req.kind = task_kind::noop;
  auto start = steady::now();
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "");
  EXPECT_EQ(r.instance_id, "42-1700000000000-1");
  EXPECT_LT(ms(steady::now() - start), 500);
  EXPECT_FALSE(fs::exists(marker));
}

TEST(run_environment, lists_path_home_and_the_run_identity) {
  execute_request req;
  req.instance_id = "9-1000-3";
  req.task_id = 9;
  req.attempt = 1;
  req.shard = 3;
  req.shards = 8;
  req.idempotency_key = "k";
  req.trace_id = "t";
  EXPECT_EQ(run_environment(req, "/scratch/x"),
            (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/scratch/x",
                                      "IDEMPOTENCY_KEY=k", "SHARD_NO=3", "SHARD_TOTAL=8",
                                      "SCHEDULE_INSTANCE_ID=9-1000-3", "ATTEMPT=1", "TRACE_ID=t",
                                      "TASK_ID=9"}));
}

}  // namespace
}  // namespace aisched::worker
