// Worker load history (GET /api/v1/workers/{id}/load-history): the samples the
// leader commits with `record_load`, kept in the `meta` column family under
// "load/" + big-endian sample time + worker id, so a time range is one
// contiguous scan and pruning what is older than 7 days is one DeleteRange.
// Replicated like every other state, so any member answers the same history.
#pragma once

#include <caf/expected.hpp>

#include "proto/commands.hpp"
#include "proto/interfaces.hpp"

namespace rocksdb {
class WriteBatch;
}

namespace aisched::storage {

class rocks;

/// Adds `c`'s samples to `batch` and drops the samples older than `c.prune_before`.
void write_load_samples(rocks& db, rocksdb::WriteBatch& batch, const proto::record_load& c);

/// The samples `q` asks for, oldest first.
[[nodiscard]] caf::expected<proto::load_history> read_load_history(rocks& db, const proto::load_query& q);

}  // namespace aisched::storage
