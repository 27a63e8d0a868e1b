// The router's pure parts: placement rounds over the run queue (tenants,
// capacity, budget, order kept for what waits), a broadcast slot's fanout,
// why a run waits, and the worker registry's credentials and tenant-scoped
// listing.
#include <gtest/gtest.h>

#include "actors/router/placement.hpp"
#include "actors/router/registry.hpp"
#include "proto/validate.hpp"

using namespace aisched;
using namespace aisched::router;
using proto::instance;
using proto::task;
using proto::worker_status;

namespace {

instance run(const std::string& id, uint64_t task_id, const std::string& tenant = "default") {
  instance x;
  x.id = id;
  x.task_id = task_id;
  x.tenant = tenant;
  return x;
}

candidate worker(const std::string& id, const std::string& tenant, uint32_t slots,
                 bool shared = false) {
  candidate c;
  c.id = id;
  c.tenant = tenant;
  c.shared = shared;
  c.max_load = slots;
  return c;
}

/// A worker of `tenant` with one slot and `labels`.
candidate labelled(const std::string& id, std::map<std::string, std::string> labels,
                   const std::string& tenant = "default") {
  auto c = worker(id, tenant, 1);
  c.labels = std::move(labels);
  return c;
}

struct fixture : ::testing::Test {
  std::map<uint64_t, task_terms> tasks;
  pick_context ctx;
  concurrency limits;
  std::function<const task_terms*(uint64_t)> task_of = [this](uint64_t id) -> const task_terms* {
    auto t = tasks.find(id);
    return t == tasks.end() ? nullptr : &t->second;
  };
  void add_task(uint64_t id, const std::string& tenant,
                std::map<std::string, std::string> labels = {}) {
    task t;
    t.id = id;
    t.tenant = tenant;
    t.labels = std::move(labels);
    tasks[id] = task_terms::of(t);
  }
};

}  // namespace

TEST_F(fixture, runs_go_only_to_their_tenants_workers_or_shared_ones) {
  add_task(1, "acme");
  add_task(2, "bravo");
  run_queue q;
  q.push(run("a1", 1, "acme"));
  q.push(run("b1", 2, "bravo"));
  q.push(run("a2", 1, "acme"));
  std::vector<candidate> ws{worker("bravo-w", "bravo", 8)};
  auto r = place(q, task_of, ws, 100, 100, ctx, limits);
  ASSERT_EQ(r.placed.size(), 1u);
  EXPECT_EQ(r.placed[0].instance_id, "b1");
  EXPECT_EQ(r.placed[0].worker_id, "bravo-w");
  // acme's runs wait, in their order.
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q.items()[0].run.id, "a1");
  EXPECT_EQ(q.items()[1].run.id, "a2");
  // A shared worker takes every tenant's runs.
  ws.push_back(worker("shared", "default", 8, true));
  r = place(q, task_of, ws, 100, 100, ctx, limits);
  ASSERT_EQ(r.placed.size(), 2u);
  for (auto& e : r.placed) EXPECT_EQ(e.worker_id, "shared");
  EXPECT_TRUE(q.empty());
}

TEST_F(fixture, a_round_stops_at_the_budget_and_the_free_slots) {
  add_task(1, "default");
  run_queue q;
  for (int i = 0; i < 10; ++i) q.push(run("r" + std::to_string(i), 1));
  EXPECT_FALSE(q.push(run("r0", 1))) << "a run is queued once";
  std::vector<candidate> ws{worker("w", "default", 3)};
  auto r = place(q, task_of, ws, 2, 100, ctx, limits);
  EXPECT_EQ(r.placed.size(), 2u);
  r = place(q, task_of, ws, 100, 100, ctx, limits);
  EXPECT_EQ(r.placed.size(), 1u) << "one slot left";
  EXPECT_EQ(ws[0].reserved, 3u);
  EXPECT_EQ(q.size(), 7u);
  EXPECT_EQ(q.items().front().run.id, "r3");
}

TEST_F(fixture, no_op_runs_take_no_slot_of_a_native_worker_and_one_of_an_external_one) {
  add_task(1, "default");  // shell
  task noop;
  noop.id = 2;
  noop.kind = proto::task_kind::noop;
  tasks[2] = task_terms::of(noop);
  run_queue q;
  q.push(run("s1", 1));
  q.push(run("s2", 1));
  for (int i = 0; i < 5; ++i) q.push(run("n" + std::to_string(i), 2, "default"), true);
  q.push(run("s3", 1));
  EXPECT_EQ(q.noops(), 5u);
  auto native = worker("native", "default", 1);
  native.free_noops = true;
  std::vector<candidate> ws{native};
  auto r = place(q, task_of, ws, 100, 100, ctx, limits);
  // One slot: s1 takes it; every no-op goes past the full worker; s2, s3 wait in order.
  ASSERT_EQ(r.placed.size(), 6u);
  EXPECT_EQ(r.placed[0].instance_id, "s1");
  EXPECT_FALSE(r.slotless[0]);
  for (size_t i = 1; i < 6; ++i) EXPECT_TRUE(r.slotless[i]) << r.placed[i].instance_id;
  EXPECT_EQ(ws[0].reserved, 1u);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q.items()[0].run.id, "s2");
  EXPECT_EQ(q.items()[1].run.id, "s3");
  EXPECT_EQ(q.noops(), 0u);
  // With no slot free and no no-op queued, a round looks at nothing.
  r = place(q, task_of, ws, 100, 100, ctx, limits);
  EXPECT_TRUE(r.placed.empty());

  // An external worker runs a no-op over HTTP: it holds a slot there, and a
  // full one takes none. A closed native worker (max_load 0) takes none either.
  auto closed = worker("closed", "default", 0);
  closed.free_noops = true;
  std::vector<candidate> ext{worker("http", "default", 2), closed};
  run_queue q2;
  for (int i = 0; i < 3; ++i) q2.push(run("m" + std::to_string(i), 2), true);
  r = place(q2, task_of, ext, 100, 100, ctx, limits);
  ASSERT_EQ(r.placed.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.placed[i].worker_id, "http");
    EXPECT_FALSE(r.slotless[i]);
  }
  EXPECT_EQ(ext[0].reserved, 2u);
  EXPECT_EQ(q2.size(), 1u);
  EXPECT_EQ(q2.noops(), 1u) << "the no-op put back is still counted";
  // Every slot taken and no worker that takes no-ops without one: a round
  // looks at nothing (a queue of no-ops is not rescanned on every wake-up;
  // a looked-at run of a deleted task would come back orphaned).
  q2.push(run("gone", 99), true);
  r = place(q2, task_of, ext, 100, 100, ctx, limits);
  EXPECT_TRUE(r.placed.empty());
  EXPECT_TRUE(r.orphaned.empty()) << "the queue was scanned with no room for anything";
  EXPECT_EQ(q2.size(), 2u);
}

TEST_F(fixture, runs_of_deleted_tasks_are_handed_back_for_cancelling) {
  add_task(1, "default");
  run_queue q;
  q.push(run("gone", 99));
  q.push(run("ok", 1));
  std::vector<candidate> ws{worker("w", "default", 4)};
  auto r = place(q, task_of, ws, 10, 10, ctx, limits);
  ASSERT_EQ(r.orphaned.size(), 1u);
  EXPECT_EQ(r.orphaned.front().run.id, "gone");
  ASSERT_EQ(r.placed.size(), 1u);
  EXPECT_FALSE(q.contains("gone"));
}

// -- a broadcast slot's fanout (decided by the router as it proposes the fire) ---------

TEST_F(fixture, a_broadcast_slot_fans_out_to_the_matching_workers) {
  task b;
  b.id = 1;
  b.route = proto::route_strategy::broadcast;
  b.labels = {{"zone", "eu"}};
  tasks[1] = task_terms::of(b);
  add_task(2, "default");  // least_loaded
  std::vector<candidate> ws{labelled("eu-1", {{"zone", "eu"}}), labelled("us-1", {{"zone", "us"}}),
                            labelled("eu-gpu", {{"zone", "eu"}, {"gpu", "true"}})};
  std::vector<proto::fire_slot> slots{{1, 1000, "b"}, {2, 1000, "plain"}, {99, 1000, "gone"}};
  decide_fanout(slots, task_of, ws);
  EXPECT_EQ(slots[0].fanout, 2u) << "one run per worker matching zone=eu";
  EXPECT_EQ(slots[1].fanout, 0u) << "a task that is not broadcast creates its shards";
  EXPECT_EQ(slots[2].fanout, 0u) << "a task the router does not know is left as it is";
  // The runs placement sees are the ones the state machine creates (proto::runs_of).
  auto runs = runs_fired(slots, task_of);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs.items()[0].run.id, proto::make_instance_id(1, 1000, 0));
  EXPECT_EQ(runs.items()[1].run.id, proto::make_instance_id(1, 1000, 1));
  EXPECT_EQ(runs.items()[1].run.shards, 2u);
  EXPECT_EQ(runs.items()[2].run.task_id, 2u);

  // No matching worker: one run, which waits for one.
  std::vector<candidate> us{labelled("us-1", {{"zone", "us"}})};
  decide_fanout(slots, task_of, us);
  EXPECT_EQ(slots[0].fanout, 1u);
}

// The census the trigger kept before #45 counted every tenant's online
// workers: one that cannot take the task's runs added a run, which then went
// to a worker that had one already (pick() places shards past its members on
// the least loaded).
TEST(broadcast_fanout, counts_the_online_workers_that_serve_the_tasks_tenant) {
  std::vector<candidate> ws{labelled("acme-1", {}, "acme"), labelled("bravo-1", {}, "bravo"),
                            labelled("shared", {}, "bravo"), labelled("draining", {}, "acme"),
                            labelled("offline", {}, "acme")};
  ws[2].shared = true;
  ws[3].status = worker_status::draining;
  ws[4].status = worker_status::offline;
  EXPECT_EQ(broadcast_fanout("acme", {}, ws), 2u) << "acme-1 and the shared worker";
  EXPECT_EQ(broadcast_fanout("bravo", {}, ws), 2u) << "bravo-1 and the shared worker";
}

TEST(broadcast_fanout, is_at_least_one_and_at_most_max_shards) {
  EXPECT_EQ(broadcast_fanout("default", {}, {}), 1u);
  std::vector<candidate> many(proto::max_shards + 5, labelled("w", {}));
  EXPECT_EQ(broadcast_fanout("default", {}, many), proto::max_shards);
}

TEST(run_queue, a_run_queued_again_keeps_its_place_and_the_newer_view) {
  run_queue q;
  auto first = run("1-100-0", 1);
  first.state = proto::instance_state::dispatched;  // placed again: in flight, queued
  first.attempt = 1;
  ASSERT_TRUE(q.push(first));
  ASSERT_TRUE(q.push(run("2-100-0", 2)));
  auto retried = run("1-100-0", 1);  // then lost and retried before it went
  retried.attempt = 2;
  EXPECT_FALSE(q.push(retried));
  auto stale = first;  // an older view arriving late changes nothing
  EXPECT_FALSE(q.push(stale));
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q.items()[0].run.id, "1-100-0");
  EXPECT_EQ(q.items()[0].run.attempt, 2u);
  EXPECT_EQ(q.items()[0].run.state, proto::instance_state::pending);
  auto popped = q.pop();
  q.put_back({popped});
  EXPECT_FALSE(q.push(stale));
  EXPECT_EQ(q.items()[0].run.attempt, 2u);
}

TEST(why_waiting, names_the_tenant_and_labels_or_the_workers_state) {
  std::vector<candidate> ws{worker("w", "acme", 4)};
  EXPECT_EQ(why_waiting("bravo", {}, ws), "no worker of tenant bravo is registered");
  EXPECT_EQ(why_waiting("acme", {{"zone", "eu"}}, ws), "no worker of tenant acme matches zone=eu");
  EXPECT_EQ(why_waiting("acme", {}, ws), "") << "an online match only waits for a slot";
  ws[0].status = worker_status::draining;
  EXPECT_EQ(why_waiting("acme", {}, ws), "all matching workers are draining");
  ws[0].status = worker_status::offline;
  EXPECT_EQ(why_waiting("acme", {}, ws), "all matching workers are offline");
  ws[0].reserved = 4;
  ws[0].status = worker_status::online;
  EXPECT_EQ(why_waiting("acme", {}, ws), "") << "busy is not a reason";
}

TEST(why_waiting, a_worker_registered_with_no_capacity_is_named_as_the_reason) {
  // A native worker whose outbox failed registers with max_load 0: runs wait, saying so.
  std::vector<candidate> ws{worker("w", "acme", 0)};
  EXPECT_EQ(why_waiting("acme", {}, ws),
            "all matching workers take no runs (max_load 0: a worker whose outbox failed)");
  ws.push_back(worker("v", "acme", 2));
  EXPECT_EQ(why_waiting("acme", {}, ws), "") << "another worker has room";
}

TEST(worker_registry, a_registration_with_max_load_0_has_no_capacity) {
  worker_registry reg;
  proto::worker w;
  w.id = "n1";
  w.max_load = 0;
  auto& e = reg.upsert(w, 1);
  EXPECT_EQ(e.c.max_load, 0u);
  EXPECT_FALSE(e.c.has_capacity());
}

TEST(worker_registry, credentials_verify_only_for_their_worker) {
  worker_registry reg;
  proto::worker a;
  a.id = "a";
  a.tenant = "acme";
  reg.upsert(a, 1).credential = make_credential();
  proto::worker b;
  b.id = "b";
  b.tenant = "bravo";
  reg.upsert(b, 1).credential = make_credential();
  auto ca = reg.find("a")->credential, cb = reg.find("b")->credential;
  EXPECT_EQ(ca.size(), 64u);
  EXPECT_NE(ca, cb);
  EXPECT_TRUE(reg.verify("a", ca));
  EXPECT_FALSE(reg.verify("a", cb));
  EXPECT_FALSE(reg.verify("a", ""));
  EXPECT_FALSE(reg.verify("nobody", ca));
  reg.find("b")->credential.clear();  // a native worker: no credential at all
  EXPECT_FALSE(reg.verify("b", "")) << "an empty credential never matches";
  // Listing: a tenant's own workers, credentials never included.
  auto l = reg.list("acme");
  ASSERT_EQ(l.items.size(), 1u);
  EXPECT_EQ(l.items[0].id, "a");
  EXPECT_TRUE(l.items[0].credential.empty());
  EXPECT_EQ(reg.list("").items.size(), 2u);
}
