// Whether this node's last RocksDB write succeeded, and if not, why: recorded by
// storage::rocks on every write and recovery probe, read by the gateway's
// /readyz and the raft actor. Thread-safe; no RocksDB types (widely included).
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "proto/errors.hpp"

namespace aisched::storage {

class health {
 public:
  /// Whether the last write succeeded. Cheap (one atomic load).
  bool ok() const { return ok_.load(std::memory_order_acquire); }

  /// The last failure's code (storage_full, storage_unavailable, storage_error)
  /// and message; errc::none and "" while ok().
  errc code() const;
  std::string problem() const;

  /// Records a successful write (clears the failure).
  void record_ok();

  /// Records a failed write.
  void record_failure(errc code, std::string message);

 private:
  std::atomic<bool> ok_{true};
  mutable std::mutex mtx_;
  errc code_ = errc::none;
  std::string message_;
};

}  // namespace aisched::storage
