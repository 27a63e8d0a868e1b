// The trigger actor's hybrid timer: a keyed queue of due times (one per task id) kept as an
// indexed min-heap for the near future plus a hashed timing wheel with rounds for the far
// future. Pure logic: time is passed in, nothing here reads a clock, spawns or blocks. The
// trigger actor owns one instance and arms a single CAF timer for next_due().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "proto/time.hpp"

namespace aisched::trigger {

/// Geometry of a timer_queue. Defaults suit second-granular schedules: the heap holds
/// roughly the next 5-6 s, one wheel revolution covers 4096 s (~68 min), and dues further
/// out wait in the wheel for as many rounds as needed.
struct timer_queue_options {
  /// Entries due within this span of `now` (rounded up to the end of their wheel slot) live
  /// in the heap. Must be in [0, 2^61].
  duration_ms near_horizon = 5'000;
  /// Width of one wheel slot. Must be >= 1.
  duration_ms slot_width = 1'000;
  /// Number of wheel slots. Must be a power of two in [1, 2^24].
  uint32_t slot_count = 4'096;
};

namespace detail {

/// Open-addressing (linear probing, backward-shift deletion) map from a task id to a node
/// index. One flat array, no per-entry allocation; grows at 3/4 load, never shrinks.
class key_index {
 public:
  static constexpr uint32_t npos = UINT32_MAX;

  /// Returns the node of `key`, or npos.
  uint32_t find(uint64_t key) const;
  /// Inserts `key` -> `node`. Requires: `key` absent, `node` != npos.
  void insert(uint64_t key, uint32_t node);
  /// Removes `key`; returns its node, or npos if absent.
  uint32_t erase(uint64_t key);
  /// Hints that `key` will be looked up soon (overlaps cache misses in batches).
  void prefetch(uint64_t key) const;
  size_t size() const { return size_; }
  void clear();

 private:
  struct cell {
    uint64_t key;
    uint32_t node;  // npos marks an empty cell
  };
  size_t home(uint64_t key) const;
  void grow();

  std::vector<cell> cells_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace detail

/// A keyed timer queue: each key (task id) has at most one due time.
///
/// Cost: arm/cancel/re-arm O(1) for far entries and O(log h) for near ones (h = heap size);
/// advance O(k log h + slots crossed), where k counts the entries cascaded or delivered and
/// "slots crossed" is capped at one revolution, so a jump of days costs at most one pass over
/// the wheel (a far entry is also looked at once per revolution it waits); next_due O(1)
/// amortized. Memory ~64 bytes per entry at 1 M entries (24 node,
/// 32 index cell at half load, 4-8 slot reference), with no per-entry allocation; the pool,
/// index and heap keep their high-water capacity, slot vectors give theirs back within a
/// revolution.
///
/// Not thread-safe: one owner (the trigger actor) calls everything, including the const
/// members, which may refresh internal caches.
class timer_queue {
 public:
  using fired = std::pair<uint64_t, unix_ms>;  // (key, due)

  /// `now` is the initial time. Aborts if `opts` violates the ranges documented on
  /// timer_queue_options (a configuration bug, not a runtime condition).
  explicit timer_queue(unix_ms now, timer_queue_options opts = {});

  /// Arms `key` at `due`, replacing any earlier due time of it. A due time at or before the
  /// current time is fine: it fires at the next advance(). Any int64 value is accepted.
  void arm(uint64_t key, unix_ms due);

  /// Cancels `key`; returns whether it was armed.
  bool cancel(uint64_t key);

  /// Moves time to `now` and appends every (key, due) with due <= now to `out`, in due
  /// order (ties by key), disarming them. Cost is proportional to what is cascaded or due
  /// plus the wheel slots crossed (at most one revolution), not to the number armed.
  /// Time never moves backwards inside the queue: an earlier `now` than before only
  /// delivers what is due by that `now`.
  void advance(unix_ms now, std::vector<fired>& out);

  /// Earliest armed due time, exact to the millisecond (nullopt if empty). O(1) when a
  /// near entry exists; otherwise served from a cached wheel minimum. After the earliest
  /// far entry leaves, the next call rescans occupied slots from the current one, stopping
  /// at the first that holds an entry of the current revolution; only when nothing is due
  /// within a revolution does it pass over every occupied slot (~7 us at 4096 slots).
  std::optional<unix_ms> next_due() const;

  /// How many armed keys are due at or before `limit`, counting at most `cap` of them.
  /// Cost is proportional to the count (the heap is walked only below entries that are
  /// due by `limit`) plus the wheel slots up to `limit` (at most one revolution).
  size_t count_due_by(unix_ms limit, size_t cap) const;

  /// Number of armed keys.
  size_t size() const { return index_.size(); }
  bool empty() const { return size() == 0; }

  /// Due time of `key`, or nullopt if it is not armed.
  std::optional<unix_ms> due_of(uint64_t key) const;

  /// Disarms everything; keeps the current time and the allocated capacity.
  void clear();

  /// Checks every internal invariant (heap order, wheel partition, slot contents, index,
  /// caches) and aborts with a message if one is broken. O(n + slots): for tests.
  void verify() const;

 private:
  static constexpr uint32_t nil = UINT32_MAX;
  // A 4-ary heap: half the levels of a binary one, hence half the back-pointer writes into
  // scattered nodes per sift, for a few more comparisons within one or two cache lines.
  static constexpr size_t arity = 4;

  // One armed key. `pos` is its index in the heap or in its wheel slot's vector; which of
  // the two holds it follows from its due time (see in_heap), so no tag is stored. Free
  // nodes chain through `pos`.
  struct node {
    uint64_t key;
    unix_ms due;
    uint32_t pos;
  };
  struct heap_entry {
    unix_ms due;
    uint64_t key;
    uint32_t node;
  };
  struct slot {
    std::vector<uint32_t> nodes;  // unordered; a vector, not a list, so scans can prefetch
    unix_ms min = INT64_MAX;
    bool min_stale = false;  // an entry equal to `min` left; recompute before use
  };

  // -- time geometry --
  int64_t tick_of(unix_ms due) const;
  unix_ms tick_start(int64_t tick) const;
  uint32_t slot_of(int64_t tick) const { return static_cast<uint32_t>(tick) & slot_mask_; }
  bool is_near(unix_ms due) const;  // true if `due` belongs in the heap
  bool in_heap(const node& n) const { return is_near(n.due); }

  // -- nodes --
  uint32_t alloc_node(uint64_t key, unix_ms due);
  void free_node(uint32_t n);
  void place(uint32_t n);
  void unplace(uint32_t n);

  // -- heap --
  bool heap_less(const heap_entry& x, const heap_entry& y) const;
  void heap_set(size_t pos, const heap_entry& e);
  void heap_push(uint32_t n);
  void heap_remove(size_t pos);
  void heap_fix(size_t pos);
  void sift_up(size_t pos);
  void sift_down(size_t pos);

  // -- wheel --
  void wheel_link(uint32_t n);
  void wheel_unlink(uint32_t n);
  void cascade_to(int64_t target);
  void cascade_slot(uint32_t s, unix_ms target_start);
  unix_ms slot_min(uint32_t s) const;
  template <class F>
  void for_each_occupied(uint32_t first, uint64_t count, F&& f) const;
  unix_ms wheel_min() const;

  timer_queue_options opts_;
  uint32_t slot_mask_;
  // Partition point: entries whose tick is below it are in the heap, the others in the
  // wheel. It only grows, so every heap due is earlier than every wheel due.
  int64_t wheel_tick_;
  unix_ms wheel_start_;  // first ms of wheel_tick_, so is_near needs no division
  detail::key_index index_;
  std::vector<node> nodes_;
  uint32_t free_head_ = nil;
  std::vector<heap_entry> heap_;
  mutable std::vector<slot> slots_;
  std::vector<uint64_t> occupied_;  // bitmap over slots_, lets scans skip empty slots
  size_t wheel_size_ = 0;
  mutable std::optional<unix_ms> wheel_min_;  // cached earliest wheel due, if known
  mutable std::vector<uint32_t> walk_;        // count_due_by's heap positions to visit
};

}  // namespace aisched::trigger
