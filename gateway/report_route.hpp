// POST /api/v1/instances/{id}/report from an external worker (DESIGN §6).
#pragma once

#include <string>

#include "gateway/api.hpp"

namespace aisched::gateway {

/// Validates the report body strictly and commits it; a report on a run of
/// another tenant is 404, a report on a finished run is acknowledged.
void report_route(const api_context& ctx, const std::string& id, http_request& req,
                  reply_fn& reply);

/// POST /api/v1/instances/{id}/report, as the route table's handler.
void report_instance(route_call& c);

}  // namespace aisched::gateway
