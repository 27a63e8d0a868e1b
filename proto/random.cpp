// Kernel randomness and the ids made of it; see random.hpp.
#include "proto/random.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdlib>

#include "proto/hex.hpp"
#include "proto/invariant.hpp"

namespace aisched::proto {

namespace {

/// `bytes` random bytes as hex, drawn again in the (2^-64 or rarer) case of all zeros,
/// which W3C Trace Context reserves as invalid.
std::string nonzero_hex(size_t bytes) {
  for (;;) {
    auto s = random_hex(bytes);
    if (s.find_first_not_of('0') != std::string::npos) return s;
  }
}

}  // namespace

void random_bytes(void* out, size_t n) {
  auto* p = static_cast<unsigned char*>(out);
  while (n > 0) {
    auto got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      AISCHED_INVARIANT(false, "getrandom(2) failed: no kernel randomness");
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
}

std::string random_hex(size_t bytes) {
  std::string raw(bytes, '\0');
  random_bytes(raw.data(), bytes);
  return to_hex(raw);
}

std::string new_trace_id() { return nonzero_hex(16); }

std::string new_span_id() { return nonzero_hex(8); }

}  // namespace aisched::proto
