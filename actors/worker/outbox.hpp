// The worker's outbox: final run reports the scheduler has not acknowledged
// yet, kept in a small RocksDB of the worker's own so they survive a worker
// restart and are re-sent until committed. Writes go to RocksDB's WAL without
// fsync: they survive a killed process, not a lost machine. Single owner.
// Every failure is returned: the worker stops taking runs on the first one
// (actors/worker/worker_actor.cpp).
#pragma once

#include <memory>
#include <string>
#include <utility>
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
  [[nodiscard]] static caf::expected<std::unique_ptr<outbox>> open(const std::string& dir);
  ~outbox();

  /// Stores each report under its key ("{instance}#{attempt}"), in one write.
  [[nodiscard]] caf::error put(
      const std::vector<std::pair<std::string, const proto::run_result*>>& reports);
  /// Forgets `keys`, in one write.
  [[nodiscard]] caf::error erase(const std::vector<std::string>& keys);
  /// Everything stored, for re-sending after a restart. An error when the
  /// database cannot be read or a record does not decode: a report skipped
  /// here would be a run the scheduler never hears of.
  [[nodiscard]] caf::expected<std::vector<std::pair<std::string, proto::run_result>>> load() const;

 private:
  outbox() = default;
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace aisched::worker
