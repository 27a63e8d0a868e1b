// Bytes off a client's socket, through the server's parser settings and its
// conversion to a request (gateway/request_head): never crashes, refuses with the
// server's own errors, and what it accepts has lower-case header names, a body
// within the limit and a decoded path no longer than its target.
#include <cctype>

#include "gateway/request_head.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace gw = aisched::gateway;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  auto bytes = aisched::fuzz::as_text(data, size);
  const gw::request_limits limits{4096, 2048};
  auto req = gw::parse_request(bytes, limits);
  if (req) {
    FUZZ_CHECK(req->body.size() <= limits.max_body_bytes, "the body limit holds");
    FUZZ_CHECK(!req->method.empty(), "a request has a method");
    for (auto& [name, value] : req->headers)
      for (char c : name)
        FUZZ_CHECK(!std::isupper(static_cast<unsigned char>(c)), "header names are lower-case");
  } else {
    auto code = static_cast<aisched::errc>(req.error().code());
    FUZZ_CHECK(code == aisched::errc::invalid_argument || code == aisched::errc::payload_too_large,
               "a refusal is one the server answers");
  }
  // The target split on its own, as if all of the input were a target.
  gw::http_request r;
  if (!gw::split_target(bytes, r))
    FUZZ_CHECK(r.path.size() <= bytes.size(), "decoding never grows the path");
  if (auto decoded = gw::percent_decode(bytes, true))
    FUZZ_CHECK(decoded->size() <= bytes.size(), "decoding never grows");
  else
    FUZZ_CHECK(bytes.find('%') != std::string::npos, "only an escape can be malformed");
  return 0;
}
