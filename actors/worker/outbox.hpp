// The worker's outbox: final run reports the scheduler has not acknowledged
// yet, kept in append-only files of the worker's own so they survive a worker
// restart and are re-sent until committed. Single owner (a lock file keeps a
// second process out). Every failure is returned: the worker stops taking
// runs on the first one (actors/worker/worker_actor.cpp).
//
// Each put and each erase is one write(2) of framed, checksummed records to
// the newest segment file: once put() returns, the reports are in the
// kernel and survive a killed process (SIGKILL, a crash, the OOM killer). A
// report is written and forgotten within a second or so, at tens of
// thousands a second: a log costs a buffer and a system call per batch where
// a database paid memtable inserts, flushes and compactions for records it
// deletes at once.
//
// The outbox never fsyncs. What a lost machine (power, kernel panic, a VM
// gone) can lose: what the kernel had not written back yet, by default up to
// the last 30 s of puts and erases. A run whose report is lost that way and
// whose result the leader had not committed ends `worker_lost` once the
// worker is back (retried per its policy) although it ran; a lost erase only
// sends a committed report again, which the leader acknowledges unchanged.
// A tail the kernel wrote in part, or as zeros, reads as cut short and is
// dropped. An fsync per write would close that window at the price of a
// disk flush on every batch of the worker's hot path.
//
// Segments are removed oldest first, once nothing in them is live (a segment
// may hold erase records for keys of older ones, so it cannot go before
// them). When a new segment starts, an oldest one that is mostly dead has its
// few live reports written again into the new one and goes: one report never
// acknowledged does not pin every segment written after it.
//
// An outbox directory RocksDB wrote (before this format) is read once at
// open, its reports moved into a segment, and its files removed.
#pragma once

#include <caf/expected.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proto/commands.hpp"

namespace aisched::worker {

class outbox {
 public:
  struct options {
    uint64_t segment_bytes = 8u << 20;  // a new segment starts past this size
    /// Test hook, off (empty) in every normal start: asked before each write
    /// to the outbox's files (an append, a new segment); while it answers
    /// true, that write fails with EIO as on a failing disk, and nothing of
    /// it reaches the file (tests/sim/scheduler_sim).
    std::function<bool()> fail_writes;
  };

  /// Opens (creating) the outbox in `dir` and reads what it holds. An error
  /// when another process holds it, or a record does not read back: a report
  /// skipped here would be a run the scheduler never hears of. A record cut
  /// short at the end of the newest segment (the process died writing it, or
  /// the machine died before the kernel wrote it: zeros) is dropped: that
  /// write was never acknowledged.
  [[nodiscard]] static caf::expected<std::unique_ptr<outbox>> open(const std::string& dir,
                                                                   options opts);
  [[nodiscard]] static caf::expected<std::unique_ptr<outbox>> open(const std::string& dir) {
    return open(dir, options{});
  }
  ~outbox();
  outbox(const outbox&) = delete;
  outbox& operator=(const outbox&) = delete;

  /// Stores each report under its key ("{instance}#{attempt}"), in one
  /// write(2) (no fsync): on return the reports survive a kill of this process.
  [[nodiscard]] caf::error put(
      const std::vector<std::pair<std::string, const proto::run_result*>>& reports);
  /// Forgets `keys` (unknown ones are ignored), in one write.
  [[nodiscard]] caf::error erase(const std::vector<std::string>& keys);
  /// Everything stored when the outbox was opened, for re-sending after a
  /// restart; moved out (call once).
  [[nodiscard]] std::vector<std::pair<std::string, proto::run_result>> load();

  /// Segment files on disk (aisched-inspect shows it: one report never
  /// acknowledged keeps them from going, until the oldest is rewritten).
  [[nodiscard]] size_t segments() const { return segs_.size(); }

 private:
  struct segment {
    uint64_t seq = 0;
    uint64_t live = 0;  // keys whose latest put is here and not erased
    uint64_t puts = 0;  // put records here
  };
  outbox() = default;
  std::string path_of(uint64_t seq) const;
  caf::error append(const std::string& records, uint64_t puts);
  caf::error start_segment();
  caf::error reclaim();
  void forget(const std::string& key);

  std::string dir_;
  options opts_;
  int lock_fd_ = -1;
  int fd_ = -1;                                      // the newest segment, appended to
  uint64_t size_ = 0;                                // its size
  std::deque<segment> segs_;                         // oldest first; back() is fd_
  std::unordered_map<std::string, uint64_t> where_;  // live key -> its segment's seq
  std::vector<std::pair<std::string, proto::run_result>> stored_;  // read at open
};

}  // namespace aisched::worker
