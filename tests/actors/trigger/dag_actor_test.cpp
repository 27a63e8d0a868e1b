// Tests for DAG dependencies through the trigger actor on CAF's test coordinator (virtual
// time, no threads): a real raft group of one over RocksDB in a temporary directory, the
// store actor and the trigger actor, wired as in runtime/main.cpp. The test plays the
// worker: it dispatches runs and reports their results through raft. Checks that a task with
// depends_on fires a slot only after its upstream's run of that slot succeeded (A -> B ->
// C), and that a failed upstream run holds the downstream slot back for good.
#define CAF_GTEST_DSL_IMPL
#include "support/caf_gtest_dsl.hpp"
#include "support/node_fixture.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "actors/trigger/trigger_actor.hpp"
#include "proto/interfaces.hpp"
#include "storage/state_machine.hpp"

namespace aisched::trigger {
namespace {

using proto::instance;
using proto::instance_state;

// The trigger's wall clock at spawn: half a second past a whole second, so `@every 1s`
// slots and wake-ups never coincide with the start.
const unix_ms start_unix = test::at("2026-01-01T00:00:00.500Z");
const unix_ms t0 = test::at("2026-01-01T00:00:00Z");
constexpr unix_ms sec = 1000;

class dag_actor_test : public test_coordinator_fixture<test::actor_test_config>,
                       public test::node_fixture {
 protected:
  dag_actor_test() : node_fixture(sys, sched, self, "dag", start_unix) {
    trigger_ = sys.spawn(trigger_actor_impl, node_.raft, node_.store, sim_clock(), duration_ms{0});
    subscribe(trigger_);
    sched.run();  // leadership, then the (empty) rebuild
  }

  // Creates an `@every 1s` noop task depending on `upstreams`.
  uint64_t create(const std::string& name, std::vector<uint64_t> upstreams = {}) {
    proto::task t;
    t.name = name;
    t.kind = proto::task_kind::noop;
    t.schedule = "@every 1s";
    t.depends_on = std::move(upstreams);
    t.created_at = t.updated_at = now();
    return create_task(t);
  }

  // The committed run of task `id`'s slot `slot`, if it fired.
  std::optional<instance> run_of(uint64_t id, unix_ms slot) {
    auto x = node_.sm->get_instance("", proto::make_instance_id(id, slot, 0));
    if (!x) return std::nullopt;
    return *x;
  }

  bool fired(uint64_t id, unix_ms slot) { return run_of(id, slot).has_value(); }

  // Plays the worker for task `id`'s slot `slot`: dispatch to "w1", then report `outcome`,
  // both at now(). Returns the finished run.
  instance finish(uint64_t id, unix_ms slot, instance_state outcome) {
    auto run = proto::make_instance_id(id, slot, 0);
    auto d = propose_dispatch(run, now());
    EXPECT_TRUE(d) << "dispatch " << run << ": " << sys.render(d.error());
    proto::run_result r;
    r.instance_id = run;
    r.worker_id = "w1";
    r.state = outcome;
    r.exit_code = outcome == instance_state::success ? 0 : 2;
    r.started_at = r.finished_at = now();
    auto a = propose(proto::report_results{node_.term, now(), {r}});
    EXPECT_TRUE(a) << "report " << run << ": " << sys.render(a.error());
    auto x = run_of(id, slot);
    if (!x) {
      ADD_FAILURE() << "no run " << run;
      return {};
    }
    EXPECT_EQ(x->state, outcome);
    return *x;
  }

  // Slots of task `id` that fired, oldest first.
  std::vector<unix_ms> slots_of(uint64_t id) {
    proto::instance_query q;
    q.tenant = "";
    q.task_id = id;
    q.limit = 1000;
    auto page = node_.sm->list_instances(q);
    EXPECT_TRUE(page) << sys.render(page.error());
    std::vector<unix_ms> out;
    if (page)
      for (auto& x : page->items) out.push_back(x.slot);
    std::sort(out.begin(), out.end());
    return out;
  }

  proto::trigger_actor trigger_;
};

TEST_F(dag_actor_test, downstream_slot_fires_only_when_the_upstream_run_of_that_slot_succeeds) {
  auto a = create("A");
  auto b = create("B", {a});
  ASSERT_NE(a, 0u);
  ASSERT_NE(b, 0u);
  for (unix_ms k = 1; k <= 5; ++k) {
    const auto slot = t0 + k * sec;
    advance_to(slot + 300);
    ASSERT_TRUE(fired(a, slot)) << "A fires every second, slot " << k;
    EXPECT_EQ(run_of(a, slot)->created_at, slot);
    EXPECT_FALSE(fired(b, slot)) << "B fired slot " << k << " before A's run succeeded";
    advance_to(slot + 600);
    EXPECT_FALSE(fired(b, slot)) << "B fired slot " << k << " while A's run is pending";
    auto up = finish(a, slot, instance_state::success);
    auto down = run_of(b, slot);
    ASSERT_TRUE(down) << "B's slot " << k << " fires when A's success commits";
    EXPECT_EQ(down->created_at, up.finished_at) << "at once, not at a later wake-up";
    EXPECT_EQ(down->state, instance_state::pending);
    finish(b, slot, instance_state::success);
  }
  advance_to(t0 + 5 * sec + 900);
  EXPECT_EQ(slots_of(b), slots_of(a));
}

TEST_F(dag_actor_test, chain_fires_each_slot_in_order_a_then_b_then_c) {
  auto a = create("A");
  auto b = create("B", {a});
  auto c = create("C", {b});
  ASSERT_NE(c, 0u);
  for (unix_ms k = 1; k <= 4; ++k) {
    const auto slot = t0 + k * sec;
    advance_to(slot + 200);
    ASSERT_TRUE(fired(a, slot)) << "slot " << k;
    EXPECT_FALSE(fired(b, slot)) << "B fired slot " << k << " before A succeeded";
    EXPECT_FALSE(fired(c, slot)) << "C fired slot " << k << " before A (and B) succeeded";
    advance_to(slot + 400);
    auto up = finish(a, slot, instance_state::success);
    ASSERT_TRUE(fired(b, slot)) << "slot " << k;
    EXPECT_EQ(run_of(b, slot)->created_at, up.finished_at);
    EXPECT_FALSE(fired(c, slot)) << "C fired slot " << k << " before B succeeded";
    advance_to(slot + 600);
    EXPECT_FALSE(fired(c, slot)) << "C fired slot " << k << " while B's run is pending";
    auto mid = finish(b, slot, instance_state::success);
    auto down = run_of(c, slot);
    ASSERT_TRUE(down) << "C's slot " << k << " fires when B's success commits";
    EXPECT_EQ(down->created_at, mid.finished_at);
    finish(c, slot, instance_state::success);
  }
}

TEST_F(dag_actor_test, chain_first_slot_fires_a_then_b_then_c) {
  // The first slot of a fresh chain: no task has run yet, so each waits for its upstream.
  auto a = create("A");
  auto b = create("B", {a});
  auto c = create("C", {b});
  ASSERT_NE(c, 0u);
  const auto slot = t0 + sec;
  advance_to(slot + 200);
  ASSERT_TRUE(fired(a, slot));
  EXPECT_FALSE(fired(b, slot));
  EXPECT_FALSE(fired(c, slot));
  advance_to(slot + 400);
  auto up = finish(a, slot, instance_state::success);
  ASSERT_TRUE(fired(b, slot));
  EXPECT_EQ(run_of(b, slot)->created_at, up.finished_at);
  EXPECT_FALSE(fired(c, slot)) << "C fired before B succeeded";
  advance_to(slot + 600);
  EXPECT_FALSE(fired(c, slot)) << "C fired while B's run is pending";
  auto mid = finish(b, slot, instance_state::success);
  auto down = run_of(c, slot);
  ASSERT_TRUE(down) << "C fires when B's success commits";
  EXPECT_EQ(down->created_at, mid.finished_at);
}

TEST_F(dag_actor_test, failed_upstream_run_holds_the_slot_back_until_a_later_upstream_success) {
  auto a = create("A");
  auto b = create("B", {a});
  ASSERT_NE(b, 0u);
  // Slot 1 succeeds end to end.
  advance_to(t0 + sec + 300);
  finish(a, t0 + sec, instance_state::success);
  ASSERT_TRUE(fired(b, t0 + sec));
  finish(b, t0 + sec, instance_state::success);
  // A's slot 2 fails (one attempt: final): B never runs slot 2.
  advance_to(t0 + 2 * sec + 300);
  auto failed = finish(a, t0 + 2 * sec, instance_state::failed);
  EXPECT_EQ(failed.state, instance_state::failed);
  advance_to(t0 + 2 * sec + 900);
  EXPECT_FALSE(fired(b, t0 + 2 * sec)) << "B fired after A's run of the slot failed";
  // Slot 3: A fires, B waits for it (not for the failed slot 2), and fires on its success.
  advance_to(t0 + 3 * sec + 500);
  ASSERT_TRUE(fired(a, t0 + 3 * sec));
  EXPECT_FALSE(fired(b, t0 + 3 * sec)) << "B fired slot 3 before A's run succeeded";
  EXPECT_FALSE(fired(b, t0 + 2 * sec));
  auto up = finish(a, t0 + 3 * sec, instance_state::success);
  auto next = run_of(b, t0 + 3 * sec);
  ASSERT_TRUE(next) << "B's next fire follows A's next success";
  EXPECT_EQ(next->created_at, up.finished_at);
  advance_to(t0 + 5 * sec + 500);
  EXPECT_FALSE(fired(b, t0 + 2 * sec)) << "the failed slot is never caught up";
  EXPECT_EQ(slots_of(b), (std::vector<unix_ms>{t0 + sec, t0 + 3 * sec}))
      << "slots 4 and 5 wait for A's runs, which never finish";
}

}  // namespace
}  // namespace aisched::trigger
