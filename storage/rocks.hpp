// One RocksDB database per node with aisched's column families (DESIGN §5).
// Owns the DB handle; every rocksdb::Status is converted to a caf::error here,
// once (ENOSPC -> storage_full, other I/O errors -> storage_unavailable), and
// every write's outcome is recorded in health(). Thread-safe as RocksDB is.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class Iterator;
class WriteBatch;
}  // namespace rocksdb

namespace aisched::storage {

/// The column families. `meta` holds the applied index and schema version.
enum class column : uint8_t {
  raft_log,            // big-endian index -> encoded proto::log_entry
  raft_meta,           // "hard_state" -> term + vote
  tasks,               // big-endian task id -> encoded proto::task
  task_state,          // big-endian task id -> encoded per-task runtime (last slot ...)
  instances,           // (task, slot, shard) -> encoded proto::instance
  instances_by_state,  // state byte + instance key -> ""
  meta,                // "applied_index", "next_task_id", "schema_version"
  auth,                // "u/"+name -> user, "t/"+id -> api_token, "h/"+sha256 hex -> token id
  audit,               // tenant, NUL, big-endian log index, big-endian u32 -> audit_entry
  ai_conversations,    // node-local, not replicated nor in snapshots: the AI agent's
                       // conversations and messages (actors/llm_agent/conversation_store)
  ai_analysis,         // "tenant/instance id" -> encoded proto::failure_analysis (node-local,
                       // not replicated: not in snapshots; see actors/ai_features)
  attempts,            // instance key + big-endian u32 attempt -> encoded proto::attempt_record
  controls,            // "p/" or "c/" + tenant, NUL, name -> encoded proto::pool / calendar
};
constexpr size_t column_count = 13;

/// Name of a column family as stored on disk.
const char* column_name(column c);

/// What an injected storage fault makes file writes fail with (tests only):
/// every write with ENOSPC or EIO, or only fsyncs with EIO (appends succeed).
enum class fault_kind : uint8_t { none, no_space, io_error, sync_error };

struct open_options {
  /// Test hook, off (empty) in every normal start: asked before each file
  /// write RocksDB makes (create, append, sync); while it answers other than
  /// `none`, that write fails with ENOSPC or EIO (storage/fault_fs.cpp).
  std::function<fault_kind()> fault;
  /// The write-ahead log files are kept to about this size: beyond it, the
  /// column families whose writes hold the oldest file are flushed, so a
  /// family written rarely does not keep every file since its last write.
  uint64_t max_wal_bytes = 256 << 20;
};

/// The test hook behind `aisched --fault-file PATH`: writes fail while `path`
/// exists, with EIO if its first word is "eio", only fsyncs (with EIO) if it
/// is "esync", else with ENOSPC.
std::function<fault_kind()> fault_while_file_exists(std::string path);

class health;

class rocks {
 public:
  /// Opens (creating if needed) the database in `dir` with all column families.
  [[nodiscard]] static caf::expected<std::unique_ptr<rocks>> open(const std::string& dir,
                                                    open_options opts = {});

  ~rocks();
  rocks(const rocks&) = delete;
  rocks& operator=(const rocks&) = delete;

  rocksdb::DB* db() { return db_.get(); }
  rocksdb::ColumnFamilyHandle* cf(column c) { return handles_[static_cast<size_t>(c)]; }

  /// Writes `batch` atomically; `sync` forces an fsync of the WAL before
  /// returning. A failure is errc::storage_full (no space), storage_unavailable
  /// (another I/O error) or storage_error, and is recorded in health(); after
  /// one, every write is refused with the same error, without reaching
  /// RocksDB, until recover() succeeds. Writes are serialised: RocksDB 7.8
  /// asserts (and aborts) when a second writer appends to a WAL whose last
  /// append failed before the first writer recorded the failure, which a real
  /// full disk shows (tests/integration/tmpfs_full_test).
  [[nodiscard]] caf::error write(rocksdb::WriteBatch& batch, bool sync);

  /// Syncs the WAL (writes made without sync become durable), under the same
  /// gate as write().
  [[nodiscard]] caf::error sync_wal();

  /// After a failed write: asks RocksDB to resume from its background error,
  /// then writes and syncs a probe record. Empty error (and health() ok) once
  /// writes succeed again; else the reason, as write() gives it, or
  /// errc::internal when RocksDB cannot resume at all (a fatal background
  /// error, as EIO on the WAL is): only reopening the database mends that, so
  /// the node exits (crash-only) and its supervisor restarts it. May block on
  /// a flush: call it from a detached actor or thread.
  [[nodiscard]] caf::error recover();

  /// The outcome of the last write or recovery probe. Shared, so readers (the
  /// gateway's /readyz) may keep it beyond this object's lifetime.
  std::shared_ptr<const storage::health> health() const { return health_; }

  /// Point read; nullopt when absent, an error when RocksDB fails.
  [[nodiscard]] caf::expected<std::optional<std::string>> get(column c, std::string_view key);

  /// A new iterator over `c` (caller owns it).
  std::unique_ptr<rocksdb::Iterator> iterate(column c);

  /// Flushes memtables and the WAL; called on clean shutdown.
  [[nodiscard]] caf::error flush();

  const std::string& dir() const { return dir_; }

 private:
  rocks() = default;
  std::string dir_;
  std::shared_ptr<void> fault_env_;  // the test hook's Env; declared before db_ to outlive it
  std::unique_ptr<rocksdb::DB> db_;
  std::array<rocksdb::ColumnFamilyHandle*, column_count> handles_{};
  rocksdb::ColumnFamilyHandle* default_cf_ = nullptr;
  std::shared_ptr<storage::health> health_;
  std::mutex write_mtx_;  // one writer at a time, and none after a failure but recover()
};

}  // namespace aisched::storage
