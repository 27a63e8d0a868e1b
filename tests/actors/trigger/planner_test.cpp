// Tests for trigger::planner, the trigger's pure decision logic: slots of @every, cron and
// one-shot schedules at their exact instants, each overlap policy, DAG upstreams, schedule
// bounds, jitter, pause, manual runs and settle/requeue (misfires: planner_misfire_test).
// Plain GoogleTest: no actors, no clock; every call gets an explicit instant.
#include "actors/trigger/planner_fixture.hpp"

namespace aisched::trigger {
namespace {

using namespace testing_support;

// -- @every and cron ----------------------------------------------------------------------

TEST(planner, every_second_fires_once_per_slot_at_the_exact_instant_for_sixty_seconds) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s"), no_runtime(1), t0, false);
  EXPECT_TRUE(p.collect(t0).empty()) << "the slot at `now` itself belongs to the past";
  std::vector<unix_ms> fired;
  for (unix_ms k = 1; k <= 60; ++k) {
    const unix_ms slot = t0 + k * sec;
    ASSERT_EQ(p.next_due(), slot) << "k=" << k;
    EXPECT_TRUE(p.collect(slot - 1).empty()) << "fired 1 ms early at k=" << k;
    auto d = p.collect(slot);
    ASSERT_EQ(slots_of(d), std::vector<unix_ms>{slot}) << "k=" << k;
    EXPECT_EQ(d.fires[0].task_id, 1u);
    EXPECT_FALSE(d.fires[0].trace_id.empty());
    EXPECT_TRUE(d.cancels.empty());
    // The same instant again, and a bit later within the second: nothing new.
    EXPECT_TRUE(p.collect(slot).empty()) << "doubled at k=" << k;
    EXPECT_TRUE(p.collect(slot + 999).empty()) << "doubled at k=" << k;
    commit(p, 1, slot);
    fired.push_back(slot);
  }
  EXPECT_EQ(fired, every(t0 + sec, sec, 60));
  EXPECT_EQ(p.stats().fired, 60u);
  EXPECT_EQ(p.stats().skipped, 0u);
  EXPECT_EQ(p.stats().missed, 0u);
}

TEST(planner, every_second_late_and_repeated_collects_fire_each_slot_exactly_once) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s"), no_runtime(1), t0, false);
  // Collect at irregular, mostly late instants, several times per instant; at each instant
  // keep collecting while next_due() reports something due (as the trigger actor does).
  const unix_ms lateness[] = {0, 1, 250, 999, 1000, 2500, 0, 0, 3999, 17, 0, 600};
  std::vector<unix_ms> fired;
  unix_ms now = t0;
  size_t i = 0;
  while (now < t0 + 60 * sec) {
    now = std::min(t0 + 60 * sec, (now / sec + 1) * sec + lateness[i++ % std::size(lateness)]);
    for (int repeat = 0; repeat < 3; ++repeat) {
      for (int guard = 0; guard < 100; ++guard) {
        auto d = p.collect(now);
        for (auto s : slots_of(d, 1)) {
          EXPECT_LE(s, now) << "fired a slot before it was due";
          fired.push_back(s);
          commit(p, 1, s);
        }
        auto due = p.next_due();
        ASSERT_TRUE(due.has_value());
        if (*due > now) break;
      }
    }
  }
  EXPECT_EQ(fired, every(t0 + sec, sec, 60)) << "every whole second once, in order";
  EXPECT_EQ(p.stats().fired, 60u);
  EXPECT_EQ(p.stats().missed, 0u);
  EXPECT_EQ(p.next_due(), t0 + 61 * sec);
}

TEST(planner, late_collect_reports_overdue_slots_through_next_due_until_drained) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s"), no_runtime(1), t0, false);
  const unix_ms now = t0 + 3500;
  std::vector<unix_ms> fired;
  for (int guard = 0; guard < 10 && p.next_due() <= now; ++guard) {
    auto d = p.collect(now);
    auto s = slots_of(d, 1);
    fired.insert(fired.end(), s.begin(), s.end());
  }
  EXPECT_EQ(fired, (std::vector<unix_ms>{t0 + 1000, t0 + 2000, t0 + 3000}));
  EXPECT_EQ(p.next_due(), t0 + 4000);
  EXPECT_TRUE(p.collect(now).empty());
}

TEST(planner, cron_weekday_schedule_fires_at_the_expected_instants) {
  planner p(t0);
  p.upsert(make_task(1, "0 9 * * MON-FRI"), no_runtime(1), t0, false);
  auto fired = slots_of(drive(p, at("2026-01-10T00:00:00Z")));
  // 2026-01-01 is a Thursday: Thu, Fri, then Mon-Fri of the next week.
  EXPECT_EQ(fired, (std::vector<unix_ms>{
                       at("2026-01-01T09:00:00Z"), at("2026-01-02T09:00:00Z"),
                       at("2026-01-05T09:00:00Z"), at("2026-01-06T09:00:00Z"),
                       at("2026-01-07T09:00:00Z"), at("2026-01-08T09:00:00Z"),
                       at("2026-01-09T09:00:00Z")}));
}

TEST(planner, cron_with_seconds_and_time_zone_fires_at_the_expected_instants) {
  planner p(t0);
  p.upsert(make_task(1, "*/15 * * * * *"), no_runtime(1), t0, false);
  auto berlin = make_task(2, "30 8 * * *");
  berlin.timezone = "Europe/Berlin";  // UTC+1 in January
  p.upsert(berlin, no_runtime(2), t0, false);
  auto fires = drive(p, at("2026-01-02T08:00:00Z"));
  std::vector<unix_ms> every15, daily;
  for (auto& f : fires) (f.task_id == 1 ? every15 : daily).push_back(f.slot);
  EXPECT_EQ(every15, every(t0 + 15 * sec, 15 * sec, 4 * 60 * 32));
  EXPECT_EQ(daily, (std::vector<unix_ms>{at("2026-01-01T07:30:00Z"), at("2026-01-02T07:30:00Z")}));
}

// -- overlap policies ---------------------------------------------------------------------

TEST(planner, overlap_skip_drops_slots_while_an_instance_is_active_and_counts_them) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s", overlap_policy::skip), no_runtime(1), t0, false);
  ASSERT_EQ(slots_of(p.collect(t0 + 1000)), std::vector<unix_ms>{t0 + 1000});
  // Before the commit: the proposed slot already counts as running.
  EXPECT_TRUE(p.collect(t0 + 2000).empty());
  EXPECT_EQ(p.stats().skipped, 1u);
  commit(p, 1, t0 + 1000);
  p.observe(make_instance(1, t0 + 1000, instance_state::running));
  EXPECT_TRUE(p.collect(t0 + 3000).empty());
  EXPECT_TRUE(p.collect(t0 + 4000).empty());
  EXPECT_EQ(p.stats().skipped, 3u);
  p.observe(make_instance(1, t0 + 1000, instance_state::failed));
  // Skipped slots are gone for good: nothing fires before the next slot.
  EXPECT_TRUE(p.collect(t0 + 4500).empty());
  EXPECT_EQ(slots_of(p.collect(t0 + 5000)), std::vector<unix_ms>{t0 + 5000});
  EXPECT_EQ(p.stats().fired, 2u);
  EXPECT_EQ(p.stats().skipped, 3u);
  EXPECT_EQ(p.stats().buffered, 0u);
}

TEST(planner, overlap_buffer_one_keeps_one_slot_and_releases_it_when_the_run_ends) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s", overlap_policy::buffer_one), no_runtime(1), t0, false);
  ASSERT_EQ(slots_of(p.collect(t0 + 1000)), std::vector<unix_ms>{t0 + 1000});
  commit(p, 1, t0 + 1000);
  EXPECT_TRUE(p.collect(t0 + 2000).empty());  // held
  EXPECT_TRUE(p.collect(t0 + 3000).empty());  // dropped: one is held already
  EXPECT_TRUE(p.collect(t0 + 4000).empty());  // dropped
  EXPECT_EQ(p.stats().buffered, 1u);
  EXPECT_EQ(p.stats().skipped, 2u);
  EXPECT_GT(p.next_due(), t0 + 4200) << "nothing is ready while the run is active";
  p.observe(make_instance(1, t0 + 1000, instance_state::success));
  EXPECT_LE(p.next_due(), t0 + 4200) << "the held slot is ready once the run ended";
  auto d = p.collect(t0 + 4200);
  EXPECT_EQ(slots_of(d), std::vector<unix_ms>{t0 + 2000}) << "the first held slot fires";
  commit(p, 1, t0 + 2000);
  EXPECT_TRUE(p.collect(t0 + 5000).empty());  // held behind the released run
  p.observe(make_instance(1, t0 + 2000, instance_state::success));
  EXPECT_EQ(slots_of(p.collect(t0 + 5100)), std::vector<unix_ms>{t0 + 5000});
  EXPECT_EQ(p.stats().fired, 3u);
}

TEST(planner, overlap_buffer_all_queues_every_slot_and_fires_them_in_order) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s", overlap_policy::buffer_all), no_runtime(1), t0, false);
  ASSERT_EQ(slots_of(p.collect(t0 + 1000)), std::vector<unix_ms>{t0 + 1000});
  commit(p, 1, t0 + 1000);
  for (unix_ms k = 2; k <= 4; ++k) EXPECT_TRUE(p.collect(t0 + k * sec).empty());
  EXPECT_EQ(p.stats().buffered, 3u);
  EXPECT_EQ(p.stats().skipped, 0u);
  // Each run ends before the next held slot is released: they fire one at a time, in order.
  std::vector<unix_ms> fired;
  unix_ms running = t0 + 1000;
  unix_ms now = t0 + 4100;
  for (int round = 0; round < 3; ++round) {
    p.observe(make_instance(1, running, instance_state::success));
    std::vector<unix_ms> got;
    for (int guard = 0; guard < 5 && got.empty(); ++guard) got = slots_of(p.collect(now += 10));
    ASSERT_FALSE(got.empty()) << "held slots stopped firing (round " << round << ", fired "
                              << fired.size() << " of 3, buffered " << p.stats().buffered << ")";
    ASSERT_EQ(got.size(), 1u) << "round " << round;
    fired.push_back(got[0]);
    commit(p, 1, got[0]);
    running = got[0];
  }
  EXPECT_EQ(fired, (std::vector<unix_ms>{t0 + 2000, t0 + 3000, t0 + 4000}));
  p.observe(make_instance(1, running, instance_state::success));
  EXPECT_EQ(slots_of(p.collect(t0 + 5000)), std::vector<unix_ms>{t0 + 5000});
}

TEST(planner, overlap_buffer_all_releases_a_single_held_slot) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s", overlap_policy::buffer_all), no_runtime(1), t0, false);
  ASSERT_EQ(slots_of(p.collect(t0 + 1000)), std::vector<unix_ms>{t0 + 1000});
  commit(p, 1, t0 + 1000);
  EXPECT_TRUE(p.collect(t0 + 2000).empty());
  EXPECT_EQ(p.stats().buffered, 1u);
  p.observe(make_instance(1, t0 + 1000, instance_state::success));
  EXPECT_EQ(slots_of(p.collect(t0 + 2100)), std::vector<unix_ms>{t0 + 2000});
}

TEST(planner, overlap_replace_cancels_the_active_runs_and_fires_the_new_slot) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s", overlap_policy::replace), no_runtime(1), t0, false);
  auto d1 = p.collect(t0 + 1000);
  EXPECT_EQ(slots_of(d1), std::vector<unix_ms>{t0 + 1000});
  EXPECT_TRUE(d1.cancels.empty()) << "nothing was running";
  commit(p, 1, t0 + 1000);
  p.observe(make_instance(1, t0 + 1000, instance_state::running));
  auto d2 = p.collect(t0 + 2000);
  EXPECT_EQ(slots_of(d2), std::vector<unix_ms>{t0 + 2000});
  EXPECT_EQ(d2.cancels, std::vector<std::string>{proto::make_instance_id(1, t0 + 1000, 0)});
  EXPECT_EQ(p.stats().replaced, 1u);
  // The cancel commits; the new run is active and is the one replaced next.
  commit(p, 1, t0 + 2000);
  p.observe(make_instance(1, t0 + 1000, instance_state::cancelled));
  auto d3 = p.collect(t0 + 3000);
  EXPECT_EQ(slots_of(d3), std::vector<unix_ms>{t0 + 3000});
  EXPECT_EQ(d3.cancels, std::vector<std::string>{proto::make_instance_id(1, t0 + 2000, 0)});
  EXPECT_EQ(p.stats().replaced, 2u);
  EXPECT_EQ(p.stats().skipped, 0u);
}

TEST(planner, overlap_allow_fires_every_slot_while_runs_are_active) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s", overlap_policy::allow), no_runtime(1), t0, false);
  for (unix_ms k = 1; k <= 10; ++k) {
    auto d = p.collect(t0 + k * sec);
    ASSERT_EQ(slots_of(d), std::vector<unix_ms>{t0 + k * sec});
    EXPECT_TRUE(d.cancels.empty());
    commit(p, 1, t0 + k * sec, instance_state::running);  // never finishes
  }
  EXPECT_EQ(p.stats().fired, 10u);
  EXPECT_EQ(p.stats().skipped + p.stats().buffered + p.stats().replaced, 0u);
}

// -- DAG ----------------------------------------------------------------------------------

TEST(planner, dag_chain_fires_each_task_only_after_its_upstream_succeeded) {
  planner p(t0);
  auto a = make_task(1, "@every 1m");
  auto b = make_task(2, "@every 1m");
  b.depends_on = {1};
  auto c = make_task(3, "@every 1m");
  c.depends_on = {2};
  for (auto& t : {a, b, c}) p.upsert(t, no_runtime(t.id), t0, false);
  const unix_ms slot = t0 + minute;
  auto d = p.collect(slot);
  EXPECT_EQ(slots_of(d, 1), std::vector<unix_ms>{slot});
  EXPECT_TRUE(slots_of(d, 2).empty()) << "B must wait for A";
  EXPECT_TRUE(slots_of(d, 3).empty()) << "C must wait for B";
  EXPECT_EQ(p.stats().blocked, 2u);
  commit(p, 1, slot);
  p.observe(make_instance(1, slot, instance_state::running));
  EXPECT_TRUE(p.collect(slot + 100).empty()) << "A has not succeeded yet";
  p.observe(make_instance(1, slot, instance_state::success));
  d = p.collect(slot + 200);
  EXPECT_EQ(slots_of(d, 2), std::vector<unix_ms>{slot}) << "B fires its held slot";
  EXPECT_TRUE(slots_of(d, 3).empty()) << "C still waits for B";
  commit(p, 2, slot);
  p.observe(make_instance(2, slot, instance_state::failed));
  EXPECT_TRUE(p.collect(slot + 300).empty()) << "a failed B does not release C";
  EXPECT_EQ(p.stats().fired, 2u);
}

TEST(planner, dag_blocked_slot_fires_when_a_later_upstream_run_succeeds) {
  planner p(t0);
  auto a = make_task(1, "@every 1m");
  auto b = make_task(2, "@every 1m");
  b.depends_on = {1};
  p.upsert(a, no_runtime(1), t0, false);
  p.upsert(b, no_runtime(2), t0, false);
  auto d = p.collect(t0 + minute);
  EXPECT_EQ(slots_of(d), std::vector<unix_ms>{t0 + minute});
  commit(p, 1, t0 + minute);
  p.observe(make_instance(1, t0 + minute, instance_state::failed));
  d = p.collect(t0 + 2 * minute);  // A fires again; B's newer slot supersedes the held one
  EXPECT_EQ(slots_of(d, 1), std::vector<unix_ms>{t0 + 2 * minute});
  EXPECT_TRUE(slots_of(d, 2).empty());
  EXPECT_EQ(p.stats().skipped, 1u) << "the older held slot of B is superseded";
  commit(p, 1, t0 + 2 * minute);
  p.observe(make_instance(1, t0 + 2 * minute, instance_state::success));
  d = p.collect(t0 + 2 * minute + 50);
  EXPECT_EQ(slots_of(d, 2), std::vector<unix_ms>{t0 + 2 * minute});
}

TEST(planner, dag_downstream_waits_for_the_upstream_run_of_the_same_slot) {
  planner p(t0);
  auto a = make_task(1, "@every 1m");
  auto b = make_task(2, "@every 1m");
  b.depends_on = {1};
  p.upsert(a, no_runtime(1), t0, false);
  p.upsert(b, no_runtime(2), t0, false);
  // First slot: A, then B after A's success.
  p.collect(t0 + minute);
  commit(p, 1, t0 + minute);
  p.observe(make_instance(1, t0 + minute, instance_state::success));
  ASSERT_EQ(slots_of(p.collect(t0 + minute + 10), 2), std::vector<unix_ms>{t0 + minute});
  commit(p, 2, t0 + minute);
  p.observe(make_instance(2, t0 + minute, instance_state::success));
  // Second slot: A fires again; its latest slot has not succeeded yet, so B must wait.
  auto d = p.collect(t0 + 2 * minute);
  EXPECT_EQ(slots_of(d, 1), std::vector<unix_ms>{t0 + 2 * minute});
  ASSERT_TRUE(slots_of(d, 2).empty())
      << "B's slot fired in the same collect() as A's slot of that instant, before A succeeded";
  commit(p, 1, t0 + 2 * minute);
  EXPECT_TRUE(slots_of(p.collect(t0 + 2 * minute + 10), 2).empty());
  p.observe(make_instance(1, t0 + 2 * minute, instance_state::success));
  EXPECT_EQ(slots_of(p.collect(t0 + 2 * minute + 20), 2),
            std::vector<unix_ms>{t0 + 2 * minute});
}

// -- bounds, jitter, pause, one-shot ------------------------------------------------------

TEST(planner, start_at_and_end_at_bound_the_fired_slots) {
  planner p(t0);
  auto t = make_task(1, "@every 1s");
  t.start_at = t0 + 5 * sec;  // inclusive
  t.end_at = t0 + 8 * sec;    // inclusive
  p.upsert(t, no_runtime(1), t0, false);
  EXPECT_EQ(p.next_due(), t0 + 5 * sec);
  auto fired = slots_of(drive(p, t0 + 60 * sec));
  EXPECT_EQ(fired, every(t0 + 5 * sec, sec, 4));
  EXPECT_FALSE(p.next_due().has_value()) << "nothing is armed after end_at";

  // Catch-up also respects the bounds.
  planner q(t0 + 20 * sec);
  t.misfire = misfire_policy::fire_all;
  q.upsert(t, no_runtime(1), t0 + 20 * sec, true);
  EXPECT_EQ(slots_of(q.collect(t0 + 20 * sec)), every(t0 + 5 * sec, sec, 4));
  EXPECT_FALSE(q.next_due().has_value());
}

TEST(planner, jitter_offset_is_deterministic_and_within_bounds) {
  auto t = make_task(7, "@every 1s");
  t.jitter = 300;
  planner p(t0);
  p.upsert(t, no_runtime(7), t0, false);
  planner q(t0);
  q.upsert(t, no_runtime(7), t0, false);
  std::set<unix_ms> offsets;
  for (unix_ms k = 1; k <= 50; ++k) {
    const unix_ms slot = t0 + k * sec;
    const unix_ms due = planner::jittered(t, slot);
    ASSERT_GE(due, slot);
    ASSERT_LE(due, slot + t.jitter);
    EXPECT_EQ(due, planner::jittered(t, slot)) << "not deterministic";
    offsets.insert(due - slot);
    ASSERT_EQ(p.due_of(7), due) << "k=" << k;
    ASSERT_EQ(q.due_of(7), due) << "k=" << k << ": another planner disagrees";
    if (due > slot) {
      EXPECT_TRUE(p.collect(due - 1).empty()) << "fired before its jittered due";
    }
    auto d = p.collect(due);
    ASSERT_EQ(slots_of(d), std::vector<unix_ms>{slot}) << "the slot id carries no jitter";
    q.collect(due);
  }
  EXPECT_GT(offsets.size(), 10u) << "offsets should spread over [0, jitter]";
  t.jitter = 0;
  EXPECT_EQ(planner::jittered(t, t0 + sec), t0 + sec);
}

TEST(planner, a_rebuild_inside_a_slots_jitter_arms_it_instead_of_firing_it_early) {
  // A new leader rebuilds between a slot and its jittered instant: that slot
  // was not missed. It fires at its jittered instant, not at the rebuild (found
  // by jitter_group: a slot fired 425 ms early right after a failover).
  auto t = make_task(7, "@every 2s");
  t.jitter = 1500;
  unix_ms slot = 0;
  for (unix_ms k = 1; k < 100 && slot == 0; ++k)
    if (planner::jittered(t, t0 + 2 * k * sec) - (t0 + 2 * k * sec) > 200) slot = t0 + 2 * k * sec;
  ASSERT_NE(slot, 0);
  const unix_ms due = planner::jittered(t, slot);
  for (auto policy : {misfire_policy::fire_once, misfire_policy::fire_all, misfire_policy::skip}) {
    t.misfire = policy;
    const unix_ms rebuilt = slot + 100;  // after the slot, before its jittered instant
    planner p(rebuilt);
    p.upsert(t, runtime_at(7, slot - 2 * sec), rebuilt, true);
    EXPECT_TRUE(p.collect(rebuilt).empty()) << "fired at the rebuild, before " << due;
    EXPECT_TRUE(p.collect(due - 1).empty());
    EXPECT_EQ(slots_of(p.collect(due)), std::vector<unix_ms>{slot});
  }
  // The same when a hold (backpressure red) ends inside the slot's jitter.
  t.misfire = misfire_policy::fire_once;
  planner h(slot - 2 * sec + 1);
  h.upsert(t, runtime_at(7, slot - 2 * sec), slot - 2 * sec + 1, false);
  EXPECT_EQ(h.release_held(slot + 100), 0u);
  EXPECT_TRUE(h.collect(slot + 100).empty());
  EXPECT_EQ(slots_of(h.collect(due)), std::vector<unix_ms>{slot});
}

TEST(planner, paused_task_never_fires) {
  planner p(t0);
  auto t = make_task(1, "@every 1s");
  t.paused = true;
  p.upsert(t, no_runtime(1), t0, false);
  EXPECT_FALSE(p.next_due().has_value());
  EXPECT_FALSE(p.due_of(1).has_value());
  for (unix_ms k = 1; k <= 30; ++k) EXPECT_TRUE(p.collect(t0 + k * sec).empty());
  // Also when a leader rebuilds after an outage.
  planner q(t0 + 30 * sec);
  t.misfire = misfire_policy::fire_all;
  q.upsert(t, runtime_at(1, t0), t0 + 30 * sec, true);
  EXPECT_TRUE(q.collect(t0 + 30 * sec).empty());
  EXPECT_EQ(p.stats().fired + q.stats().fired, 0u);
  // Resuming arms the next slot after now, not the paused ones.
  t.paused = false;
  p.upsert(t, no_runtime(1), t0 + 30 * sec + 500, false);
  EXPECT_EQ(p.next_due(), t0 + 31 * sec);
}

TEST(planner, one_shot_at_fires_exactly_once) {
  planner p(t0);
  auto t = make_task(1, "");
  t.at = t0 + 2500;
  p.upsert(t, no_runtime(1), t0, false);
  EXPECT_EQ(p.next_due(), t0 + 2500);
  EXPECT_TRUE(p.collect(t0 + 2499).empty());
  EXPECT_EQ(slots_of(p.collect(t0 + 2500)), std::vector<unix_ms>{t0 + 2500});
  commit(p, 1, t0 + 2500, instance_state::success);
  EXPECT_FALSE(p.next_due().has_value());
  for (unix_ms k = 3; k <= 20; ++k) EXPECT_TRUE(p.collect(t0 + k * sec).empty());
  // A rebuild after it fired does not fire it again.
  planner q(t0 + 30 * sec);
  q.upsert(t, runtime_at(1, t0 + 2500), t0 + 30 * sec, true);
  EXPECT_TRUE(q.collect(t0 + 30 * sec).empty());
  EXPECT_FALSE(q.next_due().has_value());
  EXPECT_EQ(p.stats().fired, 1u);
}

TEST(planner, manual_task_fires_only_through_trigger_now) {
  planner p(t0);
  p.upsert(make_task(1, ""), no_runtime(1), t0, false);
  EXPECT_FALSE(p.next_due().has_value());
  EXPECT_TRUE(p.collect(t0 + 3'600'000).empty());
  auto d = p.trigger_now("", 1, t0 + 1234);
  ASSERT_TRUE(d) << view(d.error()).message;
  EXPECT_EQ(slots_of(*d), std::vector<unix_ms>{t0 + 1234});
}

// -- manual runs ----------------------------------------------------------------------------

TEST(planner, trigger_now_on_skip_policy_with_an_active_run_returns_an_error) {
  planner p(t0);
  auto t = make_task(1, "@every 1h", overlap_policy::skip);
  t.tenant = "acme";
  p.upsert(t, no_runtime(1), t0, false);
  auto first = p.trigger_now("acme", 1, t0 + 10);
  ASSERT_TRUE(first) << view(first.error()).message;
  EXPECT_EQ(slots_of(*first), std::vector<unix_ms>{t0 + 10});
  commit(p, 1, t0 + 10, instance_state::running);
  auto second = p.trigger_now("acme", 1, t0 + 20);
  ASSERT_FALSE(second);
  EXPECT_EQ(view(second.error()).code, errc::already_exists);
  EXPECT_EQ(view(second.error()).field, "overlap");
  EXPECT_EQ(p.stats().fired, 1u);
  // Once the run ended, a manual run is accepted again.
  p.observe(make_instance(1, t0 + 10, instance_state::success));
  EXPECT_TRUE(p.trigger_now("", 1, t0 + 30));
}

TEST(planner, trigger_now_of_an_unknown_task_or_another_tenant_is_not_found) {
  planner p(t0);
  auto t = make_task(1, "@every 1h");
  t.tenant = "acme";
  p.upsert(t, no_runtime(1), t0, false);
  auto unknown = p.trigger_now("", 2, t0);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(view(unknown.error()).code, errc::not_found);
  auto other = p.trigger_now("globex", 1, t0);
  ASSERT_FALSE(other);
  EXPECT_EQ(view(other.error()).code, errc::not_found);
}

TEST(planner, trigger_now_twice_for_the_same_instant_is_refused) {
  planner p(t0);
  p.upsert(make_task(1, ""), no_runtime(1), t0, false);
  ASSERT_TRUE(p.trigger_now("", 1, t0 + 5));
  auto again = p.trigger_now("", 1, t0 + 5);
  ASSERT_FALSE(again);
  EXPECT_EQ(view(again.error()).code, errc::already_exists);
}

TEST(planner, trigger_now_held_for_upstreams_names_them_and_fires_once_they_succeed) {
  planner p(t0);
  auto a = make_task(1, "");
  auto b = make_task(2, "");
  auto c = make_task(3, "");
  c.depends_on = {1, 2};
  for (auto& t : {a, b, c}) p.upsert(t, no_runtime(t.id), t0, false);
  p.observe(make_instance(2, t0 - 10, instance_state::success));  // B is done, A never ran
  auto held = p.trigger_now("", 3, t0 + 5);
  ASSERT_TRUE(held) << view(held.error()).message;  // accepted, not already_exists
  EXPECT_TRUE(held->fires.empty());
  EXPECT_EQ(held->waiting_for, std::vector<uint64_t>{1});
  p.observe(make_instance(1, t0 + 6, instance_state::success));
  auto d = p.collect(t0 + 7);
  EXPECT_EQ(slots_of(d, 3), std::vector<unix_ms>{t0 + 5}) << "the held run fires";
}

// -- settle / requeue -----------------------------------------------------------------------

TEST(planner, settle_of_a_failed_proposal_frees_the_task_for_its_overlap_policy) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s", overlap_policy::skip), no_runtime(1), t0, false);
  auto d = p.collect(t0 + 1000);
  ASSERT_EQ(d.fires.size(), 1u);
  EXPECT_TRUE(p.collect(t0 + 2000).empty()) << "an unsettled proposal counts as running";
  p.settle(d.fires[0]);  // the proposal failed: no instance was created
  EXPECT_EQ(slots_of(p.collect(t0 + 3000)), std::vector<unix_ms>{t0 + 3000});
}

TEST(planner, settle_releases_a_slot_held_by_buffer_one) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s", overlap_policy::buffer_one), no_runtime(1), t0, false);
  auto d = p.collect(t0 + 1000);
  ASSERT_EQ(d.fires.size(), 1u);
  EXPECT_TRUE(p.collect(t0 + 2000).empty());
  p.settle(d.fires[0]);
  EXPECT_EQ(slots_of(p.collect(t0 + 2100)), std::vector<unix_ms>{t0 + 2000});
}

TEST(planner, requeue_decides_a_failed_fire_again_at_the_next_collect) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s", overlap_policy::skip), no_runtime(1), t0, false);
  auto d = p.collect(t0 + 1000);
  ASSERT_EQ(d.fires.size(), 1u);
  const auto s = d.fires[0];
  EXPECT_EQ(p.next_due(), t0 + 2000);
  // What the trigger actor does when the fire proposal fails: settle, then requeue.
  p.settle(s);
  p.requeue(s);
  EXPECT_LE(p.next_due(), t0 + 1200) << "a requeued slot is ready at once";
  auto again = p.collect(t0 + 1200);
  EXPECT_EQ(slots_of(again), std::vector<unix_ms>{t0 + 1000}) << "the same slot, not a new one";
  EXPECT_TRUE(p.collect(t0 + 1300).empty()) << "a requeued slot is decided once";
  EXPECT_EQ(p.next_due(), t0 + 2000);
  EXPECT_EQ(p.stats().fired, 2u);
}

TEST(planner, removed_task_never_fires_again) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s"), no_runtime(1), t0, false);
  ASSERT_EQ(p.collect(t0 + 1000).fires.size(), 1u);
  p.remove(1);
  EXPECT_EQ(p.task_count(), 0u);
  EXPECT_FALSE(p.next_due().has_value());
  EXPECT_TRUE(p.collect(t0 + 5000).empty());
}

// How many runs a broadcast slot creates is the router's decision, by the
// workers online as it proposes the fire (tests/actors/router/placement_test.cpp).
TEST(planner, broadcast_slot_leaves_its_fanout_to_the_router) {
  planner p(t0);
  auto t = make_task(1, "@every 1s");
  t.route = proto::route_strategy::broadcast;
  t.labels = {{"zone", "eu"}};
  p.upsert(t, no_runtime(1), t0, false);
  auto d = p.collect(t0 + 1000);
  ASSERT_EQ(d.fires.size(), 1u);
  EXPECT_EQ(d.fires[0].fanout, 0u) << "the trigger decided a broadcast slot's fanout";
}

}  // namespace
}  // namespace aisched::trigger
