// The external-worker protocol, client side: builds the JSON body of
// `POST {callback}/internal/tasks/execute` and performs blocking HTTP POSTs
// with libcurl. Called only on dispatch threads, never on CAF's threads.
#pragma once

#include <string>
#include <vector>

#include <boost/json/fwd.hpp>

#include "proto/interfaces.hpp"

namespace aisched::worker_proxy {

/// The execute document an external worker receives (DESIGN §6).
std::string execute_body(const proto::execute_request& req, const std::string& report_url);

struct http_reply {
  long status = 0;     // 0 when no response arrived
  std::string error;   // transport error text when status == 0
  std::string body;
};

/// POSTs `body` (JSON) to `url` with a `timeout_ms` deadline and `headers`
/// ("Name: value" lines) besides Content-Type. Blocking; thread-safe.
http_reply post_json(const std::string& url, const std::string& body, long timeout_ms,
                     const std::vector<std::string>& headers = {});


}  // namespace aisched::worker_proxy
