// The one invariant check of the tree. A broken invariant aborts with a line on
// stderr naming where and what, in release builds too (TigerStyle): a node that
// runs on past one can silently lose or duplicate committed work, while a crash
// restarts from durable state. Not for bad input, which is an error value
// (caf::expected, errc). The raft core reports through its own `fail`, which
// adds the member's id, term and role (actors/raft/core_assert.hpp).
#pragma once

#include <cstdio>
#include <cstdlib>

namespace aisched::detail {

[[noreturn]] inline void invariant_broken(const char* cond, const char* what, const char* file,
                                          int line) {
  std::fprintf(stderr, "aisched: invariant broken at %s:%d: %s (%s)\n", file, line, what, cond);
  std::abort();
}

}  // namespace aisched::detail

/// Aborts with `what` (a C string) unless `cond` holds.
#define AISCHED_INVARIANT(cond, what)                                              \
  do {                                                                             \
    if (!(cond)) ::aisched::detail::invariant_broken(#cond, what, __FILE__, __LINE__); \
  } while (false)
