// The hybrid timer behind the trigger actor: an indexed 4-ary min-heap holds entries due
// before the partition tick, a hashed timing wheel with rounds holds the rest, and a flat
// key index maps task ids to nodes in one pool. See timer_queue.hpp for the contracts.
#include "actors/trigger/timer_queue.hpp"
#include "proto/invariant.hpp"


namespace aisched::trigger {

namespace {

// Broken invariants abort, in release builds too: a timer that silently drops or duplicates
// a trigger is worse than a crash the supervisor restarts from durable state.
void check(bool ok, const char* what) { AISCHED_INVARIANT(ok, what); }

// Placement clamps times into +-2^62 so tick arithmetic cannot overflow; clamping is
// monotone, so the heap/wheel partition still orders true due times. Delivery compares
// true due times, so an entry at INT64_MAX still fires exactly when now reaches it.
constexpr int64_t time_limit = int64_t{1} << 62;

int64_t clamp_time(int64_t t) {
  return t < -time_limit ? -time_limit : (t > time_limit ? time_limit : t);
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

}  // namespace

// -- key index ----------------------------------------------------------------------------

namespace detail {

size_t key_index::home(uint64_t key) const {
  // Task ids are often sequential; a full 64-bit mix (murmur3 fmix64) spreads them.
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ULL;
  key ^= key >> 33;
  return static_cast<size_t>(key) & mask_;
}

uint32_t key_index::find(uint64_t key) const {
  if (cells_.empty()) return npos;
  for (size_t i = home(key);; i = (i + 1) & mask_) {
    const cell& c = cells_[i];
    if (c.node == npos) return npos;
    if (c.key == key) return c.node;
  }
}

void key_index::insert(uint64_t key, uint32_t node) {
  if ((size_ + 1) * 4 > cells_.size() * 3) grow();
  size_t i = home(key);
  while (cells_[i].node != npos) i = (i + 1) & mask_;
  cells_[i] = cell{key, node};
  ++size_;
}

uint32_t key_index::erase(uint64_t key) {
  if (cells_.empty()) return npos;
  size_t i = home(key);
  for (;; i = (i + 1) & mask_) {
    if (cells_[i].node == npos) return npos;
    if (cells_[i].key == key) break;
  }
  uint32_t node = cells_[i].node;
  // Backward-shift deletion keeps probe chains unbroken without tombstones: pull back each
  // follower whose home does not lie cyclically in (hole, follower].
  for (size_t j = (i + 1) & mask_; cells_[j].node != npos; j = (j + 1) & mask_) {
    size_t h = home(cells_[j].key);
    if (((j - h) & mask_) >= ((j - i) & mask_)) {
      cells_[i] = cells_[j];
      i = j;
    }
  }
  cells_[i].node = npos;
  --size_;
  return node;
}

void key_index::prefetch(uint64_t key) const {
  if (!cells_.empty()) __builtin_prefetch(&cells_[home(key)]);
}

void key_index::clear() {
  for (cell& c : cells_) c.node = npos;
  size_ = 0;
}

void key_index::grow() {
  std::vector<cell> old = std::move(cells_);
  size_t cap = old.empty() ? 16 : old.size() * 2;
  cells_.assign(cap, cell{0, npos});
  mask_ = cap - 1;
  for (const cell& c : old) {
    if (c.node == npos) continue;
    size_t i = home(c.key);
    while (cells_[i].node != npos) i = (i + 1) & mask_;
    cells_[i] = c;
  }
}

}  // namespace detail

// -- construction and public operations -----------------------------------------------------

timer_queue::timer_queue(unix_ms now, timer_queue_options opts) : opts_(opts) {
  check(opts.slot_width >= 1, "slot_width must be >= 1");
  check(opts.near_horizon >= 0 && opts.near_horizon <= (int64_t{1} << 61),
        "near_horizon must be in [0, 2^61]");
  check(opts.slot_count >= 1 && opts.slot_count <= (1u << 24) &&
            (opts.slot_count & (opts.slot_count - 1)) == 0,
        "slot_count must be a power of two in [1, 2^24]");
  slot_mask_ = opts.slot_count - 1;
  wheel_tick_ = floor_div(clamp_time(now) + opts_.near_horizon, opts_.slot_width) + 1;
  wheel_start_ = tick_start(wheel_tick_);
  slots_.resize(opts.slot_count);
  occupied_.assign((opts.slot_count + 63) / 64, 0);
}

void timer_queue::arm(uint64_t key, unix_ms due) {
  uint32_t n = index_.find(key);
  if (n == detail::key_index::npos) {
    n = alloc_node(key, due);
    index_.insert(key, n);
    place(n);
    return;
  }
  node& x = nodes_[n];
  if (in_heap(x) && is_near(due)) {
    // Stays near: re-key in place, O(log h), no pool or index traffic.
    x.due = due;
    heap_[x.pos].due = due;
    heap_fix(x.pos);
    return;
  }
  unplace(n);
  nodes_[n].due = due;
  place(n);
}

bool timer_queue::cancel(uint64_t key) {
  uint32_t n = index_.erase(key);
  if (n == detail::key_index::npos) return false;
  unplace(n);
  free_node(n);
  return true;
}

void timer_queue::advance(unix_ms now, std::vector<fired>& out) {
  // Everything due by `now + near_horizon` moves to the heap, so the wheel never holds an
  // entry that is due now; the heap then yields due order with ties by key.
  int64_t target = floor_div(clamp_time(now) + opts_.near_horizon, opts_.slot_width) + 1;
  if (target > wheel_tick_) cascade_to(target);
  const size_t first = out.size();
  while (!heap_.empty() && heap_[0].due <= now) {
    const heap_entry top = heap_[0];
    out.emplace_back(top.key, top.due);
    heap_remove(0);
    free_node(top.node);
  }
  // Index erasures run as a batch after the pops so their cache misses (one per key at
  // 1 M entries) overlap through prefetching instead of stalling one by one.
  constexpr size_t ahead = 8;
  for (size_t i = first; i < out.size(); ++i) {
    if (i + ahead < out.size()) index_.prefetch(out[i + ahead].first);
    index_.erase(out[i].first);
  }
}

std::optional<unix_ms> timer_queue::next_due() const {
  // Every heap due precedes every wheel due (partition by tick), so a non-empty heap
  // answers alone.
  if (!heap_.empty()) return heap_[0].due;
  if (wheel_size_ == 0) return std::nullopt;
  return wheel_min();
}

std::optional<unix_ms> timer_queue::due_of(uint64_t key) const {
  uint32_t n = index_.find(key);
  if (n == detail::key_index::npos) return std::nullopt;
  return nodes_[n].due;
}

size_t timer_queue::count_due_by(unix_ms limit, size_t cap) const {
  size_t n = 0;
  // A parent is due no later than its children: below an entry due after `limit`
  // nothing is due by it.
  walk_.clear();
  if (!heap_.empty() && heap_[0].due <= limit) walk_.push_back(0);
  while (!walk_.empty() && n < cap) {
    size_t pos = walk_.back();
    walk_.pop_back();
    ++n;
    for (size_t c = pos * arity + 1; c <= pos * arity + arity && c < heap_.size(); ++c)
      if (heap_[c].due <= limit) walk_.push_back(static_cast<uint32_t>(c));
  }
  if (n >= cap || wheel_size_ == 0 || clamp_time(limit) < wheel_start_) return std::min(n, cap);
  // The wheel slots from the partition to `limit`; a slot also holds later rounds.
  auto ticks = static_cast<uint64_t>(tick_of(limit) - wheel_tick_) + 1;
  for_each_occupied(slot_of(wheel_tick_), std::min<uint64_t>(ticks, slot_mask_ + uint64_t{1}),
                    [&](uint32_t s) {
                      for (uint32_t x : slots_[s].nodes)
                        if (nodes_[x].due <= limit && n < cap) ++n;
                      return n < cap;
                    });
  return n;
}

void timer_queue::clear() {
  index_.clear();
  nodes_.clear();
  free_head_ = nil;
  heap_.clear();
  slots_.assign(slots_.size(), slot{});
  occupied_.assign(occupied_.size(), 0);
  wheel_size_ = 0;
  wheel_min_.reset();
}

// -- nodes ------------------------------------------------------------------------------------

int64_t timer_queue::tick_of(unix_ms due) const {
  return floor_div(clamp_time(due), opts_.slot_width);
}

unix_ms timer_queue::tick_start(int64_t tick) const {
  // Saturating keeps "tick_of(due) < tick  <=>  clamp_time(due) < tick_start(tick)" true
  // for every tick, as clamped times stay well inside the int64 range.
  unix_ms start;
  if (__builtin_mul_overflow(tick, opts_.slot_width, &start)) {
    return tick < 0 ? INT64_MIN : INT64_MAX;
  }
  return start;
}

bool timer_queue::is_near(unix_ms due) const { return clamp_time(due) < wheel_start_; }

uint32_t timer_queue::alloc_node(uint64_t key, unix_ms due) {
  if (free_head_ != nil) {
    uint32_t n = free_head_;
    free_head_ = nodes_[n].pos;
    nodes_[n] = node{key, due, nil};
    return n;
  }
  check(nodes_.size() < nil - 1, "more than 2^32-2 armed keys");
  nodes_.push_back(node{key, due, nil});
  return static_cast<uint32_t>(nodes_.size() - 1);
}

void timer_queue::free_node(uint32_t n) {
  nodes_[n].pos = free_head_;
  free_head_ = n;
}

void timer_queue::place(uint32_t n) {
  if (in_heap(nodes_[n])) {
    heap_push(n);
  } else {
    wheel_link(n);
  }
}

void timer_queue::unplace(uint32_t n) {
  if (in_heap(nodes_[n])) {
    heap_remove(nodes_[n].pos);
  } else {
    wheel_unlink(n);
  }
}

// -- heap -------------------------------------------------------------------------------------

bool timer_queue::heap_less(const heap_entry& x, const heap_entry& y) const {
  return x.due < y.due || (x.due == y.due && x.key < y.key);
}

void timer_queue::heap_set(size_t pos, const heap_entry& e) {
  heap_[pos] = e;
  nodes_[e.node].pos = static_cast<uint32_t>(pos);
}

void timer_queue::heap_push(uint32_t n) {
  heap_.push_back(heap_entry{nodes_[n].due, nodes_[n].key, n});
  nodes_[n].pos = static_cast<uint32_t>(heap_.size() - 1);
  sift_up(heap_.size() - 1);
}

void timer_queue::heap_remove(size_t pos) {
  heap_entry last = heap_.back();
  heap_.pop_back();
  if (pos == heap_.size()) return;
  heap_set(pos, last);
  heap_fix(pos);
}

void timer_queue::heap_fix(size_t pos) {
  if (pos > 0 && heap_less(heap_[pos], heap_[(pos - 1) / arity])) {
    sift_up(pos);
  } else {
    sift_down(pos);
  }
}

void timer_queue::sift_up(size_t pos) {
  heap_entry e = heap_[pos];
  while (pos > 0) {
    size_t parent = (pos - 1) / arity;
    if (!heap_less(e, heap_[parent])) break;
    heap_set(pos, heap_[parent]);
    pos = parent;
  }
  heap_set(pos, e);
}

void timer_queue::sift_down(size_t pos) {
  heap_entry e = heap_[pos];
  const size_t size = heap_.size();
  for (;;) {
    size_t first = arity * pos + 1;
    if (first >= size) break;
    size_t last = first + arity < size ? first + arity : size;
    size_t child = first;
    for (size_t c = first + 1; c < last; ++c) {
      if (heap_less(heap_[c], heap_[child])) child = c;
    }
    if (!heap_less(heap_[child], e)) break;
    heap_set(pos, heap_[child]);
    pos = child;
  }
  heap_set(pos, e);
}

// -- wheel ------------------------------------------------------------------------------------

void timer_queue::wheel_link(uint32_t n) {
  node& x = nodes_[n];
  uint32_t s = slot_of(tick_of(x.due));
  slot& sl = slots_[s];
  if (sl.nodes.empty()) {
    occupied_[s / 64] |= uint64_t{1} << (s % 64);
    sl.min = x.due;
    sl.min_stale = false;
  } else if (x.due < sl.min) {
    // A stale min is a lower bound of the true one, so a smaller due is the exact min.
    sl.min = x.due;
    sl.min_stale = false;
  }
  x.pos = static_cast<uint32_t>(sl.nodes.size());
  sl.nodes.push_back(n);
  if (wheel_size_ == 0 || (wheel_min_ && x.due < *wheel_min_)) wheel_min_ = x.due;
  ++wheel_size_;
}

void timer_queue::wheel_unlink(uint32_t n) {
  const node& x = nodes_[n];
  uint32_t s = slot_of(tick_of(x.due));
  slot& sl = slots_[s];
  uint32_t last = sl.nodes.back();
  sl.nodes[x.pos] = last;
  nodes_[last].pos = x.pos;
  sl.nodes.pop_back();
  if (sl.nodes.empty()) {
    occupied_[s / 64] &= ~(uint64_t{1} << (s % 64));
    sl.min = INT64_MAX;
    sl.min_stale = false;
  } else if (x.due == sl.min) {
    sl.min_stale = true;  // recomputed lazily: cancels must stay O(1)
  }
  --wheel_size_;
  if (wheel_min_ && x.due == *wheel_min_) wheel_min_.reset();
}

template <class F>
void timer_queue::for_each_occupied(uint32_t first, uint64_t count, F&& f) const {
  // Visits occupied slots first, first+1, ... (mod slot_count) in that order, a bitmap word
  // at a time; stops early when `f` returns false. `f` may empty the slot it is given.
  const uint64_t n_slots = slot_mask_ + uint64_t{1};
  uint64_t pos = first;
  while (count > 0) {
    uint64_t bit = pos % 64;
    uint64_t span = 64 - bit;
    if (span > n_slots - pos) span = n_slots - pos;
    if (span > count) span = count;
    uint64_t w = occupied_[pos / 64] >> bit;
    if (span < 64) w &= (uint64_t{1} << span) - 1;
    while (w != 0) {
      uint64_t b = static_cast<uint64_t>(__builtin_ctzll(w));
      if (!f(static_cast<uint32_t>(pos + b))) return;
      w &= w - 1;
    }
    pos += span;
    count -= span;
    if (pos == n_slots) pos = 0;
  }
}

void timer_queue::cascade_to(int64_t target) {
  const unix_ms target_start = tick_start(target);
  if (wheel_size_ > 0) {
    // Slots crossed, capped at one revolution: past that every slot has been seen once and
    // the rounds check in cascade_slot picks what is due, so a jump of days costs one pass.
    uint64_t crossed = static_cast<uint64_t>(target) - static_cast<uint64_t>(wheel_tick_);
    uint64_t count = crossed < opts_.slot_count ? crossed : opts_.slot_count;
    for_each_occupied(slot_of(wheel_tick_), count, [&](uint32_t s) {
      cascade_slot(s, target_start);
      return true;
    });
  }
  wheel_tick_ = target;
  wheel_start_ = target_start;
  if (wheel_min_ && clamp_time(*wheel_min_) < target_start) wheel_min_.reset();
}

void timer_queue::cascade_slot(uint32_t s, unix_ms target_start) {
  // One pass moves the entries whose round has come to the heap, compacts the rest (later
  // rounds) in place and recomputes the slot's min over them, so the slot leaves clean.
  slot& sl = slots_[s];
  std::vector<uint32_t>& v = sl.nodes;
  constexpr size_t ahead = 8;  // nodes are scattered over the pool: prefetch to overlap misses
  size_t keep = 0;
  unix_ms min = INT64_MAX;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i + ahead < v.size()) __builtin_prefetch(&nodes_[v[i + ahead]]);
    uint32_t n = v[i];
    node& x = nodes_[n];
    if (clamp_time(x.due) < target_start) {
      heap_push(n);
      --wheel_size_;
    } else {
      x.pos = static_cast<uint32_t>(keep);
      v[keep++] = n;
      if (x.due < min) min = x.due;
    }
  }
  v.resize(keep);
  // Every slot is visited once per revolution, so memory left over from a burst is returned
  // within one revolution.
  if (v.capacity() > 64 && keep * 4 < v.capacity()) v.shrink_to_fit();
  sl.min = min;
  sl.min_stale = false;
  if (keep == 0) occupied_[s / 64] &= ~(uint64_t{1} << (s % 64));
}

unix_ms timer_queue::slot_min(uint32_t s) const {
  slot& sl = slots_[s];
  if (sl.min_stale) {
    sl.min = INT64_MAX;
    for (uint32_t n : sl.nodes) {
      if (nodes_[n].due < sl.min) sl.min = nodes_[n].due;
    }
    sl.min_stale = false;
  }
  return sl.min;
}

unix_ms timer_queue::wheel_min() const {
  if (wheel_min_) return *wheel_min_;
  // Walk slots in tick order from the partition point. The first slot whose min lies in the
  // current revolution holds the global min: later slots of this revolution are later, and
  // entries of later rounds are at least a revolution away. Without such a slot, every
  // entry is rounds away and the min over slot mins is the answer.
  const unix_ms revolution_end = tick_start(wheel_tick_ + static_cast<int64_t>(opts_.slot_count));
  unix_ms best = INT64_MAX;
  for_each_occupied(slot_of(wheel_tick_), opts_.slot_count, [&](uint32_t s) {
    unix_ms m = slot_min(s);
    if (m < best) best = m;
    return clamp_time(m) >= revolution_end;
  });
  wheel_min_ = best;
  return best;
}

// -- self-check -------------------------------------------------------------------------------

void timer_queue::verify() const {
  check(wheel_start_ == tick_start(wheel_tick_), "partition instant out of step with tick");
  size_t in_heap_count = 0;
  for (size_t i = 0; i < heap_.size(); ++i) {
    const heap_entry& e = heap_[i];
    check(e.node < nodes_.size(), "heap entry points outside the pool");
    const node& x = nodes_[e.node];
    check(x.pos == i && x.due == e.due && x.key == e.key, "heap entry and node disagree");
    check(in_heap(x), "heap holds an entry at or past the partition tick");
    check(i == 0 || !heap_less(e, heap_[(i - 1) / arity]), "heap order broken");
    check(index_.find(x.key) == e.node, "heap entry missing from the index");
    ++in_heap_count;
  }
  size_t in_wheel_count = 0;
  unix_ms global_min = INT64_MAX;
  for (uint32_t s = 0; s <= slot_mask_; ++s) {
    const slot& sl = slots_[s];
    bool bit = (occupied_[s / 64] >> (s % 64)) & 1;
    check(bit == !sl.nodes.empty(), "occupancy bit disagrees with slot contents");
    unix_ms true_min = INT64_MAX;
    for (size_t i = 0; i < sl.nodes.size(); ++i) {
      const node& x = nodes_[sl.nodes[i]];
      check(x.pos == i, "wheel entry's slot position wrong");
      check(!in_heap(x) && slot_of(tick_of(x.due)) == s, "wheel entry in the wrong place");
      check(index_.find(x.key) == sl.nodes[i], "wheel entry missing from the index");
      if (x.due < true_min) true_min = x.due;
      ++in_wheel_count;
    }
    check(sl.min_stale ? sl.min <= true_min : sl.min == true_min, "slot min cache wrong");
    if (true_min < global_min) global_min = true_min;
  }
  check(in_wheel_count == wheel_size_, "wheel size counter wrong");
  check(in_heap_count + in_wheel_count == index_.size(), "index size disagrees with entries");
  check(!wheel_min_ || wheel_size_ == 0 || *wheel_min_ == global_min, "wheel min cache wrong");
}

}  // namespace aisched::trigger
