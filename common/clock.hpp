// The one clock of aisched: every reading of the time goes through this file
// (tests/layers/check_clock_injection.py fails on any other). Actors read the
// wall clock through `wall_clock::now(self->clock())` and measure durations on
// their CAF actor clock (`self->clock().now()`), so a simulation on CAF's test
// coordinator drives both; pure parts take the instant as an argument. Code
// outside the simulation (the gateway, logging, the runtime, tools, the
// executor's real processes) reads the system through system_now_ms() and
// steady_now().
#pragma once

#include <chrono>

#include <caf/actor_clock.hpp>

#include "proto/time.hpp"

namespace aisched {

/// The system's wall clock (NTP-corrected), in ms since the epoch. Not for
/// actors (they read `wall_clock::now`). Thread-safe.
inline unix_ms system_now_ms() noexcept {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

/// The system's steady clock, for a duration measured off any actor (a real
/// process, fsync or request). Actors use `self->clock().now()`. Thread-safe.
inline std::chrono::steady_clock::time_point steady_now() noexcept {
  return std::chrono::steady_clock::now();
}

/// An actor's wall clock, a value kept in its state (`clock`, given at spawn)
/// and read with the actor's own CAF clock. Whoever spawns the actors decides
/// the mode, once for all of them (runtime/scheduler_node.cpp: the system's):
///
/// - system (the default, production): each read is system_now_ms(), so a node
///   up for months follows NTP's corrections at once; the actor clock is not
///   read. (An instant anchored once to the steady clock would drift away.)
/// - simulated: `at` at the actor-clock instant `since`, advancing with the
///   actor clock; under CAF's test coordinator that is virtual time. Every
///   actor of one simulation gets the same value, so all agree on the time.
///
/// Cheap to copy; reads are const and take no lock.
class wall_clock {
 public:
  /// The system's wall clock.
  wall_clock() noexcept = default;

  /// Reads `at` when the actor clock reads `since`, and advances with it.
  static wall_clock simulated(unix_ms at, caf::actor_clock::time_point since) noexcept {
    wall_clock c;
    c.simulated_ = true;
    c.at_ = at;
    c.since_ = since;
    return c;
  }

  /// The instant now. `clock` is the reading actor's (`self->clock()`); the
  /// system mode ignores it.
  unix_ms now(const caf::actor_clock& clock) const noexcept {
    if (!simulated_) return system_now_ms();
    auto elapsed = clock.now() - since_;
    return at_ + std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
  }

  bool is_simulated() const noexcept { return simulated_; }

 private:
  bool simulated_ = false;
  unix_ms at_ = 0;
  caf::actor_clock::time_point since_{};
};

/// The instant now for actor `self`, whose state keeps its `wall_clock clock`.
/// Call from the actor's own handlers.
template <class Self>
unix_ms now_of(Self* self) {
  return self->state.clock.now(self->clock());
}

}  // namespace aisched
