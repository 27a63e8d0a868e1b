// RocksDB's own diagnostics as lines of the node's JSON log (common/log), for
// every RocksDB a node opens (the state in storage/rocks, the worker's outbox).
// RocksDB's default writes them to <dir>/LOG, and RocksDB 7.8's file logger
// aborts the process on its next line after an append failed: a full disk
// killed the node there (tests/integration/tmpfs_full_test).
#pragma once

#include <memory>
#include <mutex>
#include <string>

namespace rocksdb {
class Logger;
}  // namespace rocksdb

namespace aisched::storage {

/// The last line RocksDB logged about damage (it names the file and what it
/// dropped), kept so a failed open can say where the damage is. Thread-safe.
class damage_note {
 public:
  void set(std::string line);
  std::string get() const;

 private:
  mutable std::mutex mtx_;
  std::string line_;
};

/// A logger for DBOptions::info_log: warnings and errors only (RocksDB's info
/// lines are per flush and compaction), with the message as field "detail".
/// Lines that report corruption are also kept in `note`, when given.
std::shared_ptr<rocksdb::Logger> make_json_logger(std::shared_ptr<damage_note> note = nullptr);

}  // namespace aisched::storage
