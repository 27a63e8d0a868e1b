// The start-up guard of a member's membership (issue 41 item 1): a data
// directory's membership (raft log, snapshot, state) is authoritative, and a
// --peers that disagrees with it is refused instead of starting a second group
// on the same data. Records the bootstrap membership at a member's first start,
// so that later starts can compare. Called by the node before open_member().
#pragma once

#include <caf/error.hpp>

#include "actors/raft/raft_actor.hpp"

namespace aisched::raft {

/// Checks the members `opts` names (this node and its --peers; no --peers is
/// this node alone) against the membership stored in `db`, and records them as
/// the bootstrap membership if `db` stores none yet (a fresh data directory).
///
/// The stored membership is the latest `set_membership` in the raft log, else
/// the one the state machine applied (or a snapshot brought), else the one
/// recorded at the first start. The flags are accepted if they name the same
/// member ids as the recorded bootstrap membership (the original --peers stay
/// valid after members were added or removed with the membership API: README,
/// the membership in the log takes precedence), or, once a change was applied
/// (restore() then starts from the applied membership, not from the flags), as
/// the stored one. Any other set is refused. A member started with --join is
/// not checked (the group tells it its membership) and records no membership.
///
/// Returns an `errc::invalid_argument` error (field "peers") whose message names
/// both memberships when refused, a storage error if `db` cannot be read or the
/// record written, or an empty error. Call once at start, before open_member().
[[nodiscard]] caf::error check_stored_membership(storage::rocks& db, const raft_options& opts);

/// The membership stored in `db`: the latest `set_membership` in the raft log,
/// else the one the state machine applied (or a snapshot brought), else the one
/// recorded at the first start; nullopt if none is (a fresh data directory).
[[nodiscard]] caf::expected<std::optional<proto::membership>> stored_membership(
    storage::rocks& db);

/// The id of a cluster bootstrapped with `members` and `token` (--cluster-token):
/// the first 16 bytes of SHA-256 over the token and the members' ids, sorted,
/// as 32 hex digits. Every member that bootstraps with the same --peers and
/// token derives the same id without asking another (etcd derives its cluster
/// id from its initial cluster and token likewise). Addresses are left out: a
/// member may spell its own (--cluster-addr) unlike the others' --peers.
std::string derive_cluster_id(const proto::membership& members, const std::string& token);

/// The id of the cluster `db`'s data belongs to. Call after
/// check_stored_membership. The id recorded at the group's first start, else
/// (the first start, or data from before the record) one derived from the
/// recorded bootstrap membership and `token`, recorded now. A member started
/// with --join, or whose data records no bootstrap membership, has none until
/// a member of its group says hello ("": learned and recorded then,
/// peer_links.cpp). Members of other clusters are refused.
[[nodiscard]] caf::expected<std::string> stored_cluster_id(storage::rocks& db,
                                                           const raft_options& opts,
                                                           const std::string& token);

}  // namespace aisched::raft
