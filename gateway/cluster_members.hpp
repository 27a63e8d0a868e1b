// POST /api/v1/cluster/members {"id", "cluster_addr", "http_addr"} adds a
// member as a learner (the leader promotes it to voter once it caught up);
// DELETE /api/v1/cluster/members/{id} removes one, the leader included. Both
// are cluster_admin only (gateway/route_table.cpp), go to this node's raft actor (forwarded to the leader like
// any write) and answer once the change committed: 409 while another change
// is in progress, 400 naming the field for bad input.
#pragma once

#include <string>
#include <vector>

#include "gateway/api.hpp"

namespace aisched::gateway {

void add_cluster_member(route_call& c);     // POST /api/v1/cluster/members
void remove_cluster_member(route_call& c);  // DELETE /api/v1/cluster/members/{id}

}  // namespace aisched::gateway
