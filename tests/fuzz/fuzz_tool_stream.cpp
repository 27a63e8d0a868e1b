// A streamed chat/completions answer from an OpenAI-compatible provider, which
// aisched does not control (actors/llm_agent stream_accumulator): never crashes,
// and content, tool calls and errors do not depend on how the bytes arrived.
// Byte 0 picks the read size.
#include <string>

#include "common/llm_client.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

std::string outcome(std::string_view stream, size_t chunk) {
  aisched::llm::stream_accumulator acc;
  bool ok = true;
  for (size_t at = 0; at < stream.size() && ok; at += chunk) ok = acc.feed(stream.substr(at, chunk));
  auto r = acc.result();
  std::string out = std::string(ok ? "ok" : "error") + '\x1f' + (acc.done() ? "done" : "open") +
                    '\x1f' + r.content + '\x1f' + r.reasoning_content + '\x1f' + r.finish_reason;
  for (auto& c : r.tool_calls) out += '\x1e' + c.id + '\x1f' + c.name + '\x1f' + c.arguments;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 64 * 1024) return 0;
  auto stream = aisched::fuzz::as_text(data + 1, size - 1);
  size_t chunk = 1 + data[0] % 13;
  FUZZ_CHECK(outcome(stream, chunk) == outcome(stream, stream.size() + 1),
             "the answer does not depend on the split");
  return 0;
}
