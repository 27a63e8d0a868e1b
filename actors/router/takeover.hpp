// Taking over runs in flight: after winning leadership the router rebuilds
// its view from committed state (tasks, pools, pending runs queued, runs in
// flight adopted), and when a native worker registers, the runs in flight on
// it are adopted if it holds them and otherwise committed as lost with it
// (adoption.hpp decides which). A worker silent for `dead_after`, or removed,
// loses its runs the same way; should it come back, it is told to cancel them.
// Split from router_actor.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/router/router_actor.hpp"

namespace aisched::router {

/// A worker (re)registered: adopt the in-flight runs that were waiting for it.
void adopt_orphans(self_ptr self, const std::string& worker_id);

/// Settles the runs in flight on native worker `worker_id` by what its latest
/// registration says it holds: held ones are adopted, the others placed again
/// as the same attempt if they never started (adoption.hpp), else reported
/// lost. `all`: every run in flight on it (a new registration: the worker may
/// have restarted); otherwise only the orphans that wait for it.
void settle(self_ptr self, const std::string& worker_id, bool all);

/// Places again, as the same attempts, the runs a native worker refused to
/// take (its proxy's `not_taken`: they never started there), while each is
/// still that attempt, dispatched to that worker and not started. The worker
/// is closed to placement until its next registration says what it takes
/// (e.g. max_load 0: its outbox failed), so it is not handed them again at once.
void place_refused(self_ptr self, const std::vector<proto::run_result>& refused);

/// Ends the attempts in flight on worker `worker_id` (an operator removed it)
/// as lost with it, "worker_lost: worker <id> was removed", retried per their
/// task's policy; each is cancelled on the worker first, through its proxy.
/// Call before the worker's proxy is stopped. Returns how many ended.
size_t end_removed(self_ptr self, const std::string& worker_id);

/// Once a tick while leading and rebuilt: a registered worker silent for
/// `dead_after` is dead (offline, logged once); the attempts in flight on it,
/// or on a worker not heard from since `dead_after` after this leader's
/// election, end as lost with it. Each attempt is ended once (st.term.dead).
void bury_silent(self_ptr self, unix_ms now);

/// Worker `w` is heard from again: the attempts ended with it that it still
/// holds (`held`; nullptr: an external worker, which does not say) are
/// cancelled on it before anything new is placed there, and it is no longer
/// dead. Needs `w.proxy` (leading).
void revive(self_ptr self, worker_entry& w, const std::vector<proto::held_run>* held);

/// Rebuilds the view from committed state after winning leadership: task
/// definitions, then pending runs (queued) and in-flight ones (adopted).
void rebuild(self_ptr self, uint64_t epoch);

}  // namespace aisched::router
