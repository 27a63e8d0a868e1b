// The settled outcomes of the worker's dedup cache (actors/worker/settled.hpp):
// found while kept, gone past the cap and the TTL, oldest first, checked
// against a plain model over many random operations (its index is a flat
// table whose removals shift entries back: a wrong shift loses a key).
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <string>

#include "actors/worker/settled.hpp"

namespace {

using aisched::worker::settled_outcomes;

settled_outcomes::outcome finished_at(int64_t at) {
  settled_outcomes::outcome o;
  o.state = aisched::proto::instance_state::failed;
  o.exit_code = 3;
  o.finished_at = at;
  return o;
}

TEST(settled_outcomes, a_kept_attempt_is_found_with_its_first_outcome) {
  settled_outcomes s(10);
  EXPECT_EQ(s.find("7-100-0#1"), nullptr);
  s.add("7-100-0#1", finished_at(5), 1000);
  s.add("7-100-0#1", finished_at(6), 1001);  // settled again: the first outcome stays
  ASSERT_NE(s.find("7-100-0#1"), nullptr);
  EXPECT_EQ(s.find("7-100-0#1")->finished_at, 5);
  EXPECT_EQ(s.find("7-100-0#1")->exit_code, 3);
  EXPECT_EQ(s.find("7-100-0#2"), nullptr) << "another attempt of the run";
  EXPECT_EQ(s.size(), 1u);
}

TEST(settled_outcomes, the_oldest_go_past_the_cap_and_the_ttl) {
  settled_outcomes s(3);
  for (int i = 0; i < 5; ++i) s.add("t-" + std::to_string(i) + "#1", finished_at(i), 100 + i);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.find("t-0#1"), nullptr);
  EXPECT_EQ(s.find("t-1#1"), nullptr);
  for (int i = 2; i < 5; ++i) EXPECT_NE(s.find("t-" + std::to_string(i) + "#1"), nullptr) << i;
  s.forget_before(104);  // settled at 102 and 103 go
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.find("t-3#1"), nullptr);
  ASSERT_NE(s.find("t-4#1"), nullptr);
  s.forget_before(1000);
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.find("t-4#1"), nullptr);
}

TEST(settled_outcomes, matches_a_plain_model_over_random_operations) {
  // Few distinct keys, so that lookups hit as often as they miss; a cap
  // that the index grows past; removals by cap and by age interleaved.
  std::mt19937_64 rng(17);
  for (size_t cap : {1u, 7u, 64u, 1000u}) {
    settled_outcomes s(cap);
    std::deque<std::pair<std::string, int64_t>> order;  // the model: oldest first
    std::map<std::string, int64_t> kept;                // key -> finished_at
    int64_t now = 0;
    for (int op = 0; op < 40'000; ++op) {
      auto key = std::to_string(rng() % (3 * cap + 5)) + "-" + std::to_string(rng() % 3) + "#1";
      auto dice = rng() % 100;
      if (dice < 55) {
        ++now;
        s.add(key, finished_at(now), now);
        if (!kept.count(key)) {
          kept[key] = now;
          order.emplace_back(key, now);
          if (order.size() > cap) {
            kept.erase(order.front().first);
            order.pop_front();
          }
        }
      } else if (dice < 58) {
        auto cutoff = now - static_cast<int64_t>(rng() % (cap + 2));
        s.forget_before(cutoff);
        while (!order.empty() && order.front().second < cutoff) {
          kept.erase(order.front().first);
          order.pop_front();
        }
      } else {
        auto* o = s.find(key);
        auto i = kept.find(key);
        ASSERT_EQ(o != nullptr, i != kept.end()) << "cap " << cap << ", op " << op << ", " << key;
        if (o) ASSERT_EQ(o->finished_at, i->second);
      }
      ASSERT_EQ(s.size(), kept.size());
    }
    for (auto& [key, at] : kept) {
      auto* o = s.find(key);
      ASSERT_NE(o, nullptr) << key;
      EXPECT_EQ(o->finished_at, at);
    }
  }
}

}  // namespace
