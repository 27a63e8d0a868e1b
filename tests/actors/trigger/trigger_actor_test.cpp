// Tests for the trigger actor shell on CAF's test coordinator (virtual time, no threads):
// a real raft group of one over RocksDB in a temporary directory, the store actor and the
// trigger actor, wired as in runtime/main.cpp. Checks committed instances (deterministic
// ids, whole-second slots, no duplicates), manual runs, overlap skip, the catch-up after
// a leadership change, max_runs and exclusion calendars across leaderships, and the slot
// outcomes and lateness it reports as metrics.
#define CAF_GTEST_DSL_IMPL
#include "support/caf_gtest_dsl.hpp"
#include "support/node_fixture.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/trigger/trigger_actor.hpp"
#include "obs/metrics.hpp"
#include "proto/errors.hpp"
#include "proto/interfaces.hpp"
#include "storage/state_machine.hpp"
#include "support/prometheus_text.hpp"

namespace aisched::trigger {
namespace {

using namespace std::chrono_literals;
using proto::applied;
using proto::instance;

// The trigger's wall clock at spawn: half a second past a whole second, so `@every 1s`
// slots and wake-ups never coincide with the start.
const unix_ms start_unix = test::at("2026-01-01T00:00:00.500Z");
const unix_ms t0 = test::at("2026-01-01T00:00:00Z");
constexpr unix_ms sec = 1000;

using trigger_impl = caf::stateful_actor<trigger_state, proto::trigger_actor::base>;

class trigger_actor_test : public test_coordinator_fixture<test::actor_test_config>,
                           public test::node_fixture {
 protected:
  trigger_actor_test() : node_fixture(sys, sched, self, "trigger", start_unix) {
    trigger_ = sys.spawn(trigger_actor_impl, node_.raft, node_.store, sim_clock(), duration_ms{0});
    subscribe(trigger_);
    sched.run();  // leadership, then the (empty) rebuild
  }

  // Moves virtual time forward by `total` in steps of `step`, delivering every message
  // after each step. Timers fire when their instant is reached, never early.
  void advance(std::chrono::milliseconds total, std::chrono::milliseconds step = 100ms) {
    sched.run();
    for (auto done = 0ms; done < total; done += step) {
      advance_time(std::min(step, total - done));
      sched.run();
    }
  }

  // Creates a task as the gateway would (created_at = the trigger's current time).
  uint64_t create(proto::task t) {
    t.kind = proto::task_kind::noop;
    if (t.name.empty()) t.name = "t";
    t.created_at = t.updated_at = now();
    return create_task(t);
  }

  caf::expected<applied> trigger_now(uint64_t id) {
    caf::expected<applied> out{make_error(errc::internal, "no answer")};
    auto h = self->request(trigger_, caf::infinite, proto::trigger_now_atom::value,
                           std::string{}, id);
    sched.run();
    if (self->mailbox().empty()) {
      ADD_FAILURE() << "trigger did not answer";
      return out;
    }
    h.receive([&](applied& a) { out = std::move(a); }, [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  void set_leading(bool leading) { lead(trigger_, leading); }

  // Committed instances of task `id`, oldest slot first.
  std::vector<instance> instances_of(uint64_t id) {
    proto::instance_query q;
    q.tenant = "";
    q.task_id = id;
    q.limit = 1000;
    auto page = node_.sm->list_instances(q);
    EXPECT_TRUE(page) << sys.render(page.error());
    if (!page) return {};
    EXPECT_TRUE(page->next_cursor.empty());
    auto xs = page->items;
    std::sort(xs.begin(), xs.end(),
              [](const instance& a, const instance& b) { return a.slot < b.slot; });
    return xs;
  }

  static std::vector<unix_ms> slots(const std::vector<instance>& xs) {
    std::vector<unix_ms> out;
    for (auto& x : xs) out.push_back(x.slot);
    return out;
  }

  const slot_stats& stats() {
    auto& st = deref<trigger_impl>(trigger_).state;
    if (!st.term.plan) throw std::runtime_error("the trigger has no planner (not leading)");
    return st.term.plan->stats();
  }

  proto::trigger_actor trigger_;
};

std::vector<unix_ms> whole_seconds(unix_ms first, unix_ms last) {
  std::vector<unix_ms> out;
  for (auto s = first; s <= last; s += sec) out.push_back(s);
  return out;
}

proto::task every_second() {
  proto::task t;
  t.name = "tick";
  t.schedule = "@every 1s";
  return t;
}

TEST_F(trigger_actor_test, every_second_task_fires_one_committed_instance_per_virtual_second) {
  auto id = create(every_second());
  ASSERT_NE(id, 0u);
  EXPECT_TRUE(instances_of(id).empty()) << "nothing is due at creation";
  advance(10s);
  ASSERT_EQ(now(), t0 + 10'500);
  auto xs = instances_of(id);
  EXPECT_EQ(slots(xs), whole_seconds(t0 + sec, t0 + 10 * sec));
  std::set<std::string> ids;
  for (auto& x : xs) {
    EXPECT_EQ(x.id, std::to_string(id) + "-" + std::to_string(x.slot) + "-0");
    EXPECT_EQ(x.task_id, id);
    EXPECT_EQ(x.state, proto::instance_state::pending);
    EXPECT_EQ(x.created_at, x.slot) << "fired at the slot instant, not later";
    EXPECT_FALSE(x.trace_id.empty());
    ids.insert(x.id);
  }
  EXPECT_EQ(ids.size(), xs.size()) << "duplicate instances";
  // Coarse steps (the timer fires at its instant within each step) keep the cadence.
  advance(5s, 700ms);
  EXPECT_EQ(slots(instances_of(id)), whole_seconds(t0 + sec, t0 + 15 * sec));
  EXPECT_EQ(stats().fired, 15u);
  EXPECT_EQ(stats().missed, 0u);
  EXPECT_EQ(stats().skipped, 0u);
}

TEST_F(trigger_actor_test, trigger_now_commits_a_manual_instance_at_the_current_instant) {
  proto::task t;
  t.name = "manual";  // no schedule: manual only
  auto id = create(t);
  ASSERT_NE(id, 0u);
  advance(250ms);
  auto first = trigger_now(id);
  ASSERT_TRUE(first) << sys.render(first.error());
  ASSERT_EQ(first->instances.size(), 1u);
  EXPECT_EQ(first->instances[0].slot, start_unix + 250);
  EXPECT_EQ(first->instances[0].id, proto::make_instance_id(id, start_unix + 250, 0));
  advance(1s);
  auto second = trigger_now(id);
  ASSERT_TRUE(second) << sys.render(second.error());
  ASSERT_EQ(second->instances.size(), 1u);
  EXPECT_EQ(second->instances[0].slot, start_unix + 1250);
  EXPECT_EQ(slots(instances_of(id)),
            (std::vector<unix_ms>{start_unix + 250, start_unix + 1250}));
  advance(5s);
  EXPECT_EQ(instances_of(id).size(), 2u) << "a manual task never fires by itself";

  auto unknown = trigger_now(id + 100);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(view(unknown.error()).code, errc::not_found);
}

TEST_F(trigger_actor_test, trigger_now_is_refused_while_not_leading) {
  proto::task t;
  t.name = "manual";
  auto id = create(t);
  set_leading(false);
  auto r = trigger_now(id);
  ASSERT_FALSE(r);
  EXPECT_EQ(view(r.error()).code, errc::not_leader);
  EXPECT_TRUE(instances_of(id).empty());
}

TEST_F(trigger_actor_test, overlap_skip_task_without_results_fires_once_and_skips_later_slots) {
  auto t = every_second();
  t.overlap = proto::overlap_policy::skip;
  auto id = create(t);
  ASSERT_NE(id, 0u);
  advance(5s);
  auto xs = instances_of(id);
  ASSERT_EQ(slots(xs), std::vector<unix_ms>{t0 + sec}) << "the first run never finishes";
  EXPECT_EQ(xs[0].state, proto::instance_state::pending);
  EXPECT_EQ(stats().fired, 1u);
  EXPECT_EQ(stats().skipped, 4u);  // slots 2..5
  // A manual run is refused too while the first one is active.
  auto manual = trigger_now(id);
  ASSERT_FALSE(manual);
  EXPECT_EQ(view(manual.error()).code, errc::already_exists);
  EXPECT_EQ(instances_of(id).size(), 1u);
}

TEST_F(trigger_actor_test, paused_task_fires_nothing_until_resumed_at_its_next_slot) {
  auto id = create(every_second());
  ASSERT_NE(id, 0u);
  advance(2s);  // slots 1, 2; now = 2.5 s
  auto pause = propose(proto::set_paused{"", id, true, now()});
  ASSERT_TRUE(pause) << sys.render(pause.error());
  advance(3s);  // now = 5.5 s
  EXPECT_EQ(slots(instances_of(id)), whole_seconds(t0 + sec, t0 + 2 * sec));
  auto resume = propose(proto::set_paused{"", id, false, now()});
  ASSERT_TRUE(resume) << sys.render(resume.error());
  advance(2s);  // now = 7.5 s: slots 6 and 7, none of the paused ones
  auto expected = whole_seconds(t0 + sec, t0 + 2 * sec);
  expected.push_back(t0 + 6 * sec);
  expected.push_back(t0 + 7 * sec);
  EXPECT_EQ(slots(instances_of(id)), expected);
}

TEST_F(trigger_actor_test, restart_with_fire_once_fires_one_catch_up_slot_and_no_duplicates) {
  auto t = every_second();
  t.misfire = proto::misfire_policy::fire_once;
  auto id = create(t);
  ASSERT_NE(id, 0u);
  advance(3s);  // slots 1, 2, 3 fire; now = 3.5 s
  ASSERT_EQ(slots(instances_of(id)), whole_seconds(t0 + sec, t0 + 3 * sec));
  set_leading(false);
  advance(5s);  // now = 8.5 s: slots 4..8 are missed, stale wake-ups are ignored
  EXPECT_EQ(slots(instances_of(id)), whole_seconds(t0 + sec, t0 + 3 * sec))
      << "a trigger that does not lead fires nothing";
  set_leading(true);
  auto after_rebuild = instances_of(id);
  ASSERT_EQ(after_rebuild.size(), 4u) << "exactly one catch-up slot";
  EXPECT_EQ(after_rebuild.back().slot, t0 + 8 * sec) << "the latest missed slot";
  EXPECT_EQ(after_rebuild.back().created_at, t0 + 8'500) << "fired at once on the rebuild";
  EXPECT_EQ(stats().missed, 4u);  // slots 4..7
  advance(2s);  // now = 10.5 s
  auto xs = instances_of(id);
  std::vector<unix_ms> expected = whole_seconds(t0 + sec, t0 + 3 * sec);
  for (auto s : whole_seconds(t0 + 8 * sec, t0 + 10 * sec)) expected.push_back(s);
  EXPECT_EQ(slots(xs), expected);
  std::set<std::string> ids;
  for (auto& x : xs) ids.insert(x.id);
  EXPECT_EQ(ids.size(), xs.size());
  EXPECT_EQ(stats().fired, 3u);  // the catch-up, then slots 9 and 10
}

TEST_F(trigger_actor_test, restart_without_downtime_refires_no_slot) {
  auto id = create(every_second());
  advance(3s);
  set_leading(false);
  set_leading(true);
  advance(2s);
  EXPECT_EQ(slots(instances_of(id)), whole_seconds(t0 + sec, t0 + 5 * sec));
  EXPECT_EQ(stats().missed, 0u);
}

TEST_F(trigger_actor_test, a_new_leadership_continues_the_max_runs_count_from_the_store) {
  auto t = every_second();
  t.max_runs = 3;
  auto id = create(t);
  ASSERT_NE(id, 0u);
  advance(2s);  // slots 1 and 2 fire
  ASSERT_EQ(instances_of(id).size(), 2u);
  set_leading(false);
  set_leading(true);  // a new planner, rebuilt from the committed fire records
  advance(5s);
  EXPECT_EQ(slots(instances_of(id)), whole_seconds(t0 + sec, t0 + 3 * sec))
      << "one more fire, then the schedule ends";
  auto rt = node_.sm->get_task_runtime(id);
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->scheduled_fires, 3u);
}

TEST_F(trigger_actor_test, a_committed_calendar_skips_its_dates_also_for_a_new_leader) {
  proto::calendar c;
  c.name = "freeze";
  c.days = {{*proto::parse_day("2026-01-01"), *proto::parse_day("2026-01-01")}};
  ASSERT_TRUE(propose(proto::put_calendar{c}));
  sched.run();
  auto t = every_second();
  t.exclude_calendar = "freeze";
  auto frozen = create(t);
  auto control = create(every_second());
  ASSERT_NE(frozen, 0u);
  advance(3s);
  EXPECT_EQ(instances_of(control).size(), 3u);
  EXPECT_TRUE(instances_of(frozen).empty()) << "fired on an excluded date";
  set_leading(false);
  set_leading(true);  // the rebuild reads the calendar before the tasks
  advance(3s);
  EXPECT_TRUE(instances_of(frozen).empty()) << "a new leader fired on an excluded date";
  // The calendar no longer excludes today: the task fires from its next slot.
  c.days = {{*proto::parse_day("2026-02-01"), *proto::parse_day("2026-02-01")}};
  ASSERT_TRUE(propose(proto::put_calendar{c}));
  advance(2s);
  EXPECT_EQ(instances_of(frozen).size(), 2u);
}

TEST_F(trigger_actor_test, slot_outcomes_and_lateness_reach_the_metrics) {
  // The registry is per process: compare against the values before this test.
  auto& m = obs::get();
  auto lateness = [] {
    auto text = test::parse_prometheus_text(obs::serialize());
    return std::pair{text.value("scheduler_trigger_lateness_seconds_count").value_or(-1),
                     text.value("scheduler_trigger_lateness_seconds_sum").value_or(-1)};
  };
  const auto fired = m.slots_fired.value(), missed = m.slots_missed.value(),
             dedup = m.slots_deduplicated.value();
  const auto [count, sum] = lateness();

  auto t = every_second();
  t.misfire = proto::misfire_policy::fire_once;
  auto id = create(t);
  ASSERT_NE(id, 0u);
  advance(3s);  // slots 1, 2, 3 fire on time
  set_leading(false);
  advance(5s);  // now = 8.5 s
  set_leading(true);  // slot 8 fires late by 0.5 s; 4..7 are missed
  EXPECT_EQ(m.slots_fired.value() - fired, 4);
  EXPECT_EQ(m.slots_missed.value() - missed, 4);
  auto [count_after, sum_after] = lateness();
  EXPECT_EQ(count_after - count, 4);
  EXPECT_DOUBLE_EQ(sum_after - sum, 0.5);

  // A manual run twice at the same instant is one slot: the second fire creates nothing.
  proto::task manual;
  manual.name = "manual";
  auto mid = create(manual);
  ASSERT_TRUE(trigger_now(mid));
  auto again = trigger_now(mid);
  ASSERT_TRUE(again) << sys.render(again.error());
  EXPECT_TRUE(again->instances.empty());
  EXPECT_EQ(m.slots_fired.value() - fired, 5);
  EXPECT_EQ(m.slots_deduplicated.value() - dedup, 1);
  EXPECT_EQ(lateness().first - count, 4) << "manual runs have no lateness";
}

// Backpressure red holds firing back; when it eases, the misfire policy decides
// which of the held slots fire (late), and every held slot counts as deferred.
TEST_F(trigger_actor_test, red_defers_slots_and_the_misfire_policy_decides_what_fires_after) {
  auto& m = obs::get();
  auto red = [&](proto::pressure_level l) {
    caf::anon_send(trigger_, proto::pressure_atom::value, proto::pressure{l, 0});
    sched.run();
  };
  for (auto policy : {proto::misfire_policy::skip, proto::misfire_policy::fire_once,
                      proto::misfire_policy::fire_all}) {
    auto t = every_second();
    t.misfire = policy;
    t.misfire_limit = 10;
    auto id = create(t);
    ASSERT_NE(id, 0u);
    advance(2s);  // two slots on time
    ASSERT_EQ(instances_of(id).size(), 2u);
    const auto deferred = m.slots_deferred.value();
    red(proto::pressure_level::red);
    advance(5s);  // five slots come due while red: none fires
    EXPECT_EQ(instances_of(id).size(), 2u) << "a slot fired while red";
    red(proto::pressure_level::green);
    EXPECT_EQ(m.slots_deferred.value() - deferred, 5) << "held slots not counted as deferred";
    auto after = instances_of(id);
    size_t want = policy == proto::misfire_policy::skip ? 2 : policy == proto::misfire_policy::fire_once ? 3 : 7;
    EXPECT_EQ(after.size(), want) << "misfire policy " << static_cast<int>(policy);
    // The schedule goes on from now, on time.
    advance(2s);
    EXPECT_EQ(instances_of(id).size(), want + 2);
    auto del = propose(proto::delete_task{"", id});
    ASSERT_TRUE(del) << sys.render(del.error());
    sched.run();
  }
}

}  // namespace
}  // namespace aisched::trigger
