// How a raft actor reaches the other members (part of raft_actor.cpp, split
// out by concern): one member of each pair dials the other (a voter a learner,
// else the smaller id; see dials()) over the cluster port, or through
// raft_options::resolve_peer, and says hello; the other
// accepts the hello. Both record the other node's endpoint with
// proto::remember_member so that nobody dials a second connection; see dials().
#pragma once

#include <string>

#include "actors/raft/raft_actor.hpp"

namespace aisched::raft {

/// "host:port" of a member, as raft_status and proto::known_member spell it.
std::string address_of(const peer_address& a);

/// Reaches peer `id` if this member dials it (see dials()); retries until it can.
void connect(node_actor::stateful_pointer<raft_state> self, const std::string& id);

/// Waiting side: the dialer `id` introduced itself with its cluster id, the
/// data format it speaks, its raft actor and its node's endpoint. Answers this
/// member's cluster id, after adopting `cluster` if it had none (a member that
/// joins: recorded in the data directory). An error if `id` is not a member
/// that dials this one, or if it belongs to another cluster or speaks another
/// format (forbidden, naming both; the peer is marked refused).
caf::expected<std::string> accept_hello(node_actor::stateful_pointer<raft_state> self,
                                        const std::string& id, const std::string& cluster,
                                        uint32_t format, const caf::actor& raft,
                                        const caf::actor& endpoint);

/// Whether a message that says it is from member `id` and came from `sender`
/// is one to act on: never from a member refused as another cluster's, nor
/// from another actor than the one we hold for `id` (a process that only knows
/// our handle cannot speak for a member). A message without a sender (CAF 0.17
/// gives none over a connection its routing table did not map) is acted on. A member we hold no handle for is
/// accepted as before: one that joins hears from a leader it does not know, and
/// a dialer whose link we saw go (a down message) while it did not see ours go
/// is adopted: CAF carried its messages over a newer connection between the two
/// nodes (e.g. one that a gateway dialed), so it has no reason to say hello
/// again, and without this we could never answer it.
bool accept_from(node_actor::stateful_pointer<raft_state> self, const std::string& id,
                 const caf::strong_actor_ptr& sender);

}  // namespace aisched::raft
