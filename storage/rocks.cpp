// RocksDB setup, Status conversion and write health; see rocks.hpp.
#include "storage/rocks.hpp"

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/write_batch.h>

#include "obs/metrics.hpp"
#include "proto/errors.hpp"
#include "storage/fault_fs.hpp"
#include "storage/health.hpp"
#include "storage/keys.hpp"
#include "storage/rocks_log.hpp"

namespace aisched::storage {

namespace {

caf::error to_error(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return {};
  if (s.IsCorruption()) return make_error(errc::corrupted, what + ": " + s.ToString());
  if (s.IsNoSpace())
    return make_error(errc::storage_full,
                      what + ": the disk is full (" + s.ToString() +
                          "); writes resume by themselves once space is freed");
  if (s.IsIOError())
    return make_error(errc::storage_unavailable,
                      what + ": the disk failed (" + s.ToString() +
                          "); writes resume by themselves once it works again");
  return make_error(errc::storage_error, what + ": " + s.ToString());
}

/// Records the outcome of a write (or probe) in `h` and the storage metrics.
caf::error recorded(health& h, caf::error err) {
  auto& m = obs::get();
  if (!err) {
    if (!h.ok()) {
      h.record_ok();
      m.storage_healthy.set(1);
    }
    return err;
  }
  auto v = view(err);
  switch (v.code) {
    case errc::storage_full: m.storage_errors_no_space.inc(); break;
    case errc::storage_unavailable: m.storage_errors_io.inc(); break;
    default: m.storage_errors_other.inc(); break;
  }
  m.storage_healthy.set(0);
  h.record_failure(v.code, v.message);
  return err;
}

/// The key prefix whose last insert point a memtable remembers, for the column
/// families written in key order within a prefix. A batch writes its
/// instances in key order (batch_ctx::finish), so most inserts land just
/// after the previous one of their task and skip the skip list's search from
/// the top: a third of the apply's CPU went to those searches (BENCHMARKS.md
/// 2026-12-05). A hint costs about 250 bytes of its memtable (a splice in its
/// arena, a map entry) and goes with it: a burst over many tasks only fills
/// the memtable a little sooner.
///
/// Only point keys (of exactly `key_size` bytes) take a hint: RocksDB 7.8
/// keeps one hint per prefix for both of a memtable's skip lists, and a
/// range deletion's hint used for a point insert breaks the list (its debug
/// build asserts). Retention's range deletions (storage/run_retention.cpp)
/// begin at a shorter key (a task, or a state and a task), out of the domain.
class point_key_prefix final : public rocksdb::SliceTransform {
 public:
  point_key_prefix(size_t prefix, size_t key_size) : prefix_(prefix), key_size_(key_size) {}
  const char* Name() const override { return "aisched.point_key_prefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), prefix_);
  }
  bool InDomain(const rocksdb::Slice& key) const override { return key.size() == key_size_; }

 private:
  size_t prefix_, key_size_;
};

/// The hint's prefix extractor of family `c`; none for families written out
/// of key order or with DeleteRange from point keys (raft_log).
std::shared_ptr<const rocksdb::SliceTransform> insert_hint_prefix(column c) {
  const size_t run = keys::instance_key_size;
  switch (c) {
    case column::instances:  // a task's runs, by slot and shard
      return std::make_shared<point_key_prefix>(8, run);
    case column::instances_by_state:  // state byte, then the task
      return std::make_shared<point_key_prefix>(9, 1 + run);
    case column::attempts:  // a run's key, then the attempt
      return std::make_shared<point_key_prefix>(8, run + 4);
    default: return nullptr;
  }
}

constexpr std::string_view probe_key = "storage_probe";  // default family, never read

}  // namespace

errc health::code() const {
  std::lock_guard<std::mutex> guard(mtx_);
  return code_;
}

std::string health::problem() const {
  std::lock_guard<std::mutex> guard(mtx_);
  return message_;
}

void health::record_ok() {
  std::lock_guard<std::mutex> guard(mtx_);
  code_ = errc::none;
  message_.clear();
  ok_.store(true, std::memory_order_release);
}

void health::record_failure(errc code, std::string message) {
  std::lock_guard<std::mutex> guard(mtx_);
  code_ = code;
  message_ = std::move(message);
  ok_.store(false, std::memory_order_release);
}

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
    case column::controls: return "controls";
  }
  return "?";
}

caf::expected<std::unique_ptr<rocks>> rocks::open(const std::string& dir, open_options opts) {
  rocksdb::DBOptions db_opts;
  std::shared_ptr<rocksdb::Env> fault_env;
  if (opts.fault) {
    fault_env = rocksdb::NewCompositeEnv(
        make_fault_fs(rocksdb::FileSystem::Default(), std::move(opts.fault)));
    db_opts.env = fault_env.get();
  }
  db_opts.create_if_missing = true;
  db_opts.create_missing_column_families = true;
  db_opts.max_background_jobs = 2;
  auto damage = std::make_shared<damage_note>();
  db_opts.info_log = make_json_logger(damage);  // never <dir>/LOG: see rocks_log.hpp
  // A record cut short at the end of the log (the process died mid-append) is
  // dropped; damage anywhere else stops the open. RocksDB's default
  // (point-in-time) would drop everything after the damage, acknowledged writes
  // included, and start as if they had never been made (#41 item 2).
  db_opts.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  // Memtables of all column families together stay under 128 MiB (the largest
  // is flushed beyond that), each under 32 MiB: RocksDB's default of 64 MiB
  // for each of our 14 would let memtables alone take most of a node's memory
  // after a burst of writes, and keep it while the node is idle (#17 item 6;
  // no cost in throughput measured, BENCHMARKS.md "Memory of idle tasks").
  db_opts.db_write_buffer_size = 128 << 20;
  // Without a bound (RocksDB's default: four times every family's memtables,
  // ~3.6 GiB here) the log grew by 1 GB in ten minutes of runs at full rate,
  // kept alive by the families that are rarely written (BENCHMARKS.md "Memory
  // under load").
  db_opts.max_total_wal_size = opts.max_wal_bytes;
  rocksdb::ColumnFamilyOptions cf_opts;
  cf_opts.write_buffer_size = 32 << 20;
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
  for (size_t i = 0; i < column_count; ++i) {
    auto opts = cf_opts;
    opts.memtable_insert_with_hint_prefix_extractor = insert_hint_prefix(static_cast<column>(i));
    descs.emplace_back(column_name(static_cast<column>(i)), opts);
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  auto st = rocksdb::DB::Open(db_opts, dir, descs, &handles, &raw);
  if (st.IsCorruption()) {
    auto where = damage->get();
    return make_error(
        errc::corrupted,
        "cannot open database in '" + dir + "': it is damaged (" + st.ToString() + ")" +
            (where.empty() ? "" : "; RocksDB says: " + where) +
            ". The node does not start rather than lose acknowledged writes: restore the "
            "directory from a backup or, on a member of a group, replace the member with one "
            "started empty (README \"Membership\"), which catches up from the leader");
  }
  if (!st.ok()) return to_error(st, "cannot open database in '" + dir + "'");
  std::unique_ptr<rocks> r{new rocks};
  r->dir_ = dir;
  r->fault_env_ = std::move(fault_env);
  r->health_ = std::make_shared<storage::health>();
  obs::get().storage_healthy.set(1);
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

namespace {

/// The failure `h` holds, as write() gave it when it happened.
caf::error still_failing(const health& h) {
  return make_error(h.code(), h.problem());
}

}  // namespace

caf::error rocks::write(rocksdb::WriteBatch& batch, bool sync) {
  std::lock_guard<std::mutex> guard(write_mtx_);
  if (!health_->ok()) return still_failing(*health_);
  rocksdb::WriteOptions opts;
  opts.sync = sync;
  return recorded(*health_, to_error(db_->Write(opts, &batch), "write failed"));
}

caf::error rocks::sync_wal() {
  std::lock_guard<std::mutex> guard(write_mtx_);
  if (!health_->ok()) return still_failing(*health_);
  return recorded(*health_, to_error(db_->FlushWAL(true), "WAL sync failed"));
}

caf::error rocks::recover() {
  std::lock_guard<std::mutex> guard(write_mtx_);
  // Resume() clears RocksDB's background error (after a failed write it
  // refuses all writes) once the cause is gone. It answers Busy while its own
  // recovery runs (ENOSPC has one): the probe below tells whether writes work.
  auto st = db_->Resume();
  if (!st.ok() && st.severity() >= rocksdb::Status::Severity::kFatalError)
    return recorded(*health_,
                    make_error(errc::internal, "the database cannot go on after " + st.ToString() +
                                                   " (RocksDB marks it fatal): only reopening "
                                                   "it mends that"));
  rocksdb::WriteBatch probe;
  probe.Put(default_cf_, probe_key, "");
  rocksdb::WriteOptions opts;
  opts.sync = true;
  return recorded(*health_, to_error(db_->Write(opts, &probe), "write failed"));
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
  std::lock_guard<std::mutex> guard(write_mtx_);
  if (!health_->ok()) return still_failing(*health_);  // RocksDB would refuse, or assert
  std::vector<rocksdb::ColumnFamilyHandle*> all(handles_.begin(), handles_.end());
  auto st = db_->Flush(rocksdb::FlushOptions{}, all);
  if (!st.ok()) return to_error(st, "flush failed");
  return to_error(db_->FlushWAL(true), "WAL sync failed");
}

}  // namespace aisched::storage
