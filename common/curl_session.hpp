// The one libcurl client. Every HTTP request aisched sends goes through a
// curl_session: HTTP tasks (actors/worker/executor), the LLM client, the
// worker proxies' dispatch to external workers, the alerter's webhooks, and
// the command-line tools (tools/common/http_client). The session owns its easy
// handle (RAII) and keeps its connection alive between requests. Blocking:
// call it from a run_pool thread or a tool's own thread, never from CAF's.
// Not thread-safe: one session per thread. No retries here; callers have
// their own policy.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aisched::http {

struct curl_request {
  std::string method = "GET";  // sent as given; HEAD asks for no body
  std::string url;
  std::vector<std::string> headers;  // "Name: value" lines
  /// Sent with its Content-Length (also when empty); unset: no body.
  std::optional<std::string> body;
  std::chrono::milliseconds timeout{0};          // the whole request (0: none)
  std::chrono::milliseconds connect_timeout{0};  // (0: curl's own)
  /// Receives the response body piece by piece with the status it came with;
  /// returning false stops the transfer (outcome `stopped`, not a failure).
  /// Unset: the body is collected into curl_response::body, up to `body_cap`.
  std::function<bool(long status, std::string_view bytes)> on_data;
  size_t body_cap = 8u << 20;
  /// Polled while the request runs; true aborts it (outcome `cancelled`).
  std::function<bool()> cancelled;
};

enum class curl_outcome {
  ok,         // a response arrived in full (any status)
  stopped,    // on_data asked to stop
  cancelled,  // `cancelled` said so
  timed_out,  // `timeout` passed
  failed,     // transport error: `error` says which
};

struct curl_response {
  curl_outcome outcome = curl_outcome::failed;
  long status = 0;     // 0 when no status line arrived
  std::string error;   // curl's name for the failure ("Couldn't connect to server")
  std::string detail;  // and its specifics, when it gave any ("Failed to connect to ...")
  std::string body;    // when no on_data was given
};

class curl_session {
 public:
  curl_session();
  ~curl_session();
  curl_session(const curl_session&) = delete;
  curl_session& operator=(const curl_session&) = delete;

  /// Sends `r` and waits for its answer. Reuses the connection of the
  /// previous request when the server kept it open.
  curl_response perform(const curl_request& r);

 private:
  void* handle_;  // CURL*, kept out of this header
};

/// One request on a session of its own.
curl_response perform(const curl_request& r);

/// What post_json answers: the status (0 when none arrived), the transport
/// error when status is 0, and at most 64 KiB of the body.
struct http_reply {
  long status = 0;
  std::string error;
  std::string body;
};

/// POSTs `body` (JSON) to `url` within `timeout_ms` (connecting within 3 s),
/// with `headers` ("Name: value") besides Content-Type: the proxies' dispatch
/// and the alerter's webhooks.
http_reply post_json(const std::string& url, const std::string& body, long timeout_ms,
                     const std::vector<std::string>& headers = {});

}  // namespace aisched::http
