// The raft actor's side of membership changes (part of raft_actor.cpp, split
// out by concern): links follow the membership in the core (members added by
// a `set_membership` entry are dialed at the cluster address the entry names,
// links to removed members are dropped), and operators' membership_change
// requests become single-server changes on the leader's core.
#pragma once

#include <optional>
#include <string>

#include "actors/raft/raft_actor.hpp"

namespace aisched::raft {

/// The membership a member of `opts` starts with when its state holds none:
/// itself and its --peers as voters (with their cluster addresses), or nobody
/// for a member that joins.
proto::membership initial_members(const raft_options& opts);

/// Where member `m` listens: its cluster_addr, else its --peers address; nullopt
/// if neither is known (it dials us, see dials()).
std::optional<peer_address> address_for(const proto::member_info& m, const raft_options& opts);

/// Matches st.peers to the core's membership: links to added members, drops
/// removed ones. Cheap when nothing changed; call after every ready.
void sync_links(node_actor::stateful_pointer<raft_state> self);

/// Proposes `change` on this member's core (it must lead): the index of the
/// new entry, or the core's refusal.
caf::expected<uint64_t> propose_change(core& member, const proto::membership_change& change);

}  // namespace aisched::raft
