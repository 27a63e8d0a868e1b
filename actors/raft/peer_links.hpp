// How a raft actor reaches the other members (part of raft_actor.cpp, split
// out by concern): the member with the smaller id dials the other (over the
// cluster port, or through raft_options::resolve_peer) and says hello; the other
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

/// Waiting side: the dialer `id` introduced itself with its raft actor and its
/// node's endpoint; false if `id` is not a member that dials this one.
bool accept_hello(node_actor::stateful_pointer<raft_state> self, const std::string& id,
                  const caf::actor& raft, const caf::actor& endpoint);

/// Waiting side: a message of member `id` arrived from `sender` while we hold no
/// handle for it. We saw the dialer's link go (a down message) while the dialer
/// did not see ours go: CAF carried its messages over a newer connection
/// between the two nodes (e.g. one that a gateway dialed), so the dialer has no
/// reason to say hello again, and without this we could never answer it.
void adopt_sender(node_actor::stateful_pointer<raft_state> self, const std::string& id,
                  const caf::strong_actor_ptr& sender);

}  // namespace aisched::raft
