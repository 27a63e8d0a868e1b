// The HTTP shapes the gateway's routes work with, free of Beast: a parsed
// request and a response, plus the reply callback a route calls exactly once
// (from any thread) to answer. In common/ because in-process callers build
// requests too (the AI agent's tools, actors/llm_agent): they must not depend
// on the gateway that depends on them. Still namespace aisched::gateway, the
// owner of the wire these shapes stand for.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/principal.hpp"

namespace aisched::gateway {

struct http_request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query string, percent-decoded
  std::map<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  /// The client's IP address as the socket sees it ("" for in-process calls,
  /// e.g. the AI agent's tools); proxies' X-Forwarded-For is not trusted.
  std::string peer;
  /// Set by the gateway's auth gate from the Authorization header alone (never
  /// trusted from whoever built the request): routes scope everything by its tenant.
  principal who;
};

/// The writing end of a streamed response body (Server-Sent Events). Thread-safe.
class stream_writer {
 public:
  virtual ~stream_writer() = default;
  /// Queues `data` for the client. False once the client has gone or the
  /// server is stopping: the producer should stop then.
  virtual bool write(std::string data) = 0;
  /// True while write() can still reach the client.
  virtual bool open() const = 0;
  /// Bytes queued by write() and not yet sent. A producer of a large body
  /// (GET /api/v1/cluster/snapshot) waits while it is high, so a slow client
  /// does not make the server hold the whole body. 0 if not tracked.
  virtual size_t queued_bytes() const { return 0; }
  /// Ends the body; the connection closes once what was queued is sent.
  virtual void close() = 0;
};

/// Called once with the writer after the response headers went out.
using stream_fn = std::function<void(std::shared_ptr<stream_writer>)>;

/// An accepted WebSocket connection (Boost.Beast's websocket). Thread-safe.
class ws_channel {
 public:
  virtual ~ws_channel() = default;
  /// Queues one text frame. False once the connection is closed.
  virtual bool send(std::string text) = 0;
  virtual bool open() const = 0;
  /// Closes the connection (a normal close frame after what was queued).
  virtual void close() = 0;
};

/// Called once the WebSocket handshake is done; returns the handler of the
/// client's text frames (called on an io thread, one frame at a time).
using ws_fn = std::function<std::function<void(std::string)>(std::shared_ptr<ws_channel>)>;

struct http_response {
  unsigned status = 200;
  std::string body;
  std::string content_type = "application/json";
  /// When set, `body` is ignored: the headers go out (chunked, no caching)
  /// and the route writes the body through the writer it is given.
  stream_fn stream = nullptr;
  /// Extra headers, e.g. ETag, Cache-Control (a streamed answer's too).
  std::vector<std::pair<std::string, std::string>> headers = {};
  /// When set (and the request asked for a WebSocket upgrade), the server
  /// completes the handshake instead of answering, and hands over the channel.
  ws_fn websocket = nullptr;
  /// An error answer's REST code (its body's `error.code`), set by the
  /// gateway's error_response; "" for every other answer. The audit records it.
  std::string error_code = {};
};

/// Answers a request. Thread-safe; call it exactly once.
using reply_fn = std::function<void(http_response)>;

/// Handles a request; must not block (hand work to actors and reply later).
using handler_fn = std::function<void(http_request, reply_fn)>;

}  // namespace aisched::gateway
