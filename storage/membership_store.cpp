// Membership in the state machine's meta column family; see membership_store.hpp.
#include "storage/membership_store.hpp"

#include <rocksdb/write_batch.h>

#include "proto/codec.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

namespace {

constexpr std::string_view membership_key = keys::membership;
constexpr std::string_view bootstrap_key = keys::bootstrap_members;  // in raft_meta
constexpr std::string_view cluster_id_key = keys::cluster_id;        // in raft_meta

caf::expected<std::optional<proto::membership>> read_from(rocks& db, column c,
                                                         std::string_view key) {
  auto bytes = db.get(c, key);
  if (!bytes) return bytes.error();
  if (!*bytes) return std::optional<proto::membership>{};
  auto x = proto::decode<proto::set_membership>(**bytes);
  if (!x) return x.error();
  return std::optional<proto::membership>{std::move(x->members)};
}

}  // namespace

void write_membership(rocks& db, rocksdb::WriteBatch& batch, const proto::membership& m) {
  batch.Put(db.cf(column::meta), membership_key, proto::encode(proto::set_membership{m}));
}

caf::expected<std::optional<proto::membership>> read_membership(rocks& db) {
  return read_from(db, column::meta, membership_key);
}

caf::error write_bootstrap_membership(rocks& db, const proto::membership& m) {
  rocksdb::WriteBatch batch;
  batch.Put(db.cf(column::raft_meta), bootstrap_key, proto::encode(proto::set_membership{m}));
  return db.write(batch, true);
}

caf::expected<std::optional<proto::membership>> read_bootstrap_membership(rocks& db) {
  return read_from(db, column::raft_meta, bootstrap_key);
}

caf::error write_cluster_id(rocks& db, const std::string& id) {
  rocksdb::WriteBatch batch;
  batch.Put(db.cf(column::raft_meta), cluster_id_key, id);
  return db.write(batch, true);
}

caf::expected<std::string> read_cluster_id(rocks& db) {
  auto bytes = db.get(column::raft_meta, cluster_id_key);
  if (!bytes) return bytes.error();
  return *bytes ? std::string(**bytes) : std::string();
}

}  // namespace aisched::storage
