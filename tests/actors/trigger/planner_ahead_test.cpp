// Tests for the planner's fire-ahead (#17 item 3): a slot fires `fire_ahead`
// before its instant so its run is committed and placed by then, and only
// where deciding early decides the same as at the instant: never for jitter,
// upstreams or dependents, and with an overlap policy other than `allow` only while no
// run of the task is active. Plain GoogleTest: explicit instants, no actors.
#include <map>

#include "actors/trigger/planner_fixture.hpp"

namespace aisched::trigger {
namespace {

using namespace testing_support;

constexpr duration_ms ahead = 250;

TEST(planner_ahead, every_slot_fires_its_lead_before_the_instant_and_carries_the_instant) {
  planner p(t0, ahead);
  p.upsert(make_task(1, "@every 1s"), no_runtime(1), t0, false);
  for (unix_ms k = 1; k <= 5; ++k) {
    const unix_ms slot = t0 + k * sec;
    ASSERT_EQ(p.next_due(), slot - ahead) << "k=" << k;
    EXPECT_TRUE(p.collect(slot - ahead - 1).empty()) << "fired before its lead, k=" << k;
    auto d = p.collect(slot - ahead);
    ASSERT_EQ(slots_of(d), std::vector<unix_ms>{slot}) << "the fire names the instant, k=" << k;
    EXPECT_TRUE(p.collect(slot).empty()) << "fired again at the instant, k=" << k;
    commit(p, 1, slot);
  }
  EXPECT_EQ(p.stats().fired, 5u);
}

TEST(planner_ahead, a_one_shot_fires_ahead_and_a_slot_inside_the_lead_fires_at_once) {
  planner p(t0, ahead);
  auto t = make_task(1, "");
  t.at = t0 + 100;  // created 100 ms before its instant: inside the lead
  p.upsert(t, no_runtime(1), t0, false);
  EXPECT_EQ(slots_of(p.collect(t0)), std::vector<unix_ms>{t0 + 100});
  auto u = make_task(2, "");
  u.at = t0 + 10 * sec;
  p.upsert(u, no_runtime(2), t0, false);
  EXPECT_EQ(p.next_due(), t0 + 10 * sec - ahead);
  EXPECT_EQ(slots_of(p.collect(t0 + 10 * sec - ahead), 2), std::vector<unix_ms>{t0 + 10 * sec});
}

TEST(planner_ahead, tasks_with_jitter_upstreams_or_dependents_fire_at_their_instant) {
  planner p(t0, ahead);
  auto jittery = make_task(1, "@every 1h");
  jittery.jitter = 60 * sec;
  p.upsert(jittery, no_runtime(1), t0, false);
  auto due = p.due_of(1);
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(*due, planner::jittered(jittery, t0 + 3'600'000)) << "its jittered instant, no lead";
  p.upsert(make_task(2, "@every 1h"), no_runtime(2), t0, false);
  auto downstream = make_task(3, "@every 1h");
  downstream.depends_on = {2};
  p.upsert(downstream, no_runtime(3), t0, false);
  EXPECT_EQ(p.due_of(3), t0 + 3'600'000) << "a task with upstreams decides at the instant";
  EXPECT_EQ(p.due_of(2), t0 + 3'600'000)
      << "an upstream fired ahead would hold back its dependents until a run not yet due";
  p.upsert(make_task(4, "@every 1h"), no_runtime(4), t0, false);
  EXPECT_EQ(p.due_of(4), t0 + 3'600'000 - ahead) << "a task on its own fires ahead";
}

TEST(planner_ahead, skip_with_a_run_still_active_decides_at_the_instant_and_fires_if_it_ended) {
  planner p(t0, ahead);
  p.upsert(make_task(1, "@every 1s", overlap_policy::skip), no_runtime(1), t0, false);
  ASSERT_EQ(slots_of(p.collect(t0 + sec - ahead)), std::vector<unix_ms>{t0 + sec});
  commit(p, 1, t0 + sec, instance_state::running);
  // The next lead comes while the first run is active: no decision yet.
  EXPECT_TRUE(p.collect(t0 + 2 * sec - ahead).empty());
  EXPECT_EQ(p.stats().skipped, 0u) << "skipped before its instant";
  EXPECT_EQ(p.next_due(), t0 + 2 * sec);
  // The run ends before the instant: at the instant the slot fires, as it would without a lead.
  p.observe(make_instance(1, t0 + sec, instance_state::success));
  EXPECT_EQ(slots_of(p.collect(t0 + 2 * sec)), std::vector<unix_ms>{t0 + 2 * sec});
  EXPECT_EQ(p.stats().skipped, 0u);
}

TEST(planner_ahead, skip_with_a_run_active_at_the_instant_skips_the_slot) {
  planner p(t0, ahead);
  p.upsert(make_task(1, "@every 1s", overlap_policy::skip), no_runtime(1), t0, false);
  ASSERT_EQ(slots_of(p.collect(t0 + sec - ahead)), std::vector<unix_ms>{t0 + sec});
  commit(p, 1, t0 + sec, instance_state::running);
  EXPECT_TRUE(p.collect(t0 + 2 * sec - ahead).empty());
  EXPECT_TRUE(p.collect(t0 + 2 * sec).empty());
  EXPECT_EQ(p.stats().skipped, 1u);
  // The run ends: the following slot fires ahead again.
  p.observe(make_instance(1, t0 + sec, instance_state::success));
  EXPECT_EQ(p.next_due(), t0 + 3 * sec - ahead);
  EXPECT_EQ(slots_of(p.collect(t0 + 3 * sec - ahead)), std::vector<unix_ms>{t0 + 3 * sec});
}

TEST(planner_ahead, a_pause_before_the_lead_fires_nothing_and_zero_lead_fires_at_the_instant) {
  planner p(t0, ahead);
  auto t = make_task(1, "@every 1s");
  p.upsert(t, no_runtime(1), t0, false);
  t.paused = true;
  p.upsert(t, no_runtime(1), t0 + 500, false);
  EXPECT_TRUE(p.collect(t0 + 5 * sec).empty());
  planner q(t0, 0);
  q.upsert(make_task(1, "@every 1s"), no_runtime(1), t0, false);
  EXPECT_EQ(q.next_due(), t0 + sec);
  EXPECT_TRUE(q.collect(t0 + sec - 1).empty());
  EXPECT_EQ(slots_of(q.collect(t0 + sec)), std::vector<unix_ms>{t0 + sec});
}

// One-shot task `id` due at `instant`.
proto::task one_shot(uint64_t id, unix_ms instant, duration_ms jitter = 0) {
  auto t = make_task(id, "");
  t.at = instant;
  t.jitter = jitter;
  return t;
}

TEST(planner_ahead, a_burst_fires_earlier_by_its_size_and_a_lone_slot_keeps_the_plain_lead) {
  planner p(t0, ahead);
  const unix_ms lone = t0 + 5 * sec, burst = t0 + 10 * sec;
  p.upsert(one_shot(1, lone), no_runtime(1), t0, false);
  constexpr uint64_t n = 10'000;
  for (uint64_t id = 100; id < 100 + n; ++id)
    p.upsert(one_shot(id, burst), no_runtime(id), t0, false);
  // A jittered task in the burst decides at its own instant, burst or not.
  auto jittery = one_shot(2, burst, 50);
  p.upsert(jittery, no_runtime(2), t0, false);
  const unix_ms jittered = planner::jittered(jittery, burst);

  EXPECT_EQ(p.next_due(), lone - ahead) << "a slot alone: the plain lead";
  ASSERT_EQ(slots_of(p.collect(lone - ahead), 1), std::vector<unix_ms>{lone});
  commit(p, 1, lone);

  const duration_ms burst_lead = n * planner::burst_cost_us / 1000;  // 1 s for 10 000
  EXPECT_EQ(p.next_due(), burst - ahead - burst_lead);
  EXPECT_TRUE(p.collect(burst - ahead - burst_lead - 1).empty()) << "fired before the burst's lead";
  auto d = p.collect(burst - ahead - burst_lead);
  ASSERT_EQ(d.fires.size(), n) << "the whole burst fires at once";
  for (auto& f : d.fires)
    ASSERT_EQ(f.slot, burst) << "each names its instant (the worker holds it)";
  EXPECT_TRUE(slots_of(d, 2).empty()) << "a jittered slot never fires ahead";
  EXPECT_EQ(p.next_due(), jittered);
  EXPECT_EQ(slots_of(p.collect(jittered), 2), std::vector<unix_ms>{burst});
}

TEST(planner_ahead, the_burst_lead_follows_the_tasks_and_stops_at_its_bound) {
  planner p(t0, ahead);
  const unix_ms burst = t0 + 30 * sec;
  for (uint64_t id = 1; id <= 60'000; ++id)
    p.upsert(one_shot(id, burst), no_runtime(id), t0, false);
  EXPECT_EQ(p.next_due(), burst - ahead - planner::max_burst_lead) << "60 000 slots: the bound";
  for (uint64_t id = 1; id <= 55'000; ++id) p.remove(id);
  EXPECT_EQ(p.next_due(), burst - ahead - 500) << "5 000 left";
  // Slots spread over more than the window count only from the earliest.
  for (uint64_t id = 1; id <= 5'000; ++id)
    p.upsert(one_shot(id, burst + 2 * sec), no_runtime(id), t0, false);
  EXPECT_EQ(p.next_due(), burst - ahead - 500);
  // A slot earlier than the burst makes the count start there.
  p.upsert(one_shot(90'000, burst - 600), no_runtime(90'000), t0, false);
  EXPECT_EQ(p.next_due(), burst - 600 - ahead - 500) << "1 + 5 000 slots within the window";
  p.remove(90'000);
  EXPECT_EQ(p.next_due(), burst - ahead - 500);
  // Fired, the burst leaves; the later one is counted on its own.
  EXPECT_EQ(p.collect(burst - ahead - 500).fires.size(), 5'000u);
  EXPECT_EQ(p.next_due(), burst + 2 * sec - ahead - 500);
}

TEST(planner_ahead, a_burst_behind_a_stream_of_slots_is_counted_as_the_window_reaches_it) {
  // A slot every millisecond for 3 s, then 10 000 at one instant: the trigger
  // wakes at every slot of the stream, and the count follows without being
  // taken anew on each wake-up.
  planner p(t0, ahead);
  const unix_ms stream = t0 + 5 * sec, burst = t0 + 8 * sec;
  uint64_t id = 1;
  for (unix_ms i = 0; i < 3'000; ++i, ++id)
    p.upsert(one_shot(id, stream + i), no_runtime(id), t0, false);
  for (uint64_t k = 0; k < 10'000; ++k, ++id)
    p.upsert(one_shot(id, burst), no_runtime(id), t0, false);
  std::map<uint64_t, unix_ms> fired_at;
  unix_ms now = t0;
  for (int wake = 0; wake < 20'000 && fired_at.size() < id - 1; ++wake) {
    auto due = p.next_due();
    ASSERT_TRUE(due.has_value());
    now = std::max(now + 1, *due);
    for (auto& f : p.collect(now).fires) {
      ASSERT_TRUE(fired_at.emplace(f.task_id, now).second)
          << "task " << f.task_id << " fired twice";
      ASSERT_LE(now, f.slot) << "fired after its instant";
    }
  }
  ASSERT_EQ(fired_at.size(), id - 1) << "every slot fires";
  for (uint64_t k = 1; k <= 3'000; ++k) {
    unix_ms instant = stream + static_cast<unix_ms>(k - 1);
    ASSERT_GE(instant - fired_at[k], ahead) << "a stream slot keeps its lead, task " << k;
  }
  for (uint64_t k = 3'001; k < id; ++k)
    ASSERT_GE(burst - fired_at[k], ahead + 900) << "the burst fires about 1 s earlier, task " << k;
}

}  // namespace
}  // namespace aisched::trigger
