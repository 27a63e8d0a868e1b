// Operator routes under /api/v1/admin: the log level, read and changed at
// runtime (`GET` / `PUT /api/v1/admin/log-level {"level"}`), taking effect at
// once for every thread of the node (no restart, no SIGHUP). Per node: a
// cluster's members each keep their own level. Admin role once auth is on.
#pragma once

#include <string>
#include <vector>

#include "gateway/http.hpp"

namespace aisched::gateway {

/// Serves `req` (its path split into `seg`, seg[2] == "admin").
void admin_routes(const http_request& req, const std::vector<std::string>& seg, reply_fn& reply);

}  // namespace aisched::gateway
