// POST /api/v1/cluster/members {"id", "cluster_addr", "http_addr"} adds a
// member as a learner (the leader promotes it to voter once it caught up);
// DELETE /api/v1/cluster/members/{id} removes one, the leader included. Both
// are admin-only, go to this node's raft actor (forwarded to the leader like
// any write) and answer once the change committed: 409 while another change
// is in progress, 400 naming the field for bad input.
#pragma once

#include <string>
#include <vector>

#include "gateway/api.hpp"

namespace aisched::gateway {

/// Serves the two routes above; false if `req` is neither.
bool cluster_member_routes(const api_context& ctx, const http_request& req,
                           const std::vector<std::string>& seg, reply_fn& reply);

}  // namespace aisched::gateway
