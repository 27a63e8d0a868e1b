// What every fuzz target uses: the libFuzzer entry point's signature and a check
// that aborts with a message when a property fails (libFuzzer then keeps the
// input as a crash; the g++ replay driver reports it and exits non-zero).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(cond, what)                                                          \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "fuzz property failed: %s (%s:%d): %s\n", #cond, __FILE__, \
                   __LINE__, what);                                                    \
      std::abort();                                                                     \
    }                                                                                   \
  } while (false)

namespace aisched::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace aisched::fuzz
