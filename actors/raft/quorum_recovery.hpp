// Recovery from a lost quorum, the explicit way (issue 41): when a majority of
// a group's members is gone for good, an operator makes one survivor the only
// member of a new group on its data, with `aisched recover --force-new-cluster`, never by
// editing --peers (which the membership guard refuses). The survivor's log gets
// a `set_membership` naming it alone, its recorded bootstrap membership says the
// same, and its data gets a new cluster id, so members of the old group that
// come back with their old data are refused instead of electing a second
// leader. The others are added back empty, with --join and the members API.
// What the lost majority acknowledged but this survivor never received is lost:
// pick the survivor with the longest log (aisched-inspect, or the node's
// "state recovered" line).
#pragma once

#include <string>

#include <caf/expected.hpp>

#include "actors/raft/raft_actor.hpp"

namespace aisched::raft {

/// What recover_quorum changed, for the operator.
struct recovery_report {
  std::string members_before;  // "{n1,n2,n3}"
  std::string cluster_before, cluster_after;
  uint64_t last_index = 0;  // of the appended membership entry
  uint64_t term = 0;        // of that entry: a new one, which this member voted for
  std::string cluster_addr;  // where the member is recorded to listen
};

/// Makes `opts.node_id` the only member of the group whose data `db` holds:
/// records a new cluster id derived from the old one, appends
/// `set_membership{this member}` (at its stored cluster address, else
/// opts.cluster_addr) to the raft log in a new term it voted for (synced), and
/// records it as the bootstrap membership. The node then starts without
/// --peers and leads at once. Errors: invalid_argument when `db` holds no
/// group (a fresh data directory), the member is no voter of it (a wrong
/// --node-id, a removed member) or `opts.join`; storage errors as they come.
[[nodiscard]] caf::expected<recovery_report> recover_quorum(storage::rocks& db,
                                                            const raft_options& opts);

}  // namespace aisched::raft
