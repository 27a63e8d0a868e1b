// The one Server-Sent Events reader: splits a text/event-stream into events,
// however the bytes arrive. The LLM client reads a provider's streamed answer
// with it, and aischedctl a run's live output (`run logs --follow`).
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace aisched::http {

struct sse_event {
  std::string type;  // the `event:` field; "" for the default ("message")
  std::string data;  // the `data:` lines, joined by '\n'
};

class sse_reader {
 public:
  /// Called once per complete event; returns false to stop reading.
  using handler = std::function<bool(const sse_event&)>;

  explicit sse_reader(handler on_event) : on_event_(std::move(on_event)) {}

  /// Consumes the next bytes of the stream (any split, LF or CRLF line ends).
  /// Returns false once the handler asked to stop; later calls do nothing.
  bool feed(std::string_view bytes);

 private:
  /// Applies one line; false if the handler asked to stop.
  bool line(std::string_view text);

  handler on_event_;
  std::string pending_;  // bytes after the last line end
  sse_event event_;      // the event being read
  bool has_data_ = false;
  bool stopped_ = false;
};

}  // namespace aisched::http
