// Durations ("1h30m") and RFC 3339 instants as clients send them: parsing never
// crashes, and what parses formats back to text that parses to the same value.
#include "proto/time.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256) return 0;
  auto text = aisched::fuzz::as_text(data, size);
  if (auto d = aisched::parse_duration(text)) {
    FUZZ_CHECK(*d >= 0, "durations are non-negative");
    auto again = aisched::parse_duration(aisched::format_duration(*d));
    FUZZ_CHECK(again && *again == *d, "format_duration reads back");
  }
  if (auto t = aisched::parse_rfc3339(text)) {
    auto again = aisched::parse_rfc3339(aisched::format_rfc3339(*t));
    FUZZ_CHECK(again && *again == *t, "format_rfc3339 reads back");
  }
  return 0;
}
