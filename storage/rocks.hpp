// One RocksDB database per node with aisched's column families (DESIGN §5).
// Owns the DB handle; every rocksdb::Status is converted to a caf::error here,
// once. Thread-safe as RocksDB is: concurrent reads and writes are fine.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
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
};
constexpr size_t column_count = 12;

/// Name of a column family as stored on disk.
const char* column_name(column c);

class rocks {
 public:
  /// Opens (creating if needed) the database in `dir` with all column families.
  static caf::expected<std::unique_ptr<rocks>> open(const std::string& dir);

  ~rocks();
  rocks(const rocks&) = delete;
  rocks& operator=(const rocks&) = delete;

  rocksdb::DB* db() { return db_.get(); }
  rocksdb::ColumnFamilyHandle* cf(column c) { return handles_[static_cast<size_t>(c)]; }

  /// Writes `batch` atomically; `sync` forces an fsync of the WAL before returning.
  caf::error write(rocksdb::WriteBatch& batch, bool sync);

  /// Point read; nullopt when absent, an error when RocksDB fails.
  caf::expected<std::optional<std::string>> get(column c, std::string_view key);

  /// A new iterator over `c` (caller owns it).
  std::unique_ptr<rocksdb::Iterator> iterate(column c);

  /// Flushes memtables and the WAL; called on clean shutdown.
  caf::error flush();

  const std::string& dir() const { return dir_; }

 private:
  rocks() = default;
  std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  std::array<rocksdb::ColumnFamilyHandle*, column_count> handles_{};
  rocksdb::ColumnFamilyHandle* default_cf_ = nullptr;
};

}  // namespace aisched::storage
