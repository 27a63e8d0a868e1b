// RocksDB setup and Status conversion; see rocks.hpp.
#include "storage/rocks.hpp"

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "proto/errors.hpp"

namespace aisched::storage {

namespace {

caf::error to_error(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return {};
  if (s.IsCorruption()) return make_error(errc::corrupted, what + ": " + s.ToString());
  return make_error(errc::storage_error, what + ": " + s.ToString());
}

}  // namespace

const char* column_name(column c) {
  switch (c) {
    case column::raft_log: return "raft_log";
    case column::raft_meta: return "raft_meta";
    case column::tasks: return "tasks";
    case column::task_state: return "task_state";
    case column::instances: return "instances";
    case column::instances_by_state: return "instances_by_state";
    case column::meta: return "meta";
    case column::auth: return "auth";
    case column::audit: return "audit";
    case column::ai_conversations: return "ai_conversations";
    case column::ai_analysis: return "ai_analysis";
    case column::attempts: return "attempts";
  }
  return "?";
}

caf::expected<std::unique_ptr<rocks>> rocks::open(const std::string& dir) {
  rocksdb::DBOptions db_opts;
  db_opts.create_if_missing = true;
  db_opts.create_missing_column_families = true;
  db_opts.max_background_jobs = 2;
  db_opts.keep_log_file_num = 5;
  rocksdb::ColumnFamilyOptions cf_opts;
  // Most state-machine reads are point lookups, many of keys that do not exist
  // (a fire checks that its instance is new): bloom filters answer those
  // without searching the memtable's skip list or reading SST blocks.
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  cf_opts.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  cf_opts.memtable_prefix_bloom_size_ratio = 0.02;
  cf_opts.memtable_whole_key_filtering = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  descs.emplace_back(rocksdb::kDefaultColumnFamilyName, cf_opts);
  for (size_t i = 0; i < column_count; ++i)
    descs.emplace_back(column_name(static_cast<column>(i)), cf_opts);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  auto st = rocksdb::DB::Open(db_opts, dir, descs, &handles, &raw);
  if (!st.ok()) return to_error(st, "cannot open database in '" + dir + "'");
  std::unique_ptr<rocks> r{new rocks};
  r->dir_ = dir;
  r->db_.reset(raw);
  r->default_cf_ = handles[0];
  for (size_t i = 0; i < column_count; ++i) r->handles_[i] = handles[i + 1];
  return r;
}

rocks::~rocks() {
  if (!db_) return;
  for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
  db_->DestroyColumnFamilyHandle(default_cf_);
  db_->Close();
}

caf::error rocks::write(rocksdb::WriteBatch& batch, bool sync) {
  rocksdb::WriteOptions opts;
  opts.sync = sync;
  return to_error(db_->Write(opts, &batch), "write failed");
}

caf::expected<std::optional<std::string>> rocks::get(column c, std::string_view key) {
  std::string value;
  auto st = db_->Get(rocksdb::ReadOptions{}, cf(c), rocksdb::Slice(key.data(), key.size()), &value);
  if (st.IsNotFound()) return std::optional<std::string>{};
  if (!st.ok()) return to_error(st, std::string("read from ") + column_name(c) + " failed");
  return std::optional<std::string>{std::move(value)};
}

std::unique_ptr<rocksdb::Iterator> rocks::iterate(column c) {
  return std::unique_ptr<rocksdb::Iterator>(db_->NewIterator(rocksdb::ReadOptions{}, cf(c)));
}

caf::error rocks::flush() {
  std::vector<rocksdb::ColumnFamilyHandle*> all(handles_.begin(), handles_.end());
  auto st = db_->Flush(rocksdb::FlushOptions{}, all);
  if (!st.ok()) return to_error(st, "flush failed");
  return to_error(db_->FlushWAL(true), "WAL sync failed");
}

}  // namespace aisched::storage
