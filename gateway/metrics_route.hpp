// GET /metrics and the gateway's own metrics. with_metrics() wraps the REST
// handler: it answers /metrics with the process registry in Prometheus text
// format and times every other request, labelled by its route pattern (never
// the raw path, so ids do not blow up the number of series).
#pragma once

#include <string_view>
#include <vector>

#include "gateway/http.hpp"

namespace aisched::gateway {

/// The route pattern `path` belongs to ("/api/v1/tasks/{id}/pause"), or
/// "other" for a path no route serves. Patterns come from a fixed table, so
/// the result has bounded cardinality whatever clients send.
std::string_view route_pattern(std::string_view path);

/// Whether `path` matches `pattern` segment by segment (`{...}` matches any
/// one segment; empty segments are skipped like the router does).
bool route_matches(std::string_view pattern, std::string_view path);

/// Every route pattern the gateway serves, `{...}` marking a path parameter
/// ("/api/v1/tasks/{id}"). The OpenAPI test checks gateway/openapi.json against it.
std::vector<std::string_view> route_patterns();

/// Serves GET /metrics (Content-Type text/plain; version=0.0.4) and passes
/// everything else to `inner`, recording gateway_requests_total{route,code}
/// and gateway_request_duration_seconds{route} when it answers.
handler_fn with_metrics(handler_fn inner);

}  // namespace aisched::gateway
