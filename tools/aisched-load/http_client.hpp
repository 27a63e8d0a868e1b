// A small blocking HTTP/1.1 client with one keep-alive connection, for the
// command-line tools (aisched-load, aischedctl). Not thread-safe: one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace aisched::tools {

struct http_reply {
  unsigned status = 0;  // 0: transport error (see body)
  std::string body;
};

class http_client {
 public:
  /// `base` is "http://HOST:PORT".
  explicit http_client(std::string base);
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  /// One request; reconnects once if the kept-alive connection was closed.
  http_reply call(const std::string& method, const std::string& target,
                  const std::string& body = "");

  const std::string& host() const { return host_; }

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
  std::string host_;
};

/// Whether `base` names a loopback host (127.0.0.0/8, ::1 or localhost).
bool is_loopback(const std::string& base);

}  // namespace aisched::tools
