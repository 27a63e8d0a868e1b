// GET /api/v1/cluster: the leader, and each member's own status (role, term,
// commit / applied index, HTTP address) asked from it over the cluster port,
// learners (members added at runtime that do not vote yet) included; a
// member that does not answer within a second is listed as unreachable with
// what this member knows of it. Reads on any member are served from its own
// state machine (possibly a little behind the leader); writes are forwarded
// to the leader.
#pragma once

#include "gateway/api.hpp"

namespace aisched::gateway {

void cluster_view(const api_context& ctx, reply_fn reply);

/// GET /api/v1/cluster, as the route table's handler.
void get_cluster(route_call& c);

}  // namespace aisched::gateway
