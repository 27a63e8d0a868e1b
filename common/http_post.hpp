// One blocking HTTP POST of a JSON body with libcurl, for code that runs on
// a run_pool thread (common/run_pool.hpp), never on CAF's: the worker proxies'
// dispatch to external workers and the alerter's webhooks. Talks to whatever
// URL it is given; no retries here (each caller has its own policy).
#pragma once

#include <string>
#include <vector>

namespace aisched::http {

struct http_reply {
  long status = 0;     // 0 when no response arrived
  std::string error;   // transport error text when status == 0
  std::string body;    // at most 64 KiB of the response body
};

/// POSTs `body` (JSON) to `url` with a `timeout_ms` deadline and `headers`
/// ("Name: value" lines) besides Content-Type. Blocking; thread-safe.
http_reply post_json(const std::string& url, const std::string& body, long timeout_ms,
                     const std::vector<std::string>& headers = {});

}  // namespace aisched::http
