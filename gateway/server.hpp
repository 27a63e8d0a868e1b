// An HTTP/1.1 server on Boost.Beast with its own io threads. It parses each
// request (bounded header and body sizes), hands it to a handler_fn and writes
// the reply when the handler answers, with keep-alive. It never calls into
// actors itself; routes do that asynchronously.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "common/http.hpp"

namespace aisched::gateway {

struct server_options {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;  // 0 picks a free port
  size_t max_body_bytes = 1 << 20;
  unsigned io_threads = 2;
  /// A request's head must be complete this long after its first byte, so a
  /// client trickling heads cannot hold connections open (slowloris).
  std::chrono::seconds header_timeout{10};
  /// How long a connection may wait for the first byte of its next request,
  /// and how long writing an answer may take.
  std::chrono::seconds idle_timeout{60};
  /// A body must arrive at body_min_rate bytes/s (at least 1) on average once
  /// body_grace has passed since the end of its head.
  std::chrono::seconds body_grace{10};
  size_t body_min_rate = 500;
};

class server {
 public:
  server(server_options opts, handler_fn handler);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Binds and starts serving; returns the bound port.
  caf::expected<uint16_t> start();

  /// Stops accepting, gives in-flight requests a short grace period, then
  /// stops the io threads. Idempotent.
  void stop();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace aisched::gateway
