// Schedule jitter across a failover, in a group of three at the defaults: each
// run of a jittered task fires no earlier than its slot plus the deterministic
// offset (actors/trigger/planner.hpp, jittered), within the bound, whichever
// member leads; after the leader is SIGKILLed the new one keeps the same
// offsets, and every member records the same slots at the same instants.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "actors/trigger/planner.hpp"
#include "support/raft_group_process.hpp"

using namespace aisched::test;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

/// slot -> created_at (when it fired) of task `id`'s runs, as member `port` lists them.
std::map<int64_t, int64_t> fires_of(uint16_t port, uint64_t id) {
  std::map<int64_t, int64_t> out;
  auto r = http_call(port, "GET", "/api/v1/instances?task_id=" + std::to_string(id) + "&limit=200");
  if (r.status != 200) return out;
  auto page = parse(r);  // kept: a range-for over parse(r).at(...) would dangle
  for (auto& x : page.at("items").as_array())
    out[time_ms(x.at("slot"))] = time_ms(x.at("created_at"));
  return out;
}

size_t fired_after(const std::map<int64_t, int64_t>& fires, int64_t t) {
  size_t n = 0;
  for (auto& [slot, at] : fires) n += slot > t ? 1 : 0;
  return n;
}

}  // namespace

TEST(jitter_group, runs_fire_at_their_jittered_instant_on_every_leader) {
  temp_dir dir;
  raft_group g(dir.path(), 3);
  auto l = g.await_leader({0, 1, 2});
  ASSERT_NE(l, none);
  constexpr int64_t jitter = 1500;
  auto made = http_call(g.port(l), "POST", "/api/v1/tasks",
                        R"({"name":"herd","kind":"noop","schedule":"@every 2s","jitter":"1500ms"})");
  ASSERT_EQ(made.status, 201u) << made.body;
  aisched::proto::task t;
  t.id = parse(made).at("id").to_number<uint64_t>();
  t.jitter = jitter;

  ASSERT_TRUE(eventually([&] { return fires_of(g.port(l), t.id).size() >= 3; }, 20s));
  auto killed_at = wall_ms();
  g.kill(l);
  std::vector<size_t> rest;
  for (size_t i = 0; i < 3; ++i)
    if (i != l) rest.push_back(i);
  auto l2 = g.await_leader(rest);
  ASSERT_NE(l2, none);
  auto elected_at = wall_ms();
  ASSERT_TRUE(eventually([&] { return fired_after(fires_of(g.port(l2), t.id), elected_at + 1000) >= 3; },
                         30s));

  // Every member records the same slots, fired at the same instants.
  std::map<int64_t, int64_t> a, b;
  ASSERT_TRUE(eventually([&] {
    a = fires_of(g.port(rest[0]), t.id);
    b = fires_of(g.port(rest[1]), t.id);
    return a == b;
  }, 10s)) << a.size() << " vs " << b.size() << " runs";

  size_t offset_nonzero = 0;
  std::vector<int64_t> late_ms;  // fired - jittered instant, while a leader was settled
  for (auto& [slot, at] : a) {
    auto due = aisched::trigger::planner::jittered(t, slot);
    ASSERT_GE(due, slot);
    ASSERT_LE(due, slot + jitter);
    offset_nonzero += due > slot ? 1 : 0;
    // Never before its jittered instant, on the first leader or the second.
    EXPECT_GE(at, due) << "slot " << slot << " fired " << (due - at) << " ms early";
    // On time while a leader is settled (slots missed during the election are
    // caught up late by the misfire policy, by design). A loaded machine may
    // delay one run; the typical one fires at its jittered instant.
    if (slot < killed_at - 2000 || slot > elected_at + 1000) {
      EXPECT_LE(at, due + 5000) << "slot " << slot << " fired " << (at - due) << " ms late";
      late_ms.push_back(at - due);
    }
  }
  ASSERT_GE(late_ms.size(), 5u);
  std::sort(late_ms.begin(), late_ms.end());
  EXPECT_LE(late_ms[late_ms.size() / 2], 1000) << "the median run fired this late (ms)";
  EXPECT_GE(offset_nonzero, 1u) << "no slot had an offset: the test shows nothing";
}
