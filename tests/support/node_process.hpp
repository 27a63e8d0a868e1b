// Test harness: starts a real `aisched` process on free loopback ports with a
// temporary data directory, waits until it serves HTTP, and always cleans up
// (kills the process it started, by pid, and removes the directory).
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <sys/types.h>

namespace aisched::test {

/// A temporary directory removed on destruction.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class node_process {
 public:
  /// Starts `aisched --data-dir <data_dir> --http-addr 127.0.0.1:0 --cluster-addr
  /// <cluster_addr>` plus `extra_args`, and waits (up to `timeout`) for its "http
  /// listening" log line. `--cluster-addr` may be given once only, so a caller that
  /// needs a fixed cluster port (a Raft member listed in `--peers`, a restart on the
  /// same port) passes it here, not in `extra_args`. The log goes to
  /// `<data_dir>.log`, appended across restarts on the same data dir.
  /// Fails the current test (ADD_FAILURE) if it does not come up.
  node_process(std::string data_dir, std::vector<std::string> extra_args = {},
               std::chrono::milliseconds timeout = std::chrono::seconds(20),
               std::string cluster_addr = "127.0.0.1:0");
  ~node_process();  // SIGKILLs the process if it still runs

  bool running() const { return pid_ > 0; }
  uint16_t http_port() const { return http_port_; }
  pid_t pid() const { return pid_; }

  /// Sends `sig` and waits for the process to exit; returns its exit status
  /// (as from waitpid) or -1 if it did not exit within `timeout`.
  int stop(int sig, std::chrono::milliseconds timeout = std::chrono::seconds(20));

  /// The process's log output so far (stdout and stderr).
  std::string log() const;

 private:
  std::string data_dir_;
  std::string log_path_;
  pid_t pid_ = -1;
  uint16_t http_port_ = 0;
};

/// Any child process (an `aisched` worker node, an external worker script …):
/// started with `args` (args[0] is the program's path; no PATH search), its stdout
/// and stderr appended to `log_path`. It never outlives the test binary
/// (PR_SET_PDEATHSIG) and is SIGKILLed on destruction if it still runs.
/// Not thread-safe; use it from the test's thread.
class child_process {
 public:
  child_process(std::vector<std::string> args, std::string log_path);
  ~child_process();  // SIGKILLs the process if it still runs
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  /// Whether the process runs (reaps it if it has exited).
  bool running();
  pid_t pid() const { return pid_; }

  /// Sends `sig` and waits for the process to exit; returns its exit status
  /// (as from waitpid) or -1 if it did not exit within `timeout` (it is then SIGKILLed).
  int stop(int sig, std::chrono::milliseconds timeout = std::chrono::seconds(20));

  /// The process's log output so far (stdout and stderr).
  std::string log() const;

  /// Waits (up to `timeout`) until the log written since `from` (a byte offset,
  /// e.g. `log().size()` taken earlier) matches the ECMAScript regex `pattern`;
  /// returns its first capture group (the whole match without one), or "" if it
  /// never matched or the process exited first.
  std::string await_log(const std::string& pattern,
                        std::chrono::milliseconds timeout = std::chrono::seconds(20),
                        size_t from = 0);

 private:
  std::string log_path_;
  pid_t pid_ = -1;
};

/// Sends SIGSTOP to `pid` and waits (up to `timeout`) until every one of its
/// threads is stopped; false if they were not. kill() returns before a group stop
/// completes: a thread of a loaded process can go on running (and answering its
/// peers) for seconds after it.
bool freeze(pid_t pid, std::chrono::milliseconds timeout = std::chrono::seconds(10));

struct command_result {
  int exit_code = -1;  // -1: killed by a signal or by the timeout
  std::string out;     // stdout
  std::string err;     // stderr
};

/// Runs `args` (args[0] is the program's path) to completion with `input` on its
/// stdin, capturing stdout and stderr separately. A process still running after
/// `timeout` is SIGKILLed and fails the current test.
command_result run_command(const std::vector<std::string>& args,
                           std::chrono::milliseconds timeout = std::chrono::seconds(10),
                           const std::string& input = "");

struct http_result {
  unsigned status = 0;  // 0 when the request could not be made
  std::string body;
  std::string content_type;  // the Content-Type header of the answer
  std::map<std::string, std::string> headers;  // every header of the answer, lower-case names
  std::string allow;         // its Allow header (a 405's), "" when absent
};

/// One blocking HTTP/1.1 request to 127.0.0.1:`port`; status 0 if it could not be
/// made or was not answered within `timeout`.
/// `headers` are sent in addition to Host and Content-Type: application/json.
http_result http_call(uint16_t port, const std::string& method, const std::string& target,
                      const std::string& body = "",
                      std::chrono::milliseconds timeout = std::chrono::seconds(10),
                      const std::map<std::string, std::string>& headers = {});

/// Polls `pred` every 20 ms until it holds or `timeout` passes; returns whether it held.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    struct timespec ts{0, 20'000'000};
    nanosleep(&ts, nullptr);
  }
  return pred();
}

}  // namespace aisched::test
