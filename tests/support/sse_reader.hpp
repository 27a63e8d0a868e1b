// Test harness: reads a streamed HTTP response (Server-Sent Events) from
// 127.0.0.1 as it arrives, so a test can assert what came before the stream
// ended. Raw bytes are kept as received (chunk-size lines included): tests
// look for substrings of whole events, and the server writes each event as
// one chunk.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace aisched::test {

class sse_reader {
 public:
  /// Connects and sends `GET target`; ok() tells whether that worked.
  sse_reader(uint16_t port, const std::string& target);
  ~sse_reader();
  sse_reader(const sse_reader&) = delete;
  sse_reader& operator=(const sse_reader&) = delete;

  bool ok() const { return fd_ >= 0; }
  /// Reads until `needle` has been received, the server closes, or `timeout`
  /// passes; returns whether `needle` was received.
  bool wait_for(const std::string& needle, std::chrono::milliseconds timeout);
  /// Everything received so far (headers included).
  const std::string& text() const { return text_; }
  /// Whether the server closed the connection.
  bool closed() const { return closed_; }

 private:
  int fd_ = -1;
  bool closed_ = false;
  std::string text_;
};

}  // namespace aisched::test
