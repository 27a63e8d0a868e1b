// A loopback HTTP/1.1 receiver a test owns: one thread on 127.0.0.1 (port
// chosen by the kernel) that records every request and answers the n-th with
// statuses[n] (the last status once the list is used up) and `body`, or, with
// `hang`, never answers (the connection stays open until destruction). For
// webhooks, HTTP tasks and anything else a node calls out to. Stops and joins
// on destruction.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/loopback.hpp"

namespace aisched::test {

class http_receiver {
 public:
  struct request {
    std::string head;  // request line and headers
    std::string body;
    /// The value of header `name` (case-insensitive), if present.
    std::optional<std::string> header(const std::string& name) const {
      auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
      };
      auto h = lower(head), want = "\r\n" + lower(name) + ":";
      auto at = h.find(want);
      if (at == std::string::npos) return std::nullopt;
      auto start = at + want.size();
      auto end = head.find("\r\n", start);
      auto v = head.substr(start, end == std::string::npos ? std::string::npos : end - start);
      v.erase(0, v.find_first_not_of(' '));
      return v;
    }
  };

  explicit http_receiver(std::vector<int> statuses = {200}, std::string body = "ok",
                         bool hang = false)
      : statuses_(std::move(statuses)), body_(std::move(body)), hang_(hang) {
    fd_ = listen_loopback(64, port_);
    thread_ = std::thread([this] { serve(); });
  }

  ~http_receiver() {
    stop_ = true;
    thread_.join();
    for (int c : held_) close(c);
    close(fd_);
  }

  http_receiver(const http_receiver&) = delete;
  http_receiver& operator=(const http_receiver&) = delete;

  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  std::vector<request> requests() const {
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
      auto r = read_request(c);
      int status;
      {
        std::lock_guard<std::mutex> guard(mtx_);
        status = statuses_.empty() ? 200
                                   : statuses_[std::min(requests_.size(), statuses_.size() - 1)];
        requests_.push_back(std::move(r));
      }
      if (hang_) {
        held_.push_back(c);  // closed by the destructor
        continue;
      }
      std::string response = "HTTP/1.1 " + std::to_string(status) +
                             " Test\r\nContent-Length: " + std::to_string(body_.size()) +
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
  static request read_request(int c) {
    std::string data;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    size_t want = std::string::npos, head_end = std::string::npos;
    char buf[4096];
    while (std::chrono::steady_clock::now() < until && data.size() < want) {
      pollfd p{c, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      auto n = recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      data.append(buf, static_cast<size_t>(n));
      if (head_end == std::string::npos && (head_end = data.find("\r\n\r\n")) != std::string::npos) {
        request probe{data.substr(0, head_end), ""};
        auto cl = probe.header("content-length");
        want = head_end + 4 + (cl ? std::stoul(*cl) : 0);
      }
    }
    if (head_end == std::string::npos) return {data, ""};
    return {data.substr(0, head_end), data.substr(head_end + 4)};
  }

  std::vector<int> statuses_;
  std::string body_;
  bool hang_ = false;
  std::vector<int> held_;  // serve thread only
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mtx_;
  std::vector<request> requests_;
};

}  // namespace aisched::test
