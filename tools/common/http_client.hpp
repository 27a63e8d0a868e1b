// A small blocking HTTP/1.1 client on libcurl for the command-line tools
// (aisched-load, aischedctl): one kept-alive connection per client, an optional
// bearer token, a per-request timeout, and streamed bodies (Server-Sent Events).
// Not thread-safe: use one client per thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace aisched::tools {

struct http_reply {
  unsigned status = 0;  // 0: transport error (the body says what went wrong)
  std::string body;
};

struct http_client_options {
  /// Sent as `Authorization: Bearer <token>` when not empty.
  std::string token;
  /// Whole-request limit of call(); the connect limit of stream().
  std::chrono::milliseconds timeout = std::chrono::seconds(30);
};

class http_client {
 public:
  /// `base` is "http://HOST:PORT" (a trailing path or slash is kept as a prefix
  /// of every target, a trailing slash dropped).
  explicit http_client(std::string base, http_client_options options = {});
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  /// One request with a JSON body (none when `body` is empty). Reuses the
  /// connection of the previous request when the server kept it open.
  http_reply call(const std::string& method, const std::string& target,
                  const std::string& body = "");

  /// A GET whose 2xx body is handed to `on_data` piece by piece as it arrives,
  /// with no overall time limit; `on_data` returns false to stop reading (not an
  /// error). A non-2xx body is collected into the reply instead.
  http_reply stream(const std::string& target,
                    const std::function<bool(std::string_view)>& on_data);

  const std::string& base() const { return base_; }

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
  std::string base_;
  http_client_options options_;
};

/// Whether `base` names a loopback host (127.0.0.0/8, ::1 or localhost).
bool is_loopback(const std::string& base);

}  // namespace aisched::tools
