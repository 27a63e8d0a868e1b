// Test harness: starts a real `aisched` process on free loopback ports with a
// temporary data directory, waits until it serves HTTP, and always cleans up
// (kills the process it started, by pid, and removes the directory).
#pragma once

#include <chrono>
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
  /// Starts `aisched --data-dir <data_dir> --http-addr 127.0.0.1:0 --cluster-addr 127.0.0.1:0`
  /// plus `extra_args`, and waits (up to `timeout`) for its "http listening" log line.
  /// Fails the current test (ADD_FAILURE) if it does not come up.
  node_process(std::string data_dir, std::vector<std::string> extra_args = {},
               std::chrono::milliseconds timeout = std::chrono::seconds(20));
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

struct http_result {
  unsigned status = 0;  // 0 when the request could not be made
  std::string body;
};

/// One blocking HTTP/1.1 request to 127.0.0.1:`port` with a 10 s timeout.
http_result http_call(uint16_t port, const std::string& method, const std::string& target,
                      const std::string& body = "");

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
