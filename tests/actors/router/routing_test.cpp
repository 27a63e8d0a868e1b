// Tests for router::pick, labels_match and hash_ring (pure worker selection): every route
// strategy on hand-built registries, the rules that hold for all of them (offline, full and
// label-mismatched workers never picked), rapidcheck simulations of dispatch/release
// sequences against capacity, and the consistent-hash ring's stability and movement.
#include "actors/router/routing.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace aisched::router {
namespace {

using proto::route_strategy;
using proto::worker_status;
using labels = std::map<std::string, std::string>;

// The strategies that place a run whenever some worker fits (broadcast may wait
// for its shard's own worker instead; it has tests of its own).
const std::vector<route_strategy> all_strategies = {
    route_strategy::least_loaded, route_strategy::round_robin,
    route_strategy::random,       route_strategy::first,
    route_strategy::last,         route_strategy::lfu,
    route_strategy::lru,          route_strategy::consistent_hash,
    route_strategy::failover,     route_strategy::busyover,
};

candidate make_worker(std::string id, uint64_t order, uint32_t max_load = 4,
                      uint32_t reserved = 0) {
  candidate c;
  c.id = std::move(id);
  c.order = order;
  c.max_load = max_load;
  c.reserved = reserved;
  return c;
}

std::vector<std::string> ids_of(const std::vector<candidate>& ws) {
  std::vector<std::string> out;
  for (auto& w : ws) out.push_back(w.id);
  return out;
}

/// Picks with a fresh cursor and a ring over all workers; returns the picked id or "".
std::string pick_id(route_strategy s, const std::vector<candidate>& ws, uint64_t task_id = 1,
                    uint64_t rnd = 0, const labels& selector = {}) {
  uint64_t rr = 0;
  hash_ring ring;
  ring.rebuild(ids_of(ws));
  auto i = pick(s, selector, ws, task_id, rr, rnd, &ring);
  return i ? ws[*i].id : std::string{};
}

// -- labels_match ----------------------------------------------------------------

TEST(labels_match, empty_selector_matches_any_worker) {
  EXPECT_TRUE(labels_match({}, {}));
  EXPECT_TRUE(labels_match({}, {{"zone", "a"}}));
}

TEST(labels_match, every_selector_pair_must_be_present_with_the_same_value) {
  labels worker = {{"zone", "eu-1"}, {"gpu", "true"}, {"tier", "batch"}};
  EXPECT_TRUE(labels_match({{"zone", "eu-1"}}, worker));
  EXPECT_TRUE(labels_match({{"zone", "eu-1"}, {"gpu", "true"}}, worker));
  EXPECT_TRUE(labels_match(worker, worker));
  EXPECT_FALSE(labels_match({{"zone", "eu-2"}}, worker));                   // value differs
  EXPECT_FALSE(labels_match({{"zone", "eu-1"}, {"ssd", "true"}}, worker));  // key missing
  EXPECT_FALSE(labels_match({{"zone", "eu-1"}}, {}));
  EXPECT_FALSE(labels_match({{"zone", ""}}, {}));  // empty value still needs the key
  EXPECT_TRUE(labels_match({{"zone", ""}}, {{"zone", ""}}));
  EXPECT_FALSE(labels_match({{"Zone", "eu-1"}}, worker));  // keys are case-sensitive
}

// -- rules for every strategy ----------------------------------------------------

TEST(pick, no_workers_means_no_pick) {
  for (auto s : all_strategies) EXPECT_EQ(pick_id(s, {}), "") << proto::name_of(s);
}

TEST(pick, offline_and_draining_workers_are_never_picked) {
  std::vector<candidate> ws = {make_worker("off", 0), make_worker("drain", 1),
                               make_worker("on", 2, 4, 3)};
  ws[0].status = worker_status::offline;
  ws[1].status = worker_status::draining;
  for (auto s : all_strategies)
    for (uint64_t task = 0; task < 50; ++task)
      EXPECT_EQ(pick_id(s, ws, task, task), "on") << proto::name_of(s) << " task " << task;
  ws[2].status = worker_status::offline;
  for (auto s : all_strategies) EXPECT_EQ(pick_id(s, ws), "") << proto::name_of(s);
}

TEST(pick, full_workers_are_never_picked) {
  // Full by reserved runs, by reported (heartbeat) load, and over-full by report.
  std::vector<candidate> ws = {make_worker("res", 0, 2, 2), make_worker("rep", 1, 2),
                               make_worker("over", 2, 2), make_worker("free", 3, 2, 1)};
  ws[1].reported = 2;
  ws[2].reported = 7;
  for (auto s : all_strategies)
    for (uint64_t task = 0; task < 50; ++task)
      EXPECT_EQ(pick_id(s, ws, task, task), "free") << proto::name_of(s) << " task " << task;
  ws[3].reserved = 2;
  for (auto s : all_strategies) EXPECT_EQ(pick_id(s, ws), "") << proto::name_of(s);
}

TEST(pick, zero_capacity_worker_is_never_picked) {
  std::vector<candidate> ws = {make_worker("zero", 0, 0)};
  for (auto s : all_strategies) EXPECT_EQ(pick_id(s, ws), "") << proto::name_of(s);
}

TEST(pick, label_mismatch_means_no_pick) {
  std::vector<candidate> ws = {make_worker("a", 0), make_worker("b", 1)};
  ws[0].labels = {{"zone", "eu"}};
  ws[1].labels = {{"zone", "us"}, {"gpu", "true"}};
  for (auto s : all_strategies) {
    EXPECT_EQ(pick_id(s, ws, 1, 0, {{"zone", "ap"}}), "") << proto::name_of(s);
    EXPECT_EQ(pick_id(s, ws, 1, 0, {{"gpu", "true"}, {"zone", "eu"}}), "") << proto::name_of(s);
  }
}

TEST(pick, only_workers_with_matching_labels_are_picked) {
  std::vector<candidate> ws = {make_worker("eu1", 0), make_worker("us1", 1), make_worker("eu2", 2),
                               make_worker("us2", 3)};
  ws[0].labels = ws[2].labels = {{"zone", "eu"}};
  ws[1].labels = ws[3].labels = {{"zone", "us"}};
  for (auto s : all_strategies)
    for (uint64_t task = 0; task < 50; ++task) {
      auto id = pick_id(s, ws, task, task, {{"zone", "us"}});
      EXPECT_TRUE(id == "us1" || id == "us2") << proto::name_of(s) << " picked " << id;
    }
}

// -- each strategy -----------------------------------------------------------------

TEST(pick, least_loaded_compares_load_relative_to_capacity) {
  std::vector<candidate> ws = {make_worker("half", 0, 10, 5),    // 0.50
                               make_worker("quarter", 1, 8, 2),  // 0.25
                               make_worker("third", 2, 3, 1)};   // 0.33
  EXPECT_EQ(pick_id(route_strategy::least_loaded, ws), "quarter");
  ws[1].reported = 6;  // heartbeat load beats the reservations: 0.75
  EXPECT_EQ(pick_id(route_strategy::least_loaded, ws), "third");
}

TEST(pick, least_loaded_breaks_ties_by_registration_order) {
  // Vector position and registration order differ on purpose.
  std::vector<candidate> ws = {make_worker("late", 9, 4, 1), make_worker("early", 2, 8, 2),
                               make_worker("busy", 0, 4, 3)};
  EXPECT_EQ(pick_id(route_strategy::least_loaded, ws), "early");  // 1/4 == 2/8
}

/// Broadcast pick of shard `shard`; the picked id or "".
std::string broadcast_id(const std::vector<candidate>& ws, uint32_t shard,
                         const labels& selector = {}) {
  uint64_t rr = 0;
  auto i = pick(route_strategy::broadcast, selector, ws, 1, rr, 0, nullptr, shard);
  return i ? ws[*i].id : std::string{};
}

TEST(pick, broadcast_puts_shard_i_on_the_ith_matching_online_worker) {
  // Vector position and registration order differ; "x" lacks the label, "off" is offline.
  std::vector<candidate> ws = {make_worker("c", 30), make_worker("a", 10), make_worker("x", 5),
                               make_worker("off", 1), make_worker("b", 20)};
  for (auto* id : {"a", "b", "c", "off"}) {
    auto w = std::find_if(ws.begin(), ws.end(), [&](auto& c) { return c.id == id; });
    w->labels["zone"] = "eu";
  }
  ws[3].status = worker_status::offline;
  const labels eu{{"zone", "eu"}};
  EXPECT_EQ(broadcast_id(ws, 0, eu), "a");
  EXPECT_EQ(broadcast_id(ws, 1, eu), "b");
  EXPECT_EQ(broadcast_id(ws, 2, eu), "c");
}

TEST(pick, broadcast_shard_waits_for_its_full_worker_and_overflow_goes_least_loaded) {
  std::vector<candidate> ws = {make_worker("a", 0, 2, 2), make_worker("b", 1, 4, 1),
                               make_worker("c", 2, 4, 3)};
  EXPECT_EQ(broadcast_id(ws, 0), "") << "a is full: its run waits rather than going elsewhere";
  EXPECT_EQ(broadcast_id(ws, 1), "b");
  // A shard beyond the set (a worker left after the fire) takes the least loaded.
  EXPECT_EQ(broadcast_id(ws, 7), "b");
}

TEST(pick, round_robin_cycles_in_registration_order) {
  std::vector<candidate> ws = {make_worker("c", 30), make_worker("a", 10), make_worker("b", 20)};
  uint64_t rr = 0;
  std::vector<std::string> seen;
  for (int i = 0; i < 7; ++i) {
    auto p = pick(route_strategy::round_robin, {}, ws, 1, rr, 0, nullptr);
    ASSERT_TRUE(p);
    seen.push_back(ws[*p].id);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c", "a", "b", "c", "a"}));
  EXPECT_EQ(rr, 7u);
}

TEST(pick, round_robin_skips_workers_that_do_not_qualify) {
  std::vector<candidate> ws = {make_worker("a", 0), make_worker("b", 1), make_worker("c", 2)};
  ws[1].status = worker_status::offline;
  uint64_t rr = 0;
  std::vector<std::string> seen;
  for (int i = 0; i < 4; ++i)
    seen.push_back(ws[*pick(route_strategy::round_robin, {}, ws, 1, rr, 0, nullptr)].id);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "c", "a", "c"}));
}

TEST(pick, random_uses_the_draw_over_qualifying_workers) {
  std::vector<candidate> ws = {make_worker("b", 1), make_worker("full", 0, 1, 1),
                               make_worker("a", 0)};
  EXPECT_EQ(pick_id(route_strategy::random, ws, 1, 0), "a");
  EXPECT_EQ(pick_id(route_strategy::random, ws, 1, 1), "b");
  EXPECT_EQ(pick_id(route_strategy::random, ws, 1, 2), "a");
  EXPECT_EQ(pick_id(route_strategy::random, ws, 1, UINT64_MAX), "b");
}

TEST(pick, first_and_failover_take_the_earliest_registered_with_room) {
  std::vector<candidate> ws = {make_worker("third", 3), make_worker("first", 1, 2, 1),
                               make_worker("second", 2)};
  for (auto s : {route_strategy::first, route_strategy::failover}) {
    auto w = ws;
    EXPECT_EQ(pick_id(s, w), "first") << proto::name_of(s);  // busy but not full
    w[1].reserved = 2;                                       // full
    EXPECT_EQ(pick_id(s, w), "second") << proto::name_of(s);
    w[2].status = worker_status::offline;  // unhealthy
    EXPECT_EQ(pick_id(s, w), "third") << proto::name_of(s);
    w[1].reserved = 0;  // the primary is back
    EXPECT_EQ(pick_id(s, w), "first") << proto::name_of(s);
  }
}

TEST(pick, last_takes_the_latest_registered_with_room) {
  std::vector<candidate> ws = {make_worker("middle", 5), make_worker("latest", 9),
                               make_worker("earliest", 1)};
  EXPECT_EQ(pick_id(route_strategy::last, ws), "latest");
  ws[1].reserved = ws[1].max_load;
  EXPECT_EQ(pick_id(route_strategy::last, ws), "middle");
}

TEST(pick, busyover_takes_the_first_idle_worker_in_order) {
  std::vector<candidate> ws = {make_worker("idle_late", 3), make_worker("busy_first", 0, 4, 1),
                               make_worker("idle_second", 1)};
  EXPECT_EQ(pick_id(route_strategy::busyover, ws), "idle_second");
  ws[2].reported = 1;  // busy by heartbeat
  EXPECT_EQ(pick_id(route_strategy::busyover, ws), "idle_late");
}

TEST(pick, busyover_without_idle_worker_takes_the_least_loaded) {
  std::vector<candidate> ws = {make_worker("a", 0, 4, 3), make_worker("b", 1, 10, 2),
                               make_worker("c", 2, 4, 2)};
  EXPECT_EQ(pick_id(route_strategy::busyover, ws), "b");  // 0.2 < 0.5 < 0.75
}

TEST(pick, lfu_takes_the_least_used_ties_by_order) {
  std::vector<candidate> ws = {make_worker("a", 0), make_worker("b", 1), make_worker("c", 2)};
  ws[0].uses = 5;
  ws[1].uses = 2;
  ws[2].uses = 2;
  EXPECT_EQ(pick_id(route_strategy::lfu, ws), "b");
  ws[1].reserved = ws[1].max_load;
  EXPECT_EQ(pick_id(route_strategy::lfu, ws), "c");
}

TEST(pick, lru_takes_the_least_recently_used_ties_by_order) {
  std::vector<candidate> ws = {make_worker("a", 0), make_worker("b", 1), make_worker("c", 2)};
  ws[0].last_used = 3000;
  ws[1].last_used = 1000;
  ws[2].last_used = 2000;
  EXPECT_EQ(pick_id(route_strategy::lru, ws), "b");
  ws[1].status = worker_status::draining;
  EXPECT_EQ(pick_id(route_strategy::lru, ws), "c");
  ws[0].last_used = 0;  // never used: oldest of all
  EXPECT_EQ(pick_id(route_strategy::lru, ws), "a");
}

TEST(pick, lfu_and_lru_spread_dispatches_when_the_caller_records_use) {
  std::vector<candidate> ws = {make_worker("a", 0, 100), make_worker("b", 1, 100),
                               make_worker("c", 2, 100)};
  for (auto s : {route_strategy::lfu, route_strategy::lru}) {
    auto w = ws;
    std::map<std::string, int> count;
    uint64_t rr = 0;
    for (unix_ms now = 1; now <= 30; ++now) {
      auto i = pick(s, {}, w, 1, rr, 0, nullptr);
      ASSERT_TRUE(i);
      ++count[w[*i].id];
      ++w[*i].uses;
      w[*i].last_used = now;
    }
    EXPECT_EQ(count, (std::map<std::string, int>{{"a", 10}, {"b", 10}, {"c", 10}}))
        << proto::name_of(s);
  }
}

TEST(pick, consistent_hash_without_ring_falls_back_to_least_loaded) {
  std::vector<candidate> ws = {make_worker("a", 0, 4, 2), make_worker("b", 1, 4, 1)};
  uint64_t rr = 0;
  auto i = pick(route_strategy::consistent_hash, {}, ws, 1, rr, 0, nullptr);
  ASSERT_TRUE(i);
  EXPECT_EQ(ws[*i].id, "b");
  hash_ring empty;
  i = pick(route_strategy::consistent_hash, {}, ws, 1, rr, 0, &empty);
  ASSERT_TRUE(i);
  EXPECT_EQ(ws[*i].id, "b");
}

// -- consistent hash --------------------------------------------------------------

std::vector<candidate> numbered_workers(int n, uint32_t max_load = 1'000'000) {
  std::vector<candidate> ws;
  for (int i = 0; i < n; ++i) ws.push_back(make_worker("worker-" + std::to_string(i), i, max_load));
  return ws;
}

std::map<uint64_t, std::string> assign(const std::vector<candidate>& ws, uint64_t tasks) {
  hash_ring ring;
  ring.rebuild(ids_of(ws));
  std::map<uint64_t, std::string> out;
  uint64_t rr = 0;
  for (uint64_t t = 1; t <= tasks; ++t) {
    auto i = pick(route_strategy::consistent_hash, {}, ws, t, rr, t * 7919, &ring);
    if (i) out[t] = ws[*i].id;
  }
  return out;
}

TEST(hash_ring, walk_lists_every_worker_once) {
  hash_ring ring;
  EXPECT_TRUE(ring.empty());
  EXPECT_TRUE(ring.walk(42).empty());
  ring.rebuild({"a", "b", "c", "d"});
  EXPECT_FALSE(ring.empty());
  for (uint64_t key : std::vector<uint64_t>{0, 1, 42, UINT64_MAX, hash_of("x")}) {
    auto w = ring.walk(key);
    EXPECT_EQ(std::set<std::string>(w.begin(), w.end()),
              (std::set<std::string>{"a", "b", "c", "d"}));
    EXPECT_EQ(w.size(), 4u);
  }
}

TEST(hash_ring, hash_of_is_stable) {
  // The ring must place tasks identically on every node and across releases.
  EXPECT_EQ(hash_of("worker-1#0"), hash_of("worker-1#0"));
  EXPECT_NE(hash_of("worker-1#0"), hash_of("worker-1#1"));
  EXPECT_NE(hash_of(""), hash_of("a"));
}

TEST(consistent_hash, tasks_stick_to_their_worker_while_the_set_is_stable) {
  auto ws = numbered_workers(10);
  auto first = assign(ws, 2000);
  ASSERT_EQ(first.size(), 2000u);
  // Load changes below capacity and a different cursor / draw do not move anything.
  for (size_t i = 0; i < ws.size(); ++i) {
    ws[i].reserved = static_cast<uint32_t>(i * 3);
    ws[i].uses = 100 - i;
  }
  EXPECT_EQ(assign(ws, 2000), first);
}

TEST(consistent_hash, spreads_tasks_over_all_workers) {
  auto ws = numbered_workers(10);
  auto a = assign(ws, 10'000);
  std::map<std::string, int> per;
  for (auto& [t, id] : a) ++per[id];
  ASSERT_EQ(per.size(), 10u);
  for (auto& [id, n] : per) {
    EXPECT_GE(n, 400) << id;  // mean 1000
    EXPECT_LE(n, 2000) << id;
  }
}

TEST(consistent_hash, adding_a_worker_moves_about_one_in_n_plus_one_tasks_all_to_it) {
  const uint64_t tasks = 10'000;
  auto ws = numbered_workers(10);
  auto before = assign(ws, tasks);
  ws.push_back(make_worker("worker-10", 10, 1'000'000));
  auto after = assign(ws, tasks);
  ASSERT_EQ(before.size(), tasks);
  ASSERT_EQ(after.size(), tasks);
  uint64_t moved = 0;
  for (auto& [t, id] : before)
    if (after[t] != id) {
      ++moved;
      EXPECT_EQ(after[t], "worker-10") << "task " << t << " moved between old workers";
    }
  double fraction = double(moved) / double(tasks);
  EXPECT_GE(fraction, 0.04);
  EXPECT_LE(fraction, 0.20);
}

TEST(consistent_hash, removing_a_worker_moves_only_its_tasks) {
  const uint64_t tasks = 10'000;
  auto ws = numbered_workers(10);
  auto before = assign(ws, tasks);
  auto gone = ws[3].id;
  ws.erase(ws.begin() + 3);
  auto after = assign(ws, tasks);
  for (auto& [t, id] : before) {
    if (id == gone)
      EXPECT_NE(after[t], gone);
    else
      EXPECT_EQ(after[t], id) << "task " << t;
  }
}

TEST(consistent_hash, offline_worker_tasks_go_to_the_next_on_the_ring_and_come_back) {
  auto ws = numbered_workers(5);
  hash_ring ring;
  ring.rebuild(ids_of(ws));  // the ring keeps the offline worker: its tasks return later
  const uint64_t task = 12345;
  auto order = ring.walk(hash_of(std::to_string(task)));
  ASSERT_EQ(order.size(), 5u);
  auto index_of = [&](const std::string& id) {
    return static_cast<size_t>(
        std::find_if(ws.begin(), ws.end(), [&](auto& w) { return w.id == id; }) - ws.begin());
  };
  uint64_t rr = 0;
  auto p = pick(route_strategy::consistent_hash, {}, ws, task, rr, 0, &ring);
  ASSERT_TRUE(p);
  EXPECT_EQ(ws[*p].id, order[0]);
  ws[index_of(order[0])].status = worker_status::offline;
  p = pick(route_strategy::consistent_hash, {}, ws, task, rr, 0, &ring);
  ASSERT_TRUE(p);
  EXPECT_EQ(ws[*p].id, order[1]);
  ws[index_of(order[1])].reserved = ws[index_of(order[1])].max_load;  // bounded load: full
  p = pick(route_strategy::consistent_hash, {}, ws, task, rr, 0, &ring);
  ASSERT_TRUE(p);
  EXPECT_EQ(ws[*p].id, order[2]);
  ws[index_of(order[0])].status = worker_status::online;
  p = pick(route_strategy::consistent_hash, {}, ws, task, rr, 0, &ring);
  ASSERT_TRUE(p);
  EXPECT_EQ(ws[*p].id, order[0]);
}

// -- properties ---------------------------------------------------------------------

bool qualifies(const candidate& w, const labels& selector) {
  return w.status == worker_status::online && w.load() < w.max_load &&
         labels_match(selector, w.labels);
}

double ratio(const candidate& w) { return double(w.load()) / double(w.max_load); }

/// Checks the strategy-specific choice among `fit` (qualifying workers) for `picked`.
void check_choice(route_strategy s, const std::vector<candidate>& ws,
                  const std::vector<size_t>& fit, size_t picked) {
  auto min_by = [&](auto key) {
    auto best = key(ws[fit[0]]);
    for (auto i : fit) best = std::min(best, key(ws[i]));
    return best;
  };
  const auto& w = ws[picked];
  switch (s) {
    case route_strategy::first:
    case route_strategy::failover:
      RC_ASSERT(w.order == min_by([](auto& c) { return c.order; }));
      break;
    case route_strategy::last:
      for (auto i : fit) RC_ASSERT(ws[i].order <= w.order);
      break;
    case route_strategy::lfu:
      RC_ASSERT(w.uses == min_by([](auto& c) { return c.uses; }));
      break;
    case route_strategy::lru:
      RC_ASSERT(w.last_used == min_by([](auto& c) { return c.last_used; }));
      break;
    case route_strategy::least_loaded:
      for (auto i : fit) RC_ASSERT(ratio(ws[i]) >= ratio(w) - 1e-12);
      break;
    case route_strategy::busyover: {
      bool any_idle = false;
      for (auto i : fit) any_idle = any_idle || ws[i].load() == 0;
      if (any_idle) {
        RC_ASSERT(w.load() == 0u);
        for (auto i : fit)
          if (ws[i].load() == 0) RC_ASSERT(ws[i].order >= w.order);
      } else {
        for (auto i : fit) RC_ASSERT(ratio(ws[i]) >= ratio(w) - 1e-12);
      }
      break;
    }
    default:
      break;
  }
}

RC_GTEST_PROP(pick_property, reserving_only_through_pick_never_exceeds_capacity, ()) {
  const int n = *rc::gen::inRange(1, 8);
  std::vector<candidate> ws;
  for (int i = 0; i < n; ++i) {
    candidate c;
    c.id = "w" + std::to_string(i);
    c.max_load = *rc::gen::inRange<uint32_t>(1, 5);
    c.order = *rc::gen::inRange<uint64_t>(0, 1000) * 16 + uint64_t(i);  // unique, shuffled
    if (*rc::gen::arbitrary<bool>()) c.labels["zone"] = *rc::gen::element<std::string>("a", "b");
    if (*rc::gen::arbitrary<bool>()) c.labels["gpu"] = "true";
    ws.push_back(std::move(c));
  }
  hash_ring ring;
  ring.rebuild(ids_of(ws));
  std::vector<size_t> runs;  // worker index of every dispatched, unfinished run
  uint64_t rr = 0;
  unix_ms now = 1;
  const int steps = *rc::gen::inRange(1, 200);
  for (int step = 0; step < steps; ++step, ++now) {
    switch (*rc::gen::inRange(0, 10)) {
      case 0:
      case 1:
      case 2: {  // finish a run
        if (runs.empty()) break;
        auto k = *rc::gen::inRange<size_t>(0, runs.size());
        auto& w = ws[runs[k]];
        RC_ASSERT(w.reserved > 0u);  // would go negative
        --w.reserved;
        runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(k));
        break;
      }
      case 3: {  // heartbeat with a reported load (external work, may exceed capacity)
        auto& w = ws[*rc::gen::inRange<size_t>(0, ws.size())];
        w.reported = *rc::gen::inRange<uint32_t>(0, w.max_load + 2);
        break;
      }
      case 4: {  // status change
        auto& w = ws[*rc::gen::inRange<size_t>(0, ws.size())];
        w.status = *rc::gen::element(worker_status::online, worker_status::offline,
                                     worker_status::draining);
        break;
      }
      default: {  // dispatch
        auto s = *rc::gen::elementOf(all_strategies);
        labels selector;
        if (*rc::gen::inRange(0, 3) == 0)
          selector["zone"] = *rc::gen::element<std::string>("a", "b");
        if (*rc::gen::inRange(0, 4) == 0) selector["gpu"] = "true";
        auto task = *rc::gen::inRange<uint64_t>(0, 50);
        auto rnd = *rc::gen::arbitrary<uint64_t>();
        std::vector<size_t> fit;
        for (size_t i = 0; i < ws.size(); ++i)
          if (qualifies(ws[i], selector)) fit.push_back(i);
        auto p = pick(s, selector, ws, task, rr, rnd, &ring);
        if (fit.empty()) {
          RC_ASSERT(!p.has_value());
          break;
        }
        RC_ASSERT(p.has_value());
        RC_ASSERT(*p < ws.size());
        RC_ASSERT(qualifies(ws[*p], selector));
        check_choice(s, ws, fit, *p);
        auto& w = ws[*p];
        ++w.reserved;
        ++w.uses;
        w.last_used = now;
        runs.push_back(*p);
        break;
      }
    }
    for (size_t i = 0; i < ws.size(); ++i) {
      RC_ASSERT(ws[i].reserved <= ws[i].max_load);
      RC_ASSERT(uint64_t(ws[i].reserved) == uint64_t(std::count(runs.begin(), runs.end(), i)));
    }
  }
}

RC_GTEST_PROP(pick_property, consistent_hash_picks_the_first_fitting_worker_on_the_ring, ()) {
  const int n = *rc::gen::inRange(1, 12);
  std::vector<candidate> ws;
  for (int i = 0; i < n; ++i) {
    auto c = make_worker("node-" + std::to_string(i), uint64_t(i), 3,
                         *rc::gen::inRange<uint32_t>(0, 4) % 4);
    if (c.reserved > 3) c.reserved = 3;
    if (*rc::gen::inRange(0, 5) == 0) c.status = worker_status::offline;
    ws.push_back(std::move(c));
  }
  hash_ring ring(*rc::gen::inRange<uint32_t>(1, 128));
  ring.rebuild(ids_of(ws));
  auto task = *rc::gen::arbitrary<uint64_t>();
  uint64_t rr = 0;
  auto p = pick(route_strategy::consistent_hash, {}, ws, task, rr, 0, &ring);
  std::optional<std::string> expected;
  for (auto& id : ring.walk(hash_of(std::to_string(task)))) {
    auto w = std::find_if(ws.begin(), ws.end(), [&](auto& c) { return c.id == id; });
    if (qualifies(*w, {})) {
      expected = id;
      break;
    }
  }
  RC_ASSERT(p.has_value() == expected.has_value());
  if (p) RC_ASSERT(ws[*p].id == *expected);
}

}  // namespace
}  // namespace aisched::router
