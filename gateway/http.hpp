// The HTTP shapes the gateway's routes work with, free of Beast: a parsed
// request and a response, plus the reply callback a route calls exactly once
// (from any thread) to answer.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace aisched::gateway {

struct http_request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query string, percent-decoded
  std::map<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

struct http_response {
  unsigned status = 200;
  std::string body;
  std::string content_type = "application/json";
};

/// Answers a request. Thread-safe; call it exactly once.
using reply_fn = std::function<void(http_response)>;

/// Handles a request; must not block (hand work to actors and reply later).
using handler_fn = std::function<void(http_request, reply_fn)>;

}  // namespace aisched::gateway
