// Taking over runs in flight when a native worker registers (pure): those the
// committed state has in flight on it are adopted when the worker says it
// holds them, and otherwise were lost with it (it restarted, or the run never
// reached it). A lost attempt that never started (no `running` committed) is
// placed again as the same attempt: it was no execution, so it counts against
// no retry policy. One that may have run ends as a `worker_lost` report,
// retried per the task's policy as the next attempt. Used by the router actor
// (router_actor.cpp, takeover.cpp).
#pragma once

#include <string>
#include <vector>

#include "proto/commands.hpp"
#include "proto/types.hpp"

namespace aisched::router {

struct handover {
  std::vector<proto::instance> adopt;    // held by the worker: hand them over again
  std::vector<proto::instance> replace;  // not held, never started: place them again
  std::vector<proto::run_result> lost;   // not held, may have run: ended with the worker
};

/// Whether attempt `x.attempt` of `x` (in flight) never started: no `running`
/// report of it was committed (state dispatched, no start time). Such an
/// attempt, lost with its worker, was no execution.
bool never_started(const proto::instance& x);

/// Sorts `in_flight` (committed dispatched or running runs) by whether worker
/// `worker_id` holds them, as its registration's `held` says (same instance
/// and attempt); of those it does not hold, the ones that never_started() go
/// to `replace`, the others to `lost`. Runs on another worker are left out.
handover sort_in_flight(const std::vector<proto::instance>& in_flight,
                        const std::string& worker_id, const std::vector<proto::held_run>& held);

/// The report ending attempt `x.attempt` of `x` on `x.worker_id` as failed,
/// exit code -1, with `error`: the router's own verdicts on an attempt.
proto::run_result failed_report(const proto::instance& x, std::string error);

/// The report ending attempt `x.attempt` of `x` as lost with its worker
/// `x.worker_id`: failed, exit code -1, error "worker_lost: worker <id> <why>".
proto::run_result lost_report(const proto::instance& x, const std::string& why);

}  // namespace aisched::router
