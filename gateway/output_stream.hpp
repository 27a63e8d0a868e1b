// GET /api/v1/instances/{id}/output?follow=true: a run's output as
// Server-Sent Events. While an attempt runs on a native worker, a follower
// actor subscribes to its live output through the router and relays each
// chunk; otherwise (an HTTP worker, a run not started yet, a follower node)
// it polls the store and sends the stored tail once the run ends.
//
// Events: `data: {"chunk": "..."}` for output, `event: end` with
// `data: {"state": ..., "exit_code": ...}` when the run has ended for good
// (success, failed, timed_out, cancelled), then the stream closes.
#pragma once

#include <string>

#include "gateway/api.hpp"

namespace aisched::gateway {

/// Answers with the event stream of instance `id` (404 when it does not exist).
void follow_output(const api_context& ctx, const std::string& tenant, const std::string& id,
                   reply_fn reply);

}  // namespace aisched::gateway
