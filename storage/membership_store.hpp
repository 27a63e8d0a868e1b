// The raft group's membership as of the state machine's applied index, kept in
// the `meta` column family under "membership" by the state machine when it
// applies a `set_membership`. Since `meta` is part of every snapshot, a
// snapshot carries the membership at its index, and a member whose log was
// compacted restores it from here (actors/raft/raft_actor restore()). Also the
// bootstrap membership a member recorded at its first start, in the member's own
// `raft_meta` (not replicated, not in snapshots), which a restart compares its
// --peers with, and the id of the cluster the data belongs to, which members
// compare when they link (actors/raft/membership_guard.hpp).
#pragma once

#include <optional>

#include <caf/expected.hpp>

#include "proto/membership.hpp"

namespace rocksdb {
class WriteBatch;
}  // namespace rocksdb

namespace aisched::storage {

class rocks;

/// Adds the write of `m` to `batch` (the state machine's batch of the entry).
void write_membership(rocks& db, rocksdb::WriteBatch& batch, const proto::membership& m);

/// The last membership applied, or nullopt if none ever was (the group still
/// has the membership it was started with).
[[nodiscard]] caf::expected<std::optional<proto::membership>> read_membership(rocks& db);

/// Records `m` as the membership this member bootstrapped its group with (synced).
[[nodiscard]] caf::error write_bootstrap_membership(rocks& db, const proto::membership& m);

/// The membership recorded by write_bootstrap_membership, or nullopt if none
/// was (a member that joined a running group, or data from before the record).
[[nodiscard]] caf::expected<std::optional<proto::membership>> read_bootstrap_membership(
    rocks& db);

/// Records `id` as the id of the cluster this member's data belongs to
/// (synced; in raft_meta, not replicated: every member records it itself).
[[nodiscard]] caf::error write_cluster_id(rocks& db, const std::string& id);

/// The cluster id recorded by write_cluster_id, or "" if none was.
[[nodiscard]] caf::expected<std::string> read_cluster_id(rocks& db);

}  // namespace aisched::storage
