// Small helpers the integration tests share: reading fields of JSON answers,
// parsing a response body, times as the API writes them, free loopback ports.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "common/clock.hpp"
#include "proto/time.hpp"
#include "support/node_process.hpp"

namespace aisched::test {

/// The string field `key` of `o` ("" if absent or not a string).
inline std::string str(const boost::json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

/// The integer field `key` of `o` (-1 if absent or not an integer).
inline int64_t num(const boost::json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  if (!v) return -1;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return int64_t(v->get_uint64());
  return -1;
}

/// The last `n` characters of a log, for failure messages.
/// A bulk enqueue's body (POST /api/v1/tasks/{id}/runs): `n` payloads {"n":k}.
inline std::string payloads_body(size_t n) {
  boost::json::array items;
  for (size_t i = 0; i < n; ++i) items.push_back(boost::json::object{{"n", i}});
  return boost::json::serialize(boost::json::object{{"payloads", std::move(items)}});
}

inline std::string tail(const std::string& log, size_t n = 4000) {
  return log.size() > n ? "...\n" + log.substr(log.size() - n) : log;
}

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// Wall-clock now in Unix milliseconds (the nodes run on this machine's clock).
inline int64_t wall_ms() { return system_now_ms(); }

/// Unix milliseconds of an RFC 3339 time as the API writes it; -1 if it is not one.
inline int64_t rfc3339_ms(const std::string& s) { return parse_rfc3339(s).value_or(-1); }

/// The same for a JSON value (-1 for null or anything but a time string).
inline int64_t time_ms(const boost::json::value& v) {
  return v.is_string() ? rfc3339_ms(std::string(v.get_string())) : -1;
}

/// The body of `r` as JSON; a test failure (and an empty object) if it is not JSON.
inline boost::json::value parse(const http_result& r) {
  boost::system::error_code ec;
  auto v = boost::json::parse(r.body, ec);
  if (ec) {
    ADD_FAILURE() << "not JSON (status " << r.status << "): " << r.body;
    return boost::json::object{};
  }
  return v;
}

/// A loopback TCP port that was free a moment ago (bound to port 0, read, closed).
inline uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// -- processes of runs ---------------------------------------------------------------
// A run has its own pid namespace: the pids it sees ($$, $!) are not ours. Tests find
// its processes by a unique argument instead (`sleep 1000.<digits>`).

/// A `sleep` argument of `seconds` seconds that no other process has.
inline std::string unique_sleep_arg(int seconds = 1000) {
  static int counter = 0;
  return std::to_string(seconds) + "." + std::to_string(100000 + std::random_device{}() % 800000) +
         std::to_string(counter++);
}

/// Pids of live (non-zombie) processes that have `arg` as one of their arguments.
inline std::vector<pid_t> pids_with_arg(const std::string& arg) {
  namespace fs = std::filesystem;
  auto read = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  std::vector<pid_t> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto cmdline = read(e.path() / "cmdline");
    auto stat = read(e.path() / "stat");
    auto paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z') continue;
    for (size_t i = 0; i < cmdline.size();) {
      auto end = cmdline.find('\0', i);
      if (end == std::string::npos) end = cmdline.size();
      if (cmdline.compare(i, end - i, arg) == 0) {
        out.push_back(static_cast<pid_t>(std::stol(name)));
        break;
      }
      i = end + 1;
    }
  }
  return out;
}

/// Waits until no process carries `arg`; SIGKILLs the survivors (so they do not
/// disturb other tests) and returns false if some outlived `timeout`.
inline bool all_gone(const std::string& arg,
                     std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  if (eventually([&] { return pids_with_arg(arg).empty(); }, timeout)) return true;
  for (auto pid : pids_with_arg(arg)) ::kill(pid, SIGKILL);
  return false;
}

/// Waits until the node at `port` answers /readyz with 200 (a leader elected, storage
/// sound), as an operator's script does before calls that need the leader at once
/// (registering a worker answers 503 `no leader elected yet` before the election).
inline bool await_ready(uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  return eventually([&] { return http_call(port, "GET", "/readyz").status == 200; }, timeout);
}

/// Creates a task from the JSON `body` on the node at `port`; returns its id, or
/// 0 after recording a test failure that shows the answer.
inline int64_t create_task(uint16_t port, const std::string& body) {
  auto r = http_call(port, "POST", "/api/v1/tasks", body);
  if (r.status != 201) {
    ADD_FAILURE() << "create failed (" << r.status << "): " << r.body << "\nfor " << body;
    return 0;
  }
  return num(parse(r).as_object(), "id");
}

}  // namespace aisched::test
