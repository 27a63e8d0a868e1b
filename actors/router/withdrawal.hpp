// Runs placed ahead of their instant follow their task until it: the trigger
// fires a slot early (planner.hpp, fire-ahead) and the worker holds the run
// until the slot (execute_request::hold_ms). A pause or delete of the task
// before the instant (by at least `withdraw_margin`, so the cancel commits
// before the run starts) withdraws such a run: a committed `cancel`, which
// makes the worker drop it unstarted. Any other change of the task sends it
// again with the new definition, which the worker's held run takes (a
// changed schedule applies from the next slot). Split from router_actor.cpp
// and dispatching.cpp, which call these.
#pragma once

#include "actors/router/router_actor.hpp"

namespace aisched::router {

/// How long before its instant a change still withdraws a held run.
constexpr duration_ms withdraw_margin = 50;

/// Withdraws or re-sends the dispatched runs not yet due whose task the
/// committed batch `a` changed or deleted.
void follow_task_changes(self_ptr self, const proto::applied& a);

/// Whether run `x` was just placed ahead of its instant for a task paused
/// meanwhile; if so its withdrawal is proposed and it must not be sent.
bool withdraw_if_paused(self_ptr self, const proto::instance& x);

}  // namespace aisched::router
