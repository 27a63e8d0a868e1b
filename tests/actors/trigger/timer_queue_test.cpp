// Tests for trigger::timer_queue: unit tests for the firing contract (exact instant, order,
// re-arm, cancel, far and past dues, big jumps, next_due exactness) and a rapidcheck model
// test that replays random arm/cancel/advance sequences against a std::map reference.
#include "actors/trigger/timer_queue.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace aisched::trigger {
namespace {

using fired_list = std::vector<timer_queue::fired>;

// Small geometry so that a few hundred ms span many slots and revolutions.
timer_queue_options small_wheel() {
  timer_queue_options o;
  o.near_horizon = 30;
  o.slot_width = 10;
  o.slot_count = 8;  // one revolution = 80 ms
  return o;
}

fired_list advance(timer_queue& q, unix_ms now) {
  fired_list out;
  q.advance(now, out);
  q.verify();
  return out;
}

constexpr unix_ms t0 = 1'700'000'000'000;  // a realistic epoch instant

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0 ? 1 : 0); }

TEST(timer_queue, fires_exactly_at_due_not_before) {
  for (unix_ms offset : {1, 29, 30, 31, 45, 79, 80, 81, 500}) {
    timer_queue q(t0, small_wheel());
    q.arm(7, t0 + offset);
    EXPECT_TRUE(advance(q, t0 + offset - 1).empty()) << "offset " << offset;
    EXPECT_EQ(advance(q, t0 + offset), (fired_list{{7, t0 + offset}})) << "offset " << offset;
    EXPECT_EQ(q.size(), 0u);
    EXPECT_FALSE(q.next_due());
  }
}

TEST(timer_queue, fires_at_due_when_time_moves_one_ms_at_a_time) {
  timer_queue q(t0, small_wheel());
  q.arm(1, t0 + 237);
  for (unix_ms t = t0; t < t0 + 237; ++t) ASSERT_TRUE(advance(q, t).empty()) << t - t0;
  EXPECT_EQ(advance(q, t0 + 237), (fired_list{{1, t0 + 237}}));
}

TEST(timer_queue, delivers_in_due_order_then_key) {
  timer_queue q(t0, small_wheel());
  q.arm(5, t0 + 300);
  q.arm(3, t0 + 20);
  q.arm(9, t0 + 300);
  q.arm(1, t0 + 300);
  q.arm(4, t0 + 150);
  q.arm(2, t0 + 20);
  EXPECT_EQ(
      advance(q, t0 + 1000),
      (fired_list{
          {2, t0 + 20}, {3, t0 + 20}, {4, t0 + 150}, {1, t0 + 300}, {5, t0 + 300}, {9, t0 + 300}}));
}

TEST(timer_queue, rearm_replaces_earlier_due_across_heap_and_wheel) {
  timer_queue q(t0, small_wheel());
  // near -> near, near -> far, far -> far (other round), far -> near.
  q.arm(1, t0 + 5);
  q.arm(1, t0 + 15);
  q.arm(2, t0 + 6);
  q.arm(2, t0 + 400);
  q.arm(3, t0 + 200);
  q.arm(3, t0 + 280);
  q.arm(4, t0 + 900);
  q.arm(4, t0 + 7);
  q.verify();
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(q.due_of(2), t0 + 400);
  EXPECT_EQ(advance(q, t0 + 10), (fired_list{{4, t0 + 7}}));
  EXPECT_EQ(advance(q, t0 + 279), (fired_list{{1, t0 + 15}}));
  EXPECT_EQ(advance(q, t0 + 399), (fired_list{{3, t0 + 280}}));
  EXPECT_EQ(advance(q, t0 + 5000), (fired_list{{2, t0 + 400}}));
}

TEST(timer_queue, cancel_disarms_and_reports_whether_armed) {
  timer_queue q(t0, small_wheel());
  q.arm(1, t0 + 10);   // heap
  q.arm(2, t0 + 500);  // wheel
  EXPECT_TRUE(q.cancel(1));
  EXPECT_TRUE(q.cancel(2));
  EXPECT_FALSE(q.cancel(1));
  EXPECT_FALSE(q.cancel(3));
  EXPECT_EQ(q.size(), 0u);
  EXPECT_FALSE(q.due_of(1));
  EXPECT_TRUE(advance(q, t0 + 10'000).empty());
}

TEST(timer_queue, past_due_fires_at_next_advance) {
  timer_queue q(t0, small_wheel());
  advance(q, t0 + 1000);
  q.arm(1, t0 + 999);
  q.arm(2, t0);
  q.arm(3, INT64_MIN);
  EXPECT_EQ(q.next_due(), INT64_MIN);
  EXPECT_EQ(advance(q, t0 + 1000), (fired_list{{3, INT64_MIN}, {2, t0}, {1, t0 + 999}}));
}

TEST(timer_queue, far_due_beyond_many_revolutions_fires_once_at_exact_time) {
  // Default geometry: a revolution is 4096 s; due ~3.5 revolutions out, advancing in
  // slot-sized and odd-sized steps, must fire exactly once at the exact instant.
  timer_queue q(t0);
  const unix_ms due = t0 + 14'400'123;
  q.arm(42, due);
  q.arm(43, due + 1);
  int fired_count = 0;
  for (unix_ms t = t0; t <= due + 20'000; t += 997) {
    fired_list out;
    q.advance(t, out);
    for (const auto& [key, at] : out) {
      if (key == 42) {
        ++fired_count;
        EXPECT_EQ(at, due);
        EXPECT_GE(t, due);
        EXPECT_LT(t - 997, due);
      }
    }
  }
  q.verify();
  EXPECT_EQ(fired_count, 1);
  EXPECT_TRUE(q.empty());
}

TEST(timer_queue, dues_on_slot_boundaries_fire_exactly) {
  timer_queue q(0, small_wheel());
  for (unix_ms d : {40, 39, 41, 80, 160, 159, 161, 800}) q.arm(static_cast<uint64_t>(d), d);
  std::vector<unix_ms> seen;
  for (unix_ms t = 0; t <= 900; ++t) {
    for (const auto& [key, at] : advance(q, t)) {
      EXPECT_EQ(at, t);
      seen.push_back(at);
    }
  }
  EXPECT_EQ(seen, (std::vector<unix_ms>{39, 40, 41, 80, 159, 160, 161, 800}));
}

TEST(timer_queue, entries_on_the_heap_wheel_partition_are_handled_exactly) {
  // Default geometry from t0 (a multiple of 1 s): the heap takes ticks below t0/1000 + 6,
  // so t0 + 6000 is the first wheel instant and t0 + 6000 + 4096 s the first instant of the
  // next revolution in the same slot.
  timer_queue q(t0);
  q.arm(1, t0 + 5999);              // last heap instant
  q.arm(2, t0 + 6000);              // first wheel instant
  q.arm(3, t0 + 6000 + 4'096'000);  // next round, same slot as key 2
  q.arm(4, t0 + 10'000);            // current round, a later slot
  q.verify();
  EXPECT_TRUE(q.cancel(2));  // must leave the wheel, not disturb the heap
  EXPECT_TRUE(q.cancel(1));
  q.verify();
  // The scan for the wheel minimum starts at the slot holding key 3, whose entry belongs
  // to the next round: it must not stop there.
  EXPECT_EQ(q.next_due(), t0 + 10'000);
  EXPECT_EQ(advance(q, t0 + 10'000), (fired_list{{4, t0 + 10'000}}));
  EXPECT_EQ(q.next_due(), t0 + 4'102'000);
  EXPECT_TRUE(advance(q, t0 + 4'101'999).empty());
  EXPECT_EQ(advance(q, t0 + 4'102'000), (fired_list{{3, t0 + 4'102'000}}));

  // The same after advance() moved the partition: once time reaches t1 + 1000, the
  // entry at t1 + 7000 sits on the new first wheel instant and must be cancelled from there.
  const unix_ms t1 = t0 + 4'102'000;
  q.arm(5, t1 + 7000);
  EXPECT_TRUE(advance(q, t1 + 1000).empty());
  q.arm(6, t1 + 1000);  // due now, heap
  EXPECT_TRUE(q.cancel(5));
  EXPECT_EQ(advance(q, t1 + 1000), (fired_list{{6, t1 + 1000}}));
}

TEST(timer_queue, big_jump_delivers_everything_in_order) {
  timer_queue q(t0);
  std::mt19937_64 rng(7);
  std::multiset<std::pair<unix_ms, uint64_t>> expect;
  for (uint64_t k = 0; k < 5000; ++k) {
    unix_ms due = t0 + static_cast<unix_ms>(rng() % (30ull * 86'400'000));  // within 30 days
    q.arm(k, due);
    expect.emplace(due, k);
  }
  q.arm(9999, t0 + 60ll * 86'400'000);  // beyond the jump
  fired_list out = advance(q, t0 + 30ll * 86'400'000);
  ASSERT_EQ(out.size(), expect.size());
  size_t i = 0;
  for (const auto& [due, key] : expect) {
    EXPECT_EQ(out[i].first, key);
    EXPECT_EQ(out[i].second, due);
    ++i;
  }
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.next_due(), t0 + 60ll * 86'400'000);
}

TEST(timer_queue, next_due_is_exact_with_only_far_entries) {
  timer_queue q(t0);
  EXPECT_FALSE(q.next_due());
  // All in the wheel, some in later rounds, and one round-2 entry in an earlier slot than
  // a round-1 entry: next_due must not be slot-granular nor fooled by slot order.
  q.arm(1, t0 + 9'000'017);
  q.arm(2, t0 + 3'000'503);
  q.arm(3, t0 + 3'000'501);
  q.arm(4, t0 + 4'096'000 + 1'000'001);
  EXPECT_EQ(q.next_due(), t0 + 3'000'501);
  EXPECT_TRUE(q.cancel(3));
  EXPECT_EQ(q.next_due(), t0 + 3'000'503);
  q.arm(2, t0 + 8'000'000);
  EXPECT_EQ(q.next_due(), t0 + 4'096'000 + 1'000'001);
  q.verify();
  q.arm(5, t0 + 100);  // a near entry takes over
  EXPECT_EQ(q.next_due(), t0 + 100);
  EXPECT_TRUE(q.cancel(5));
  EXPECT_EQ(q.next_due(), t0 + 4'096'000 + 1'000'001);
  EXPECT_EQ(advance(q, t0 + 4'096'000 + 1'000'001), (fired_list{{4, t0 + 5'096'001}}));
  EXPECT_EQ(q.next_due(), t0 + 8'000'000);
}

TEST(timer_queue, extreme_times_are_accepted) {
  timer_queue q(t0);
  q.arm(1, INT64_MAX);
  q.arm(2, INT64_MAX - 1);
  q.arm(3, INT64_MIN);
  EXPECT_EQ(advance(q, t0), (fired_list{{3, INT64_MIN}}));
  EXPECT_EQ(q.next_due(), INT64_MAX - 1);
  EXPECT_TRUE(advance(q, INT64_MAX - 2).empty());
  EXPECT_EQ(advance(q, INT64_MAX), (fired_list{{2, INT64_MAX - 1}, {1, INT64_MAX}}));
}

TEST(timer_queue, earlier_now_only_delivers_what_is_due_by_it) {
  timer_queue q(t0, small_wheel());
  advance(q, t0 + 1000);
  q.arm(1, t0 + 500);
  q.arm(2, t0 + 1500);
  EXPECT_EQ(advance(q, t0 + 600), (fired_list{{1, t0 + 500}}));
  EXPECT_TRUE(advance(q, t0 + 1499).empty());
  EXPECT_EQ(advance(q, t0 + 1500), (fired_list{{2, t0 + 1500}}));
}

TEST(timer_queue, many_keys_survive_index_growth_and_deletion) {
  timer_queue q(t0);
  std::mt19937_64 rng(11);
  std::unordered_map<uint64_t, unix_ms> ref;
  for (int i = 0; i < 200'000; ++i) {
    uint64_t key = rng() % 150'000;  // collisions exercise re-arm
    if (rng() % 4 == 0) {
      EXPECT_EQ(q.cancel(key), ref.erase(key) == 1);
    } else {
      unix_ms due = t0 + static_cast<unix_ms>(rng() % 20'000'000);
      q.arm(key, due);
      ref[key] = due;
    }
  }
  q.verify();
  ASSERT_EQ(q.size(), ref.size());
  for (const auto& [key, due] : ref) ASSERT_EQ(q.due_of(key), due);
  unix_ms min_due = INT64_MAX;
  for (const auto& [key, due] : ref) min_due = std::min(min_due, due);
  EXPECT_EQ(q.next_due(), min_due);
}

TEST(timer_queue, count_due_by_counts_heap_and_wheel_entries_up_to_the_cap) {
  timer_queue q(t0, small_wheel());
  std::mt19937_64 rng(5);
  std::map<uint64_t, unix_ms> ref;
  for (uint64_t key = 0; key < 400; ++key) {
    // Past, near (heap) and far (wheel, several revolutions) dues.
    unix_ms due = t0 - 20 + static_cast<unix_ms>(rng() % 400);
    q.arm(key, due);
    ref[key] = due;
  }
  for (unix_ms now : {t0, t0 + 37, t0 + 150}) {
    advance(q, now);
    for (auto it = ref.begin(); it != ref.end();) it = it->second <= now ? ref.erase(it) : ++it;
    for (unix_ms limit = now - 5; limit <= t0 + 420; limit += 7) {
      size_t want = 0;
      for (const auto& [key, due] : ref) want += due <= limit ? 1 : 0;
      ASSERT_EQ(q.count_due_by(limit, SIZE_MAX), want)
          << "now=" << now - t0 << " limit=" << limit - t0;
      ASSERT_EQ(q.count_due_by(limit, 10), std::min<size_t>(want, 10));
    }
  }
  EXPECT_EQ(timer_queue(t0).count_due_by(t0 + 1'000'000, 5), 0u) << "nothing armed";
}

TEST(timer_queue, clear_disarms_everything) {
  timer_queue q(t0, small_wheel());
  q.arm(1, t0 + 5);
  q.arm(2, t0 + 5000);
  q.clear();
  q.verify();
  EXPECT_EQ(q.size(), 0u);
  EXPECT_FALSE(q.next_due());
  EXPECT_TRUE(advance(q, t0 + 10'000).empty());
  q.arm(1, t0 + 10'001);
  EXPECT_EQ(advance(q, t0 + 10'001), (fired_list{{1, t0 + 10'001}}));
}

// -- model test ------------------------------------------------------------------------------

// The reference: what is armed, by key and by (due, key).
struct reference_model {
  std::map<uint64_t, unix_ms> by_key;
  std::set<std::pair<unix_ms, uint64_t>> by_due;

  void arm(uint64_t key, unix_ms due) {
    cancel(key);
    by_key[key] = due;
    by_due.emplace(due, key);
  }
  bool cancel(uint64_t key) {
    auto it = by_key.find(key);
    if (it == by_key.end()) return false;
    by_due.erase({it->second, key});
    by_key.erase(it);
    return true;
  }
  fired_list advance(unix_ms now) {
    fired_list out;
    while (!by_due.empty() && by_due.begin()->first <= now) {
      auto [due, key] = *by_due.begin();
      out.emplace_back(key, due);
      cancel(key);
    }
    return out;
  }
  std::optional<unix_ms> next_due() const {
    if (by_due.empty()) return std::nullopt;
    return by_due.begin()->first;
  }
};

rc::Gen<unix_ms> gen_offset() {
  // Mostly near and medium offsets, some spanning many revolutions, a few extremes.
  return rc::gen::weightedOneOf<unix_ms>({
      {6, rc::gen::inRange<unix_ms>(-50, 200)},
      {3, rc::gen::inRange<unix_ms>(0, 5'000)},
      {2, rc::gen::inRange<unix_ms>(0, 10'000'000)},
      {1, rc::gen::element<unix_ms>(0, 1, -1)},
  });
}

RC_GTEST_PROP(timer_queue, matches_reference_model, ()) {
  timer_queue_options opts;
  opts.slot_width = *rc::gen::element<duration_ms>(1, 7, 10, 1000);
  opts.slot_count = *rc::gen::element<uint32_t>(1, 2, 8, 64, 128);
  opts.near_horizon = *rc::gen::element<duration_ms>(0, 5, 25, 3000);
  unix_ms now = *rc::gen::element<unix_ms>(unix_ms{t0}, 0, -12'345, 999);
  timer_queue q(now, opts);
  reference_model ref;
  // A narrow key range forces re-arms and cancels of armed keys; a wide one exercises the
  // index's probing.
  auto gen_key = rc::gen::weightedOneOf<uint64_t>(
      {{4, rc::gen::inRange<uint64_t>(0, 24)}, {1, rc::gen::arbitrary<uint64_t>()}});

  const int op_count = *rc::gen::inRange(1, 1000);
  for (int i = 0; i < op_count; ++i) {
    switch (*rc::gen::inRange(0, 10)) {
      case 0:
      case 1:
      case 2:
      case 3: {
        uint64_t key = *gen_key;
        unix_ms due = now + *gen_offset();
        const int kind = *rc::gen::inRange(0, 16);
        if (kind == 0) {
          due = *rc::gen::element<unix_ms>(INT64_MAX, INT64_MIN, INT64_MAX - 1);
        } else if (kind <= 4) {
          // Exactly on a slot boundary, possibly rounds away: where off-by-ones live.
          const int64_t k = *rc::gen::inRange<int64_t>(-2, 300);
          due = (floor_div(now, opts.slot_width) + k) * opts.slot_width;
        }
        q.arm(key, due);
        ref.arm(key, due);
        RC_ASSERT(q.due_of(key) == std::optional<unix_ms>(due));
        break;
      }
      case 4:
      case 5: {
        uint64_t key = *gen_key;
        RC_ASSERT(q.cancel(key) == ref.cancel(key));
        RC_ASSERT(!q.due_of(key));
        break;
      }
      default: {
        unix_ms step = *rc::gen::weightedOneOf<unix_ms>({
            {6, rc::gen::inRange<unix_ms>(0, 40)},
            {3, rc::gen::inRange<unix_ms>(0, 3'000)},
            {1, rc::gen::inRange<unix_ms>(0, 20'000'000)},
            {1, rc::gen::inRange<unix_ms>(-100, 0)},
        });
        unix_ms target = now + step;
        fired_list got;
        q.advance(target, got);
        RC_ASSERT(got == ref.advance(target));
        now = std::max(now, target);
        break;
      }
    }
    q.verify();
    RC_ASSERT(q.size() == ref.by_key.size());
    RC_ASSERT(q.next_due() == ref.next_due());
  }
}

}  // namespace
}  // namespace aisched::trigger
