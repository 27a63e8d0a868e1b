// What a raft actor shows of itself (part of raft_actor.cpp, split out by
// concern): its raft_status for GET /api/v1/cluster and /readyz, and the
// details aisched-inspect lists.
#pragma once

#include <map>
#include <string>

#include "actors/raft/raft_actor.hpp"

namespace aisched::raft {

/// This member's status. While fenced (raft_state::fault) it is a follower
/// that knows no leader: it takes no part in the group.
proto::raft_status status_of(const raft_state& st);

/// The raft part of aisched-inspect: the status plus the proposals waiting for
/// their commit; one "peer.<id>" entry per other member.
std::map<std::string, std::string> details_of(const raft_state& st);

}  // namespace aisched::raft
