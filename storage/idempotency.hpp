// Creates made with an idempotency key: the meta record a create leaves
// (storage/batch_ctx.hpp reads and writes it) and the fingerprint that tells a
// retry of the same request from a different request under the same key.
#pragma once

#include <cstdint>

#include "proto/types.hpp"

namespace aisched::storage {

/// The meta record of a create made with an idempotency key.
struct idempotency_record {
  uint64_t task_id = 0;
  uint64_t fingerprint = 0;  // of the request (task_fingerprint()); 0: not recorded
};

/// What identifies a create request for its idempotency key: the task it asks
/// for, without what the proposer stamps (id, version, times), as FNV-1a of its
/// encoding. So a retry of the same document matches (also re-serialized with
/// other whitespace or key order) and a different document does not. Never 0.
uint64_t task_fingerprint(proto::task t);

}  // namespace aisched::storage
