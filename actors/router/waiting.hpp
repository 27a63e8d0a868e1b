// Why pending runs wait, told to their users: the leader's router commits a
// note_waiting for the runs at the head of its queue that no worker can take
// now (none matches, all draining or offline), whose task is paused, or whose
// task or pool is at its concurrency limit. Split from router_actor.cpp, whose tick calls it.
#pragma once

#include <cstddef>

#include "actors/router/router_actor.hpp"

namespace aisched::router {

/// Commits why runs wait (a reason per task, from placement::why_waiting or
/// concurrency::blocked); runs are looked at from the head of the queue, at
/// most `scan_limit`. Only changes are committed: a run already noted with the
/// same reason is not noted again. Counted in scheduler_runs_waiting{reason}.
void explain_waiting(proto::router_actor::stateful_pointer<router_state> self, size_t scan_limit);

}  // namespace aisched::router
