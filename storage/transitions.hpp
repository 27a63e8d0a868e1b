// Which instance state changes the state machine allows (DESIGN §3): the one
// table apply() checks every report, dispatch, retry and cancel against, so a
// late or duplicated message cannot move a run backwards. Pure.
#pragma once

#include "proto/types.hpp"

namespace aisched::storage {

/// Whether an instance may move from `from` to `to` (DESIGN §3).
inline bool legal_transition(proto::instance_state from, proto::instance_state to) {
  using s = proto::instance_state;
  switch (from) {
    case s::pending:
      return to == s::dispatched || to == s::cancelled;
    case s::dispatched:
      return to == s::dispatched || to == s::running || to == s::success || to == s::failed ||
             to == s::timed_out || to == s::retry_waiting || to == s::cancelled ||
             to == s::pending;
    case s::running:
      return to == s::running || to == s::success || to == s::failed || to == s::timed_out ||
             to == s::retry_waiting || to == s::cancelled;
    case s::retry_waiting:
      return to == s::pending || to == s::cancelled;
    default:
      return false;  // terminal
  }
}

}  // namespace aisched::storage
