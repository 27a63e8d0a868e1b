// RocksDB's own diagnostics as lines of the node's JSON log (common/log), for
// every RocksDB a node opens (the state in storage/rocks, the worker's outbox).
// RocksDB's default writes them to <dir>/LOG, and RocksDB 7.8's file logger
// aborts the process on its next line after an append failed: a full disk
// killed the node there (tests/integration/tmpfs_full_test).
#pragma once

#include <memory>

namespace rocksdb {
class Logger;
}  // namespace rocksdb

namespace aisched::storage {

/// A logger for DBOptions::info_log: warnings and errors only (RocksDB's info
/// lines are per flush and compaction), with the message as field "detail".
std::shared_ptr<rocksdb::Logger> make_json_logger();

}  // namespace aisched::storage
