// SplitMix64's output step: a well-mixed 64-bit value of `x`. The seeded
// simulations draw from it (tests/sim's seed_stream, the raft group's link
// delays, worker::sim_executor's durations); the same value on every platform
// and build, so a seed replays exactly.
#pragma once

#include <cstdint>

namespace aisched {

constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace aisched
