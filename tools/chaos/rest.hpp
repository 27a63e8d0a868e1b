// aisched-chaos, runs at rest: when the harness may call a run settled. Ended,
// or waiting for a resume of its paused task: the harness pauses the periodic
// tasks before it settles, and their runs still waiting then (queued behind a
// burst, or retried after a lost attempt) stay pending until a resume (README,
// "Pause"), with the reason the router commits. Pure: JSON in, verdict out.
#pragma once

#include <string>

#include <boost/json/object.hpp>

namespace aisched::chaos {

/// Whether `state` ends a run (success, failed, timed_out, cancelled).
bool final_state(const std::string& state);

/// Whether `run` (as GET /api/v1/instances lists it) waits for a resume of
/// `task`, its task as listed (nullptr: not listed): pending, its task paused,
/// the router's reason committed.
bool held_by_pause(const boost::json::object& run, const boost::json::object* task);

}  // namespace aisched::chaos
