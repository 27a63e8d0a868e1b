// GET /metrics and the gateway's own metrics. with_metrics() wraps the REST
// handler: it answers /metrics with the process registry in Prometheus text
// format and times every other request, labelled by its route pattern from the
// route table (never the raw path, so ids do not blow up the number of series).
#pragma once

#include "common/http.hpp"
#include "gateway/route_table.hpp"  // route_pattern(): the label of a path

namespace aisched::gateway {

/// GET /metrics as the route table's handler (for requests that do not come
/// through with_metrics, e.g. the AI agent's tool calls).
void get_metrics(route_call& c);

/// Serves GET /metrics (Content-Type text/plain; version=0.0.4) and passes
/// everything else to `inner`, recording gateway_requests_total{route,code}
/// and gateway_request_duration_seconds{route} when it answers.
handler_fn with_metrics(handler_fn inner);

}  // namespace aisched::gateway
