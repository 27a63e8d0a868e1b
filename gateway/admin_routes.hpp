// Node administration under /api/v1/admin: the log level, read and changed at
// runtime (`GET` / `PUT /api/v1/admin/log-level {"level"}`), taking effect at
// once for every thread of the node (no restart, no SIGHUP). Per node: a
// cluster's members each keep their own level. Changing it is cluster_admin's.
#pragma once

#include "gateway/route_table.hpp"

namespace aisched::gateway {

void get_log_level(route_call& c);  // GET /api/v1/admin/log-level
void set_log_level(route_call& c);  // PUT /api/v1/admin/log-level {"level"}

}  // namespace aisched::gateway
