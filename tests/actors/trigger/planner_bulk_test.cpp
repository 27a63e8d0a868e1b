// trigger::planner's bulk enqueue (POST /api/v1/tasks/{id}/runs): one slot at
// the instant of the request (or the first free one after it and after the
// task's previous batch) carrying one payload per run, manual (it neither
// counts toward max_runs nor is refused by it), held back by the overlap
// policy like a manual run, and refused with a clear error where one run per
// payload would be ambiguous (shards, broadcast, upstreams) or out of bounds.
#include "actors/trigger/planner_fixture.hpp"

#include "proto/validate.hpp"

namespace aisched::trigger {
namespace {

using namespace testing_support;

std::vector<std::string> payloads(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(R"({"n":)" + std::to_string(i) + "}");
  return out;
}

TEST(planner_bulk, one_slot_at_now_carries_every_payload_in_order) {
  planner p(t0);
  p.upsert(make_task(1, ""), no_runtime(1), t0, false);
  auto d = p.enqueue("", 1, payloads(3), t0 + 77);
  ASSERT_TRUE(d) << view(d.error()).message;
  ASSERT_EQ(d->fires.size(), 1u);
  auto& f = d->fires[0];
  EXPECT_EQ(f.slot, t0 + 77);
  EXPECT_FALSE(f.scheduled) << "a bulk enqueue is manual: it must not count toward max_runs";
  EXPECT_EQ(f.payloads, payloads(3));
  EXPECT_EQ(f.fanout, 0u);
  EXPECT_EQ(p.stats().fired, 1u);
}

TEST(planner_bulk, batches_in_one_instant_take_distinct_ordered_slots) {
  planner p(t0);
  p.upsert(make_task(1, ""), no_runtime(1), t0, false);
  auto first = p.enqueue("", 1, payloads(2), t0 + 5);
  ASSERT_TRUE(first);
  // A trigger in the batch's millisecond is neither refused nor deduplicated
  // away: it takes the next free instant, as a batch would.
  auto triggered = p.trigger_now("", 1, t0 + 5);
  ASSERT_TRUE(triggered) << view(triggered.error()).message;
  ASSERT_EQ(triggered->fires.size(), 1u);
  EXPECT_EQ(triggered->fires[0].slot, t0 + 6);
  // In flight or committed, an earlier batch's slot is never shared: two
  // batches in one millisecond would share run ids and the second be dropped.
  auto second = p.enqueue("", 1, payloads(2), t0 + 5);
  ASSERT_TRUE(second) << view(second.error()).message;
  EXPECT_EQ(second->fires[0].slot, t0 + 7);
  p.settle(first->fires[0]);
  p.settle(triggered->fires[0]);
  p.settle(second->fires[0]);
  auto third = p.enqueue("", 1, payloads(2), t0 + 5);
  ASSERT_TRUE(third) << view(third.error()).message;
  EXPECT_EQ(third->fires[0].slot, t0 + 8) << "a later batch sorts after the earlier ones";
  auto later = p.enqueue("", 1, payloads(2), t0 + 50);
  ASSERT_TRUE(later);
  EXPECT_EQ(later->fires[0].slot, t0 + 50) << "a free instant is taken as is";
}

TEST(planner_bulk, a_batch_never_takes_a_schedule_instant) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1s"), no_runtime(1), t0, false);
  auto d = p.enqueue("", 1, payloads(1), t0 + 2000);
  ASSERT_TRUE(d) << view(d.error()).message;
  EXPECT_EQ(d->fires[0].slot, t0 + 2001) << "the slot at t0+2s belongs to the schedule";
}

TEST(planner_bulk, the_overlap_policy_holds_a_batch_back_while_a_run_is_active) {
  planner p(t0);
  p.upsert(make_task(1, "@every 1h", overlap_policy::skip), no_runtime(1), t0, false);
  ASSERT_TRUE(p.trigger_now("", 1, t0 + 10));
  commit(p, 1, t0 + 10, instance_state::running);
  auto held = p.enqueue("", 1, payloads(2), t0 + 20);
  ASSERT_FALSE(held);
  EXPECT_EQ(view(held.error()).code, errc::already_exists);
  EXPECT_EQ(view(held.error()).field, "overlap");
  p.observe(make_instance(1, t0 + 10, instance_state::success));
  EXPECT_TRUE(p.enqueue("", 1, payloads(2), t0 + 30));
}

TEST(planner_bulk, replace_cancels_the_active_run_and_allow_runs_beside_it) {
  planner p(t0);
  p.upsert(make_task(1, "", overlap_policy::replace), no_runtime(1), t0, false);
  p.upsert(make_task(2, "", overlap_policy::allow), no_runtime(2), t0, false);
  for (uint64_t id : {1, 2}) {
    ASSERT_TRUE(p.trigger_now("", id, t0 + 10));
    commit(p, id, t0 + 10, instance_state::running);
  }
  auto replaced = p.enqueue("", 1, payloads(2), t0 + 20);
  ASSERT_TRUE(replaced) << view(replaced.error()).message;
  EXPECT_EQ(replaced->cancels, std::vector<std::string>{proto::make_instance_id(1, t0 + 10, 0)});
  auto beside = p.enqueue("", 2, payloads(2), t0 + 20);
  ASSERT_TRUE(beside) << view(beside.error()).message;
  EXPECT_TRUE(beside->cancels.empty());
}

TEST(planner_bulk, ambiguous_tasks_and_bad_counts_are_refused_naming_why) {
  planner p(t0);
  auto sharded = make_task(1, "");
  sharded.shards = 4;
  auto broadcast = make_task(2, "");
  broadcast.route = proto::route_strategy::broadcast;
  auto downstream = make_task(3, "");
  downstream.depends_on = {4};
  p.upsert(sharded, no_runtime(1), t0, false);
  p.upsert(broadcast, no_runtime(2), t0, false);
  p.upsert(downstream, no_runtime(3), t0, false);
  p.upsert(make_task(4, ""), no_runtime(4), t0, false);
  for (auto [id, word] : {std::pair{1, "shards"}, std::pair{2, "broadcast"},
                          std::pair{3, "depends_on"}}) {
    auto d = p.enqueue("", id, payloads(2), t0);
    ASSERT_FALSE(d) << "task " << id;
    EXPECT_EQ(view(d.error()).code, errc::invalid_argument);
    EXPECT_NE(view(d.error()).message.find(word), std::string::npos) << view(d.error()).message;
  }
  for (size_t n : {size_t{0}, proto::max_bulk_runs + 1}) {
    auto d = p.enqueue("", 4, payloads(n), t0);
    ASSERT_FALSE(d) << n << " payloads";
    EXPECT_EQ(view(d.error()).field, "payloads");
  }
  EXPECT_TRUE(p.enqueue("", 4, payloads(proto::max_bulk_runs), t0));
  EXPECT_EQ(p.stats().fired, 1u) << "a refused batch fired something";
}

TEST(planner_bulk, an_unknown_task_or_another_tenants_is_not_found) {
  planner p(t0);
  auto t = make_task(1, "");
  t.tenant = "acme";
  p.upsert(t, no_runtime(1), t0, false);
  auto unknown = p.enqueue("acme", 2, payloads(1), t0);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(view(unknown.error()).code, errc::not_found);
  auto other = p.enqueue("globex", 1, payloads(1), t0);
  ASSERT_FALSE(other);
  EXPECT_EQ(view(other.error()).code, errc::not_found);
}

}  // namespace
}  // namespace aisched::trigger
