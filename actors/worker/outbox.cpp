// RocksDB-backed outbox of unacknowledged reports; see outbox.hpp.
#include "actors/worker/outbox.hpp"

#include <rocksdb/db.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/write_batch.h>

#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "storage/rocks_log.hpp"

namespace aisched::worker {

caf::expected<std::unique_ptr<outbox>> outbox::open(const std::string& dir) {
  rocksdb::Options opts;
  opts.create_if_missing = true;
  // Written twice per run (put, then delete once acknowledged) and read only at
  // open: a memtable that appends and sorts at flush, not a skip list that
  // compares keys on every insert.
  opts.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  opts.allow_concurrent_memtable_write = false;
  opts.info_log = storage::make_json_logger();  // never <dir>/LOG: see rocks_log.hpp
  rocksdb::DB* raw = nullptr;
  auto st = rocksdb::DB::Open(opts, dir, &raw);
  if (!st.ok())
    return make_error(errc::storage_error, "cannot open worker outbox: " + st.ToString());
  std::unique_ptr<outbox> out{new outbox};
  out->db_.reset(raw);
  return out;
}

outbox::~outbox() {
  if (db_) db_->Close();
}

caf::error outbox::put(const std::vector<std::pair<std::string, const proto::run_result*>>& reports) {
  rocksdb::WriteBatch batch;
  for (auto& [key, r] : reports) batch.Put(key, proto::encode(*r));
  auto st = db_->Write(rocksdb::WriteOptions{}, &batch);
  if (!st.ok()) return make_error(errc::storage_error, "outbox write failed: " + st.ToString());
  return {};
}

caf::error outbox::erase(const std::vector<std::string>& keys) {
  if (keys.empty()) return {};
  rocksdb::WriteBatch batch;
  for (auto& k : keys) batch.Delete(k);
  auto st = db_->Write(rocksdb::WriteOptions{}, &batch);
  if (!st.ok()) return make_error(errc::storage_error, "outbox delete failed: " + st.ToString());
  return {};
}

caf::expected<std::vector<std::pair<std::string, proto::run_result>>> outbox::load() const {
  std::vector<std::pair<std::string, proto::run_result>> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions{}));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto r = proto::decode<proto::run_result>(
        std::string_view(it->value().data(), it->value().size()));
    if (!r)
      return make_error(errc::corrupted, "outbox record " + it->key().ToString() +
                                             " does not decode: " + view(r.error()).message);
    out.emplace_back(it->key().ToString(), std::move(*r));
  }
  if (!it->status().ok())
    return make_error(errc::storage_error, "outbox read failed: " + it->status().ToString());
  return out;
}

}  // namespace aisched::worker
