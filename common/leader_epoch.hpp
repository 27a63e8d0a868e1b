// The leader-only protocol the retry, trigger, router and backpressure actors
// share. Each holds a `leader_epoch` in its state and, on every `leader`
// message (proto::leadership), calls `change`: the epoch moves on (so an answer
// to a request made under an older one is dropped with `current`), the term is
// the new leader's, and the actor is not ready until its rebuild from the
// store, begun for this epoch, finishes and calls `rebuilt`. What each actor
// clears and rebuilds is its own.
#pragma once

#include <cstdint>

namespace aisched {

struct leader_epoch {
  uint64_t epoch = 0;    // bumped on each leadership change
  uint64_t term = 0;     // the term of the last change (the leader's, when leading)
  bool leading = false;  // this node leads
  bool ready = false;    // the rebuild of this epoch has finished

  /// A leadership change. Returns whether this node now leads (then the caller
  /// rebuilds for `epoch`).
  bool change(bool now_leading, uint64_t new_term) {
    ++epoch;
    term = new_term;
    leading = now_leading;
    ready = false;
    return leading;
  }

  /// Whether work begun in epoch `e` still counts.
  bool current(uint64_t e) const { return e == epoch; }

  /// The rebuild begun in epoch `e` finished: ready, unless leadership moved
  /// since (then nothing changes and it returns false).
  bool rebuilt(uint64_t e) {
    if (e != epoch) return false;
    ready = leading;
    return ready;
  }
};

}  // namespace aisched
