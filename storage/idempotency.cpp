// Creates made with an idempotency key; see idempotency.hpp.
#include "storage/idempotency.hpp"

#include "proto/codec.hpp"

namespace aisched::storage {

uint64_t task_fingerprint(proto::task t) {
  t.id = 0;
  t.version = 0;
  t.created_at = t.updated_at = 0;
  uint64_t h = 1469598103934665603ULL;
  // CAF's encoding, as when the fingerprints stored with idempotency records
  // were made (formats 0 and 1): a retried create after an upgrade still matches.
  for (unsigned char ch : proto::format_1::encode(t)) h = (h ^ ch) * 1099511628211ULL;
  return h == 0 ? 1 : h;
}

}  // namespace aisched::storage
