// Concurrency limits, pure (actors/router/concurrency) and as placement applies
// them: a task's max_concurrency across its shards and attempts, a pool's size
// across tasks, the waiting reasons, and slots given back when runs end.
#include <gtest/gtest.h>

#include "actors/router/concurrency.hpp"
#include "actors/router/placement.hpp"

using namespace aisched;
using namespace aisched::router;
using proto::instance;
using proto::task;

namespace {

task_terms limited(uint64_t id, uint32_t max_concurrency, const std::string& pool = "") {
  task t;
  t.id = id;
  t.max_concurrency = max_concurrency;
  t.pool = pool;
  return task_terms::of(t);
}

proto::pool pool_of(const std::string& name, uint32_t size) {
  proto::pool p;
  p.name = name;
  p.size = size;
  return p;
}

instance run(const std::string& id, uint64_t task_id) {
  instance x;
  x.id = id;
  x.task_id = task_id;
  return x;
}

candidate worker(const std::string& id, uint32_t slots) {
  candidate c;
  c.id = id;
  c.tenant = "default";
  c.max_load = slots;
  return c;
}

}  // namespace

TEST(concurrency, max_concurrency_counts_every_run_of_the_task) {
  concurrency c;
  auto t = limited(7, 2);
  EXPECT_EQ(c.blocked(t), "");
  c.hold("7-1000-0", t);  // shard 0
  c.hold("7-1000-1", t);  // shard 1 of the same slot
  EXPECT_EQ(c.blocked(t), "max_concurrency 2 reached (2/2)");
  c.hold("7-1000-1", t);  // the same run again (dispatched, then running): one slot
  EXPECT_EQ(c.held_by_task(7), 2u);
  c.release("7-1000-0");
  EXPECT_EQ(c.blocked(t), "");
  c.release("7-1000-0");  // twice: no-op
  EXPECT_EQ(c.held_by_task(7), 1u);
}

TEST(concurrency, a_pool_is_shared_by_the_tasks_naming_it) {
  concurrency c;
  c.set_pool(pool_of("db", 2));
  auto a = limited(1, 0, "db"), b = limited(2, 0, "db"), other = limited(3, 0, "");
  c.hold("1-0-0", a);
  c.hold("2-0-0", b);
  EXPECT_EQ(c.blocked(a), "pool db full (2/2)");
  EXPECT_EQ(c.blocked(b), "pool db full (2/2)");
  EXPECT_EQ(c.blocked(other), "");
  c.release("1-0-0");
  EXPECT_EQ(c.blocked(b), "");
  // Resized: runs holding slots keep them; the size bounds new ones.
  c.set_pool(pool_of("db", 1));
  EXPECT_EQ(c.blocked(a), "pool db full (1/1)");
}

TEST(concurrency, pools_are_per_tenant_and_must_be_known) {
  concurrency c;
  auto t = limited(1, 0, "db");
  EXPECT_EQ(c.blocked(t), "pool db does not exist");
  proto::pool p = pool_of("db", 1);
  p.tenant = "acme";
  c.set_pool(p);
  EXPECT_EQ(c.blocked(t), "pool db does not exist");  // acme's, not default's
  t.tenant = "acme";
  EXPECT_EQ(c.blocked(t), "");
}

TEST(concurrency, a_pool_of_size_zero_holds_every_run_back) {
  concurrency c;
  c.set_pool(pool_of("frozen", 0));
  EXPECT_EQ(c.blocked(limited(1, 0, "frozen")), "pool frozen full (0/0)");
}

TEST(concurrency, placement_leaves_runs_over_their_limits_queued_in_order) {
  concurrency limits;
  limits.set_pool(pool_of("db", 2));
  std::map<uint64_t, task_terms> tasks{{1, limited(1, 1)}, {2, limited(2, 0, "db")},
                                 {3, limited(3, 0, "db")}, {4, limited(4, 0)}};
  auto task_of = [&](uint64_t id) -> const task_terms* { return &tasks.at(id); };
  run_queue q;
  for (auto& [id, task_id] : std::vector<std::pair<std::string, uint64_t>>{
           {"1a", 1}, {"1b", 1}, {"2a", 2}, {"3a", 3}, {"2b", 2}, {"4a", 4}})
    q.push(run(id, task_id));
  std::vector<candidate> ws{worker("w", 100)};
  pick_context ctx;
  auto r = place(q, task_of, ws, 100, 100, ctx, limits);
  std::vector<std::string> placed;
  for (auto& e : r.placed) placed.push_back(e.instance_id);
  EXPECT_EQ(placed, (std::vector<std::string>{"1a", "2a", "3a", "4a"}));
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q.items()[0].run.id, "1b");  // what waits keeps its order
  EXPECT_EQ(q.items()[1].run.id, "2b");
  // A pool run ends: the next one of the pool fits, the task limit still holds.
  limits.release("3a");
  r = place(q, task_of, ws, 100, 100, ctx, limits);
  ASSERT_EQ(r.placed.size(), 1u);
  EXPECT_EQ(r.placed[0].instance_id, "2b");
  EXPECT_EQ(limits.blocked(tasks.at(1)), "max_concurrency 1 reached (1/1)");
}
