// storage::state_machine on a real RocksDB applying fire_placed (fire and
// dispatch folded, as the leader's router proposes a fire whose runs free
// workers take): each run it places is created dispatched exactly as a fire
// followed by a dispatch at the same instant would leave it, the others
// pending; the counts and the task's runtime agree; a repeat creates nothing
// and moves nothing; a fire_placed of another term changes nothing; and a
// placed run then goes on to its result and survives a reopen.
#include "storage/state_machine_fixture.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
using namespace testing_support;

size_t idx(instance_state s) { return static_cast<size_t>(s); }

fire_placed placed_fire(uint64_t task, unix_ms slot, unix_ms at,
                        std::vector<dispatch_entry> placed, uint64_t term = 1) {
  return fire_placed{term, at, {fire_slot{task, slot, "tr"}}, std::move(placed)};
}

TEST_F(state_machine_test, a_placed_fire_leaves_each_run_as_a_fire_and_a_dispatch_would) {
  auto folded = create(make_task("folded", "acme", 3));
  auto apart = create(make_task("apart", "acme", 3));
  const unix_ms at = t0 - 200;  // fired ahead of its instant
  auto a = must_apply(placed_fire(folded, t0, at,
                                  {{make_instance_id(folded, t0, 0), "w1"},
                                   {make_instance_id(folded, t0, 2), "w2"}}));
  must_apply(fire_of({{apart, t0, "tr"}}, at));
  must_apply(dispatch{1, at, {{make_instance_id(apart, t0, 0), "w1"},
                              {make_instance_id(apart, t0, 2), "w2"}}});
  ASSERT_EQ(a.instances.size(), 3u);
  for (uint32_t shard = 0; shard < 3; ++shard) {
    SCOPED_TRACE(shard);
    auto x = get_instance(make_instance_id(folded, t0, shard));
    EXPECT_EQ(x, a.instances[shard]);
    auto y = get_instance(make_instance_id(apart, t0, shard));
    // Everything but the identity is what fire + dispatch leaves.
    y.id = x.id;
    y.task_id = x.task_id;
    y.idempotency_key = x.idempotency_key;
    EXPECT_EQ(x, y);
  }
  EXPECT_EQ(a.instances[0].state, instance_state::dispatched);
  EXPECT_EQ(a.instances[0].worker_id, "w1");
  EXPECT_EQ(a.instances[0].dispatched_at, at);
  EXPECT_GT(a.instances[0].deadline, t0) << "a run placed ahead is due from its instant";
  EXPECT_EQ(a.instances[1].state, instance_state::pending);
  EXPECT_TRUE(a.instances[1].worker_id.empty());
  EXPECT_EQ(a.instances[2].worker_id, "w2");

  state_machine::state_counts want{};
  want[idx(instance_state::pending)] = 2;
  want[idx(instance_state::dispatched)] = 4;
  EXPECT_EQ(sm_->instance_counts(), want);
  auto rt = sm_->get_task_runtime(folded);
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->last_state, instance_state::dispatched);
  EXPECT_EQ(rt->runs, 3u);
  // The state index lists the placed runs as dispatched, the other as pending.
  EXPECT_EQ(page_ids(instance_query{"", folded, true, instance_state::dispatched, "", 100}),
            (std::vector<std::string>{make_instance_id(folded, t0, 0),
                                      make_instance_id(folded, t0, 2)}));
  EXPECT_EQ(page_ids(instance_query{"", folded, true, instance_state::pending, "", 100}),
            std::vector<std::string>{make_instance_id(folded, t0, 1)});
}

TEST_F(state_machine_test, a_placed_fire_repeated_or_of_another_term_changes_nothing) {
  auto id = create(make_task("once"));
  const auto run = make_instance_id(id, t0, 0);
  // Of another term (a deposed leader's router): rejected, nothing created.
  auto stale = apply_one(placed_fire(id, t0, t0, {{run, "w1"}}, 2));
  EXPECT_FALSE(stale);
  EXPECT_FALSE(sm_->get_instance("", run));
  // Fired pending first, then again placed (a retried proposal): no change.
  must_apply(fire_of({{id, t0, "tr"}}));
  auto again = must_apply(placed_fire(id, t0, t0 + 1, {{run, "w1"}}));
  EXPECT_TRUE(again.instances.empty());
  auto x = get_instance(run);
  EXPECT_EQ(x.state, instance_state::pending);
  EXPECT_TRUE(x.worker_id.empty());
}

TEST_F(state_machine_test, a_placed_run_goes_on_to_its_result_and_survives_a_reopen) {
  auto id = create(make_task("placed"));
  const auto run = make_instance_id(id, t0, 0);
  must_apply(placed_fire(id, t0, t0, {{run, "w1"}}));
  must_apply(report_results{1, t0 + 3, {report(run, instance_state::success, t0 + 2)}});
  reopen();
  auto x = get_instance(run);
  EXPECT_EQ(x.state, instance_state::success);
  EXPECT_EQ(x.worker_id, "w1");
  EXPECT_EQ(x.dispatched_at, t0);
  EXPECT_EQ(x.started_at, t0 + 2);
  state_machine::state_counts want{};
  want[idx(instance_state::success)] = 1;
  EXPECT_EQ(sm_->instance_counts(), want);
}

}  // namespace
}  // namespace aisched::storage
