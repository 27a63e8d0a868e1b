// The settled part of the worker's dedup cache (worker_actor.hpp): the
// outcome of each attempt whose final report the leader acknowledged, oldest
// first, kept for the dedup TTL and at most `cap` of them, so that an execute
// of such an attempt still in flight is answered, not run again.
//
// Every execute looks its attempt up here, and nearly all are new: a lookup
// that finds nothing must be cheap. Outcomes sit in a ring in the order they
// settled; a flat open-addressing index holds each one's key hash and place
// in the ring. A miss is a probe of a few adjacent index slots; the key
// itself is read only when a hash matches. (A hash map of 100 000 strings,
// its nodes and keys spread over the heap, was 6 % of a node's CPU at full
// rate, in cache misses: BENCHMARKS.md, 2026-12-06 ninth.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "proto/types.hpp"

namespace aisched::worker {

class settled_outcomes {
 public:
  /// What a duplicate execute of a settled attempt is told again.
  struct outcome {
    proto::instance_state state = proto::instance_state::success;
    int32_t exit_code = 0;
    unix_ms started_at = 0;
    unix_ms finished_at = 0;
  };

  explicit settled_outcomes(size_t cap) : cap_(cap) {}

  /// The outcome kept for attempt `key`; nullptr when none is.
  [[nodiscard]] const outcome* find(std::string_view key) const;
  /// Keeps `o` for `key`, settled at `at` (a key kept already keeps its
  /// first outcome); the oldest goes when more than `cap` are kept.
  void add(const std::string& key, const outcome& o, unix_ms at);
  /// Forgets the outcomes settled before `cutoff`, oldest first.
  void forget_before(unix_ms cutoff);
  [[nodiscard]] size_t size() const { return ring_.size(); }

 private:
  struct entry {
    std::string key;
    uint64_t hash;
    outcome o;
    unix_ms at;
  };
  struct slot {
    uint64_t hash = 0;
    uint64_t seq = 0;  // the entry's sequence number; 0: empty
  };
  [[nodiscard]] size_t probe_for(uint64_t hash, std::string_view key) const;
  void place(uint64_t hash, uint64_t seq);
  void drop_oldest();
  void grow();

  size_t cap_;
  std::deque<entry> ring_;  // oldest first; ring_[i] has sequence number first_seq_ + i
  uint64_t first_seq_ = 1;
  std::vector<slot> index_;  // linear probing; size a power of two, at most half full
};

}  // namespace aisched::worker
