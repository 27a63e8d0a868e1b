// The worker's outbox: final run reports the scheduler has not acknowledged
// yet, kept in a small RocksDB of the worker's own so they survive a worker
// restart and are re-sent until committed. Writes go to RocksDB's WAL without
// fsync: they survive a killed process, not a lost machine. Single owner.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "proto/commands.hpp"

namespace rocksdb {
class DB;
}

namespace aisched::worker {

class outbox {
 public:
  /// Opens (creating) the outbox in `dir`.
  static caf::expected<std::unique_ptr<outbox>> open(const std::string& dir);
  ~outbox();

  /// Stores `r` under `key` ("{instance}#{attempt}").
  caf::error put(const std::string& key, const proto::run_result& r);
  /// Forgets `key`.
  caf::error erase(const std::string& key);
  /// Everything stored, for re-sending after a restart.
  std::vector<std::pair<std::string, proto::run_result>> load() const;

 private:
  outbox() = default;
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace aisched::worker
