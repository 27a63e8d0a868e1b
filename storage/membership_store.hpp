// The raft group's membership as of the state machine's applied index, kept in
// the `meta` column family under "membership" by the state machine when it
// applies a `set_membership`. Since `meta` is part of every snapshot, a
// snapshot carries the membership at its index, and a member whose log was
// compacted restores it from here (actors/raft/raft_actor restore()).
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

}  // namespace aisched::storage
