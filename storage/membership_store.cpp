// Membership in the state machine's meta column family; see membership_store.hpp.
#include "storage/membership_store.hpp"

#include <rocksdb/write_batch.h>

#include "proto/codec.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

namespace {

constexpr const char* membership_key = "membership";

}  // namespace

void write_membership(rocks& db, rocksdb::WriteBatch& batch, const proto::membership& m) {
  batch.Put(db.cf(column::meta), membership_key, proto::encode(proto::set_membership{m}));
}

caf::expected<std::optional<proto::membership>> read_membership(rocks& db) {
  auto bytes = db.get(column::meta, membership_key);
  if (!bytes) return bytes.error();
  if (!*bytes) return std::optional<proto::membership>{};
  auto x = proto::decode<proto::set_membership>(**bytes);
  if (!x) return x.error();
  return std::optional<proto::membership>{std::move(x->members)};
}

}  // namespace aisched::storage
