// Unpredictable bytes from the kernel's CSPRNG (getrandom(2)) and the ids made
// of them: W3C trace and span ids, which must be unique across processes and
// must not let one run's id be guessed from another's. No state, thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace aisched::proto {

/// Fills `n` bytes at `out` from getrandom(2). Aborts if the kernel has no
/// randomness to give (nothing safe can be made without it).
void random_bytes(void* out, size_t n);

/// `bytes` random bytes as lower-case hex (2 * bytes characters).
std::string random_hex(size_t bytes);

/// A W3C trace id: 32 lower-case hex digits, never all zeros.
std::string new_trace_id();

/// A W3C span (parent) id: 16 lower-case hex digits, never all zeros.
std::string new_span_id();

}  // namespace aisched::proto
