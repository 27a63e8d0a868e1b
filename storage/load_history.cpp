// Worker load history in RocksDB; see load_history.hpp.
#include "storage/load_history.hpp"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <limits>

#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

namespace {

constexpr std::string_view prefix = keys::load_prefix;

std::string time_key(unix_ms at) {
  std::string k(prefix);
  keys::put_i64(k, at);
  return k;
}

std::string sample_key(const proto::load_sample& s) { return time_key(s.at) + s.worker_id; }

}  // namespace

void write_load_samples(rocks& db, rocksdb::WriteBatch& batch, const proto::record_load& c) {
  if (c.prune_before > 0)
    batch.DeleteRange(db.cf(column::meta), time_key(std::numeric_limits<int64_t>::min()),
                      time_key(c.prune_before));
  for (auto& s : c.samples) batch.Put(db.cf(column::meta), sample_key(s), proto::encode(s));
}

caf::expected<proto::load_history> read_load_history(rocks& db, const proto::load_query& q) {
  proto::load_history out;
  auto it = db.iterate(column::meta);
  auto end = time_key(q.until == 0 ? std::numeric_limits<int64_t>::max() : q.until + 1);
  // Every sample is scanned once at most: 7 days of 30 s rounds per worker.
  for (it->Seek(time_key(q.since)); it->Valid(); it->Next()) {
    auto k = it->key();
    if (!k.starts_with(rocksdb::Slice(prefix.data(), prefix.size())) ||
        k.compare(rocksdb::Slice(end)) >= 0)
      break;
    auto worker = std::string_view(k.data(), k.size()).substr(prefix.size() + 8);
    if (!q.worker_id.empty() && worker != q.worker_id) continue;
    if (out.items.size() >= q.limit) {
      out.truncated = true;
      break;
    }
    auto s =
        proto::decode<proto::load_sample>(std::string_view(it->value().data(), it->value().size()));
    if (!s) return s.error();
    out.items.push_back(std::move(*s));
  }
  if (!it->status().ok())
    return make_error(errc::storage_error, "load history scan: " + it->status().ToString());
  return out;
}

}  // namespace aisched::storage
