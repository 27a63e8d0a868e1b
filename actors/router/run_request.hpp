// What a worker receives for one attempt, pure: the execute_request the router
// builds from a task and its run, with an event-fired run's payload substituted
// (actors/router/substitute) where it lands. Used by the router when it sends a
// placed run to the worker's proxy.
#pragma once

#include "proto/interfaces.hpp"
#include "proto/types.hpp"

namespace aisched::router {

/// The execute request of run `x` of task `t` (its current attempt).
proto::execute_request make_request(const proto::task& t, const proto::instance& x);

}  // namespace aisched::router
