// A thread that syncs the database's write-ahead log while its owner goes on
// working: the raft actor writes a ready's log entries without sync, starts a
// sync here, computes the state-machine batch of the committed entries during
// it, and waits for it before it writes that batch, sends an acknowledgement
// or answers anyone (actors/raft/raft_actor.cpp). RocksDB syncs the WAL
// concurrently with reads and writes (DB::SyncWAL); one sync runs at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <caf/error.hpp>

namespace aisched::storage {

class rocks;

class wal_sync {
 public:
  /// `db` must outlive this.
  explicit wal_sync(rocks& db);
  ~wal_sync();  // waits for a sync under way, then ends the thread
  wal_sync(const wal_sync&) = delete;
  wal_sync& operator=(const wal_sync&) = delete;

  /// Starts a sync of everything written to the WAL so far. Call wait()
  /// before the next start().
  void start();

  /// Whether a sync was started and not yet waited for.
  bool started() const { return started_; }

  /// Blocks until the sync started last is done; its outcome (no error:
  /// everything written before start() is durable). No-op without a start.
  [[nodiscard]] caf::error wait();

  /// How long the last sync took, once waited for.
  std::chrono::steady_clock::duration last_duration() const { return duration_; }

 private:
  void run();

  rocks& db_;
  std::mutex mtx_;
  std::condition_variable cv_;
  bool requested_ = false;  // under mtx_: a sync to run
  bool done_ = false;       // under mtx_: the requested sync finished, result_ holds its outcome
  bool stop_ = false;       // under mtx_
  caf::error result_;       // under mtx_
  std::chrono::steady_clock::duration duration_{};
  bool started_ = false;  // owner's thread only
  std::thread thread_;
};

}  // namespace aisched::storage
