// A Server-Sent Events stream as `aischedctl run logs --follow` reads it from a
// node (common/sse_reader): never crashes, and the events do not depend
// on how the bytes were split into reads. Byte 0 picks the read size.
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_check.hpp"
#include "common/sse_reader.hpp"

namespace {

std::vector<std::string> events_of(std::string_view stream, size_t chunk) {
  std::vector<std::string> out;
  aisched::http::sse_reader reader([&](const aisched::http::sse_event& e) {
    out.push_back(e.type + '\x1f' + e.data);
    return out.size() < 1000;
  });
  for (size_t at = 0; at < stream.size(); at += chunk)
    if (!reader.feed(stream.substr(at, chunk))) break;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 64 * 1024) return 0;
  auto stream = aisched::fuzz::as_text(data + 1, size - 1);
  size_t chunk = 1 + data[0] % 7;
  auto whole = events_of(stream, stream.size() + 1);
  FUZZ_CHECK(events_of(stream, chunk) == whole, "events do not depend on the split");
  return 0;
}
