// Taking over runs in flight: after winning leadership the router rebuilds
// its view from committed state (tasks, pools, pending runs queued, runs in
// flight adopted), and when a native worker registers, the runs in flight on
// it are adopted if it holds them and otherwise committed as lost with it
// (adoption.hpp decides which). Split from router_actor.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "actors/router/router_actor.hpp"

namespace aisched::router {

/// A worker (re)registered: adopt the in-flight runs that were waiting for it.
void adopt_orphans(self_ptr self, const std::string& worker_id);

/// Settles the runs in flight on native worker `worker_id` by what its latest
/// registration says it holds: held ones are adopted, the others reported
/// lost. `all`: every run in flight on it (a new registration: the worker may
/// have restarted); otherwise only the orphans that wait for it.
void settle(self_ptr self, const std::string& worker_id, bool all);

/// Rebuilds the view from committed state after winning leadership: task
/// definitions, then pending runs (queued) and in-flight ones (adopted).
void rebuild(self_ptr self, uint64_t epoch);

}  // namespace aisched::router
