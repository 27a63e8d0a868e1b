// Tests for the router actor on CAF's test coordinator (virtual time, no
// threads): a real raft group of one over RocksDB, the router subscribed to its
// commits as the node wires it, and real worker actors (noop runs complete
// inside them) registered as native workers. Checks that a fired run goes to the
// worker whose labels match and succeeds there; that a run no worker can take
// stays pending with its committed reason; that a router told it no longer leads
// dispatches nothing; that a changed task's next run is placed by its new
// labels (the router keeps every task's terms and reads definitions on demand);
// and that a worker registering without a run the committed
// state has in flight on it gets that attempt committed as lost, for the retry
// policy to decide (the retry actor, not spawned here, starts the next one),
// when it had started, and placed again as the same attempt when it had not.
// A broadcast task's fire gets one run per matching online worker, decided by
// the router as it proposes the fire, also for a task it has not seen yet.
// A run a worker refuses (its outbox failed, before its registration says so)
// is placed again as the same attempt, never a failed one. A retry committed
// while its fired-again slot is placed is placed after all. A worker that
// leaves a dispatch unanswered (stopped, or cut off one way) takes nothing
// new until it answers a probe.
#define CAF_GTEST_DSL_IMPL
#include "support/caf_gtest_dsl.hpp"
#include "support/node_fixture.hpp"
#include "support/silent_worker.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/router/router_actor.hpp"
#include "actors/worker/worker_actor.hpp"
#include "common/run_pool.hpp"
#include "storage/state_machine.hpp"

namespace aisched::proto {
void PrintTo(instance_state s, std::ostream* os) { *os << name_of(s); }
}  // namespace aisched::proto

namespace aisched::router {
namespace {

using proto::instance_state;

class router_actor_test : public test_coordinator_fixture<test::actor_test_config>,
                          public test::node_fixture {
 protected:
  router_actor_test() : node_fixture(sys, sched, self, "router") {
    pool_ = std::make_shared<worker::run_pool>(1);
    router_options opts;
    opts.http_pool = pool_;
    router_ = sys.spawn(router_actor_impl, node_.raft, node_.store, opts);
    subscribe(router_);
    lead(true);
  }

  ~router_actor_test() override { pool_->stop(); }

  /// Tells the router who leads, as the raft actor's leadership listener does.
  void lead(bool leading) { node_fixture::lead(router_, leading, leading ? "n1" : "n2"); }

  /// A native worker `id` with `labels`, registered with the router (holding
  /// `held`, as a restarted worker's registration says).
  proto::worker_actor add_worker(const std::string& id, std::map<std::string, std::string> labels,
                                 std::vector<proto::held_run> held = {}) {
    return add_worker_to(router_, id, std::move(labels), std::move(held));
  }

  /// The same, registered with `router`, its outbox in `outbox_dir` ("": in memory).
  proto::worker_actor add_worker_to(const proto::router_actor& router, const std::string& id,
                                    std::map<std::string, std::string> labels,
                                    std::vector<proto::held_run> held = {},
                                    std::string outbox_dir = "") {
    worker::worker_config cfg;
    cfg.id = id;
    cfg.outbox_dir = std::move(outbox_dir);
    auto w = sys.spawn(worker::worker_actor_impl, cfg,
                       std::make_shared<worker::process_executor>(pool_, worker::exec_options{}));
    keep(w);
    proto::worker info;
    info.id = id;
    info.labels = std::move(labels);
    info.held = std::move(held);
    caf::anon_send(router, proto::register_atom::value, info, w);
    sched.run();
    return w;
  }

  uint64_t add_task(std::map<std::string, std::string> labels) {
    proto::task t;
    t.name = "routed";
    t.kind = proto::task_kind::noop;
    t.labels = std::move(labels);
    return create_task(t);
  }

  uint64_t add_broadcast_task(std::map<std::string, std::string> labels) {
    proto::task t;
    t.name = "everywhere";
    t.kind = proto::task_kind::noop;
    t.labels = std::move(labels);
    t.route = proto::route_strategy::broadcast;
    return create_task(t);
  }

  /// Fires `task` for `slot` through raft, as the trigger does; the router
  /// hears of the new run from the commit and delivers every message it causes.
  std::string fire(uint64_t task, unix_ms slot) {
    EXPECT_TRUE(propose_fire(task, slot));
    sched.run();
    return proto::make_instance_id(task, slot, 0);
  }

  /// Creates `t`, fires its slot slot_ and commits that run dispatched to
  /// `worker`, as an earlier term's router did; returns (task id, run id).
  std::pair<uint64_t, std::string> placed_earlier(proto::task t, const std::string& worker) {
    auto made = propose(proto::create_task{std::move(t)});
    EXPECT_TRUE(made && made->tasks.size() == 1);
    uint64_t task = made && !made->tasks.empty() ? made->tasks.at(0).id : 0;
    EXPECT_TRUE(propose_fire(task, slot_));
    auto id = proto::make_instance_id(task, slot_, 0);
    EXPECT_TRUE(propose_dispatch(id, slot_ + 1, worker));
    return {task, id};
  }

  /// Fires `task` at `slot` onto a worker that leaves the dispatch
  /// unanswered: the proxy's request times out (10 s), the attempt fails.
  void lose_dispatch(uint64_t task, unix_ms slot) {
    auto id = fire(task, slot);
    advance_time(std::chrono::seconds(11));  // the proxy's request timeout
    sched.run();
    EXPECT_EQ(instance_of(id).state, instance_state::failed);
  }

  /// Worker `id`'s status as GET /api/v1/workers lists it.
  proto::worker_status status_of(const std::string& id) {
    auto h = self->request(router_, caf::infinite, proto::list_workers_atom::value);
    sched.run();
    auto out = proto::worker_status::online;
    h.receive(
        [&](proto::worker_list& l) {
          for (auto& w : l.items)
            if (w.id == id) out = w.status;
        },
        [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
    return out;
  }

  std::shared_ptr<worker::run_pool> pool_;
  proto::router_actor router_;
  static constexpr unix_ms slot_ = 1'796'022'000'000;
};

TEST_F(router_actor_test, a_fired_run_goes_to_the_worker_whose_labels_match_and_succeeds) {
  add_worker("eu-1", {{"zone", "eu"}});
  add_worker("us-1", {{"zone", "us"}});
  auto id = fire(add_task({{"zone", "us"}}), slot_);

  auto x = instance_of(id);
  EXPECT_EQ(x.state, instance_state::success) << x.error;
  EXPECT_EQ(x.worker_id, "us-1");
}

/// Proposes fire `f` through the router, as the trigger does, and returns its answer.
caf::expected<proto::applied> fire_through(test_coordinator_fixture<test::actor_test_config>& fx,
                                           const proto::router_actor& router, proto::fire f) {
  return test::propose_to(fx, router, std::move(f));
}

TEST_F(router_actor_test, a_fire_through_the_router_commits_its_runs_placed_in_one_command) {
  add_worker("eu-1", {{"zone", "eu"}});
  auto task = add_task({{"zone", "eu"}});
  proto::task sharded;
  sharded.name = "sharded";
  sharded.kind = proto::task_kind::noop;
  sharded.shards = 3;
  auto three = create_task(sharded);
  sched.run();
  auto a = fire_through(*this, router_,
                        proto::fire{node_.term, slot_,
                                    {proto::fire_slot{task, slot_, "t1"},
                                     proto::fire_slot{three, slot_, "t2"}}});
  ASSERT_TRUE(a) << sys.render(a.error());
  // The fire's own commit created every run dispatched: its answer says what
  // that one command did (a dispatch after it would show pending here).
  ASSERT_EQ(a->instances.size(), 4u);
  for (auto& x : a->instances) {
    EXPECT_EQ(x.state, instance_state::dispatched) << x.id;
    EXPECT_EQ(x.worker_id, "eu-1") << x.id;
    EXPECT_EQ(x.dispatched_at, slot_) << x.id;
    EXPECT_GT(x.deadline, slot_) << x.id;
  }
  sched.run();
  for (auto& x : a->instances) {
    auto y = instance_of(x.id);
    EXPECT_EQ(y.state, instance_state::success) << x.id << ": " << y.error;
  }
  // Fired again (a retried proposal): nothing new, and nothing placed twice.
  a = fire_through(*this, router_, proto::fire{node_.term, slot_, {proto::fire_slot{task, slot_, "t1"}}});
  ASSERT_TRUE(a) << sys.render(a.error());
  EXPECT_TRUE(a->instances.empty());
  sched.run();
  EXPECT_EQ(instance_of(proto::make_instance_id(task, slot_, 0)).state, instance_state::success);
}

TEST_F(router_actor_test, a_fire_while_runs_wait_is_committed_pending_behind_them) {
  add_worker("eu-1", {{"zone", "eu"}});
  auto waiting = fire(add_task({{"zone", "ap"}}), slot_);  // no worker: it waits
  ASSERT_EQ(instance_of(waiting).state, instance_state::pending);
  auto task = add_task({{"zone", "eu"}});
  auto a = fire_through(*this, router_, proto::fire{node_.term, slot_, {proto::fire_slot{task, slot_, "t"}}});
  ASSERT_TRUE(a) << sys.render(a.error());
  ASSERT_EQ(a->instances.size(), 1u);
  EXPECT_EQ(a->instances[0].state, instance_state::pending)
      << "placed ahead of a run that waits in the queue";
  sched.run();
  EXPECT_EQ(instance_of(a->instances[0].id).state, instance_state::success)
      << "the queue placed it afterwards";
  EXPECT_EQ(instance_of(waiting).state, instance_state::pending);
}

TEST_F(router_actor_test, a_fire_of_a_term_the_router_does_not_lead_is_refused_unplaced) {
  add_worker("eu-1", {{"zone", "eu"}});
  auto task = add_task({{"zone", "eu"}});
  auto a = fire_through(*this, router_,
                        proto::fire{node_.term + 1, slot_, {proto::fire_slot{task, slot_, "t"}}});
  EXPECT_FALSE(a) << "a fire of another term committed";
  sched.run();
  auto x = node_.sm->get_instance("", proto::make_instance_id(task, slot_, 0));
  EXPECT_FALSE(x) << "a run was created by a fire of another term";
}

TEST_F(router_actor_test, a_broadcast_fire_creates_one_run_per_matching_online_worker) {
  add_worker("eu-1", {{"zone", "eu"}});
  add_worker("us-1", {{"zone", "us"}});
  add_worker("eu-2", {{"zone", "eu"}});
  auto task = add_broadcast_task({{"zone", "eu"}});
  // As the trigger fires it: fanout 0, for the router to decide.
  auto a = fire_through(*this, router_,
                        proto::fire{node_.term, slot_, {proto::fire_slot{task, slot_, "t"}}});
  ASSERT_TRUE(a) << sys.render(a.error());
  ASSERT_EQ(a->instances.size(), 2u) << "not one run per matching worker";
  std::set<std::string> placed_on;
  for (auto& x : a->instances) {
    EXPECT_EQ(x.shards, 2u) << x.id;
    EXPECT_EQ(x.state, instance_state::dispatched) << x.id;
    placed_on.insert(x.worker_id);
  }
  EXPECT_EQ(placed_on, (std::set<std::string>{"eu-1", "eu-2"}));
}

// A fire may reach the router before the commit that made its task does, or
// while its rebuild reads the tasks: it reads the task from the store to
// decide the fanout. A task not there (deleted meanwhile) creates nothing.
TEST_F(router_actor_test, a_broadcast_fire_of_a_task_the_router_has_not_seen_fans_out_too) {
  lead(false);  // the fixture's router stands aside
  router_options opts;
  opts.http_pool = pool_;
  auto router = sys.spawn(router_actor_impl, node_.raft, node_.store, opts);
  keep(router);  // not subscribed to raft: it hears of no commit
  node_fixture::lead(router, true, "n1");
  add_worker_to(router, "eu-1", {{"zone", "eu"}});
  add_worker_to(router, "us-1", {{"zone", "us"}});
  add_worker_to(router, "eu-2", {{"zone", "eu"}});
  auto task = add_broadcast_task({{"zone", "eu"}});
  auto a = fire_through(*this, router,
                        proto::fire{node_.term, slot_,
                                    {proto::fire_slot{task, slot_, "t"},
                                     proto::fire_slot{task + 100, slot_, "no such task"}}});
  ASSERT_TRUE(a) << sys.render(a.error());
  ASSERT_EQ(a->instances.size(), 2u) << "not one run per matching worker";
  for (auto& x : a->instances) {
    EXPECT_EQ(x.task_id, task) << x.id;
    EXPECT_EQ(x.shards, 2u) << x.id;
  }
}

TEST_F(router_actor_test, a_run_no_worker_can_take_waits_pending_with_its_reason) {
  add_worker("eu-1", {{"zone", "eu"}});
  auto id = fire(add_task({{"zone", "ap"}}), slot_);

  // The reasons are committed on the router's tick, once a second.
  advance_time(std::chrono::seconds(1));
  sched.run();
  auto x = instance_of(id);
  EXPECT_EQ(x.state, instance_state::pending);
  EXPECT_TRUE(x.worker_id.empty()) << x.worker_id;
  EXPECT_NE(x.error.find("zone=ap"), std::string::npos)
      << "the waiting reason was not committed: '" << x.error << "'";

  // A worker that matches arrives: the waiting run goes to it.
  add_worker("ap-1", {{"zone", "ap"}});
  x = instance_of(id);
  EXPECT_EQ(x.state, instance_state::success) << x.error;
  EXPECT_EQ(x.worker_id, "ap-1");
}

TEST_F(router_actor_test, a_changed_task_places_and_sends_its_next_run_by_the_new_definition) {
  add_worker("eu-1", {{"zone", "eu"}});
  add_worker("us-1", {{"zone", "us"}});
  auto task = add_task({{"zone", "eu"}});
  auto first = fire(task, slot_);
  ASSERT_EQ(instance_of(first).state, instance_state::success) << instance_of(first).error;
  EXPECT_EQ(instance_of(first).worker_id, "eu-1");

  // The router now holds the definition it sent; the change must reach it.
  auto t = node_.sm->get_task("", task);
  ASSERT_TRUE(t);
  t->labels = {{"zone", "us"}};
  ASSERT_TRUE(propose(proto::update_task{*t, 0}));
  sched.run();
  auto second = fire(task, slot_ + 1000);
  auto x = instance_of(second);
  EXPECT_EQ(x.state, instance_state::success) << x.error;
  EXPECT_EQ(x.worker_id, "us-1") << "the run was placed by the task's old labels";
}

TEST_F(router_actor_test, a_router_that_no_longer_leads_dispatches_nothing) {
  add_worker("eu-1", {{"zone", "eu"}});
  auto task = add_task({{"zone", "eu"}});
  lead(false);
  auto id = fire(task, slot_);

  auto x = instance_of(id);
  EXPECT_EQ(x.state, instance_state::pending) << "a follower's router dispatched";
  EXPECT_TRUE(x.worker_id.empty()) << x.worker_id;

  // Leading again (its workers register with the new leader), it dispatches.
  lead(true);
  add_worker("eu-1", {{"zone", "eu"}});
  EXPECT_EQ(instance_of(id).state, instance_state::success) << instance_of(id).error;
}

/// A raft actor in front of the node's that answers the first `*left` dispatch
/// proposals with an error, as a leader that loses its quorum or its disk
/// mid-proposal does, and passes everything else through.
proto::raft_actor::behavior_type failing_dispatches(proto::raft_actor::pointer self,
                                                    proto::raft_actor real,
                                                    std::shared_ptr<int> left) {
  return {
      [=](proto::propose_atom a, proto::command& cmd) -> caf::result<proto::applied> {
        if (proto::holds<proto::dispatch>(cmd) && *left > 0) {
          --*left;
          return make_error(errc::storage_unavailable, "the dispatch did not commit (test)");
        }
        return self->delegate(real, a, std::move(cmd));
      },
      [=](proto::change_members_atom a,
          proto::membership_change& c) -> caf::result<proto::applied> {
        return self->delegate(real, a, std::move(c));
      },
      [=](proto::raft_status_atom a) -> caf::result<proto::raft_status> {
        return self->delegate(real, a);
      },
      [=](proto::subscribe_atom a, proto::commit_listener_actor& l) { self->send(real, a, l); },
      [=](proto::flush_atom a) { self->send(real, a); },
      [=](proto::inspect_atom a) -> caf::result<proto::actor_summary> {
        return self->delegate(real, a);
      },
  };
}

// A dispatch proposal that does not commit gives its runs back to the queue:
// the router places them again on its own, not only after the next leader's
// rebuild (chaos_short found a run pending for 240 s before this).
TEST_F(router_actor_test, a_run_whose_dispatch_did_not_commit_is_sent_on_the_next_round) {
  lead(false);  // the fixture's router stands aside
  auto left = std::make_shared<int>(1);
  auto raft = sys.spawn(failing_dispatches, node_.raft, left);
  router_options opts;
  opts.http_pool = pool_;
  auto router = sys.spawn(router_actor_impl, raft, node_.store, opts);
  subscribe(router);
  node_fixture::lead(router, true, "n1");
  auto id = fire(add_task({}), slot_);
  EXPECT_EQ(instance_of(id).state, instance_state::pending) << "no worker yet";

  add_worker_to(router, "w-1", {});
  ASSERT_EQ(*left, 0) << "the router never proposed a dispatch";
  for (int i = 0; i < 20 && instance_of(id).state != instance_state::success; ++i) {
    advance_time(std::chrono::milliseconds(100));
    sched.run();
  }
  auto x = instance_of(id);
  EXPECT_EQ(x.state, instance_state::success)
      << "the run waits " << proto::name_of(x.state) << " after its dispatch failed once";
  EXPECT_EQ(x.worker_id, "w-1");
}

TEST_F(router_actor_test, a_run_its_worker_no_longer_holds_is_committed_lost) {
  // Committed in flight on "eu-1" (a dispatch of an earlier term's router).
  proto::task t;
  t.name = "lost";
  t.kind = proto::task_kind::noop;
  t.labels = {{"zone", "eu"}};
  t.retry.max_attempts = 2;
  auto [task, id] = placed_earlier(t, "eu-1");
  proto::run_result started;  // its `running` report committed: it may have run
  started.instance_id = id;
  started.worker_id = "eu-1";
  started.attempt = 1;
  started.state = instance_state::running;
  started.started_at = slot_ + 2;
  EXPECT_TRUE(propose(proto::report_results{node_.term, slot_ + 2, {started}}));
  lead(true);  // a new term's router rebuilds from the store and finds it in flight

  // The worker comes back holding nothing: the attempt died with it.
  add_worker("eu-1", {{"zone", "eu"}}, {});
  sched.run();

  auto attempts = node_.sm->list_attempts("", id);
  ASSERT_TRUE(attempts) << id;
  ASSERT_FALSE(attempts->items.empty()) << "the lost attempt left no record";
  EXPECT_NE(attempts->items.front().error.find("worker_lost"), std::string::npos)
      << attempts->items.front().error;
  auto x = instance_of(id);
  EXPECT_EQ(x.state, instance_state::retry_waiting)
      << "a lost attempt is a failure the retry policy decides on";
}

TEST_F(router_actor_test,
       a_run_its_restarted_worker_never_started_is_placed_again_as_the_same_attempt) {
  // Placed on "eu-1" by an earlier term's router (ahead of its instant, say),
  // with no `running` committed: the attempt never started.
  proto::task t;
  t.name = "unstarted";
  t.kind = proto::task_kind::noop;
  t.labels = {{"zone", "eu"}};  // one attempt: the default
  auto [task, id] = placed_earlier(t, "eu-1");
  lead(true);

  // The worker restarted without it: no execution was lost, so nothing failed.
  add_worker("eu-1", {{"zone", "eu"}}, {});
  sched.run();

  auto x = instance_of(id);
  EXPECT_EQ(x.state, instance_state::success) << x.error;
  EXPECT_EQ(x.attempt, 1u) << "placed again as the same attempt, whatever max_attempts says";
  EXPECT_EQ(x.worker_id, "eu-1");
  auto attempts = node_.sm->list_attempts("", id);
  ASSERT_TRUE(attempts) << id;
  ASSERT_EQ(attempts->items.size(), 1u);
  EXPECT_EQ(attempts->items.front().state, instance_state::success)
      << attempts->items.front().error;
}

TEST_F(router_actor_test, a_retried_run_of_a_paused_task_says_it_waits_for_the_resume) {
  // Placed on "eu-1" by an earlier term, never started there, and its task
  // paused since: placed again, it waits in this router's queue. Its attempt
  // then times out, the router's tick falls between that and the retry, and
  // the retry makes attempt 2 pending (aisched-chaos seed 1 in CI: the run
  // stayed pending, never noted as waiting for the resume).
  proto::task t;
  t.name = "paused-retry";
  t.kind = proto::task_kind::noop;
  t.labels = {{"zone", "eu"}};
  t.retry.kind = proto::retry_kind::fixed;
  t.retry.max_attempts = 5;
  t.retry.interval = 500;
  auto [task, id] = placed_earlier(t, "eu-1");
  EXPECT_TRUE(propose(proto::set_paused{"", task, true, slot_ + 2}));
  lead(true);
  add_worker("eu-1", {{"zone", "eu"}}, {});
  advance_time(std::chrono::seconds(1));
  sched.run();

  proto::run_result r;
  r.instance_id = id;
  r.attempt = 1;
  r.state = instance_state::timed_out;
  r.exit_code = -1;
  r.error = "no report from the worker before the run's deadline";
  ASSERT_TRUE(propose(proto::report_results{node_.term, now(), {r}}));
  ASSERT_EQ(instance_of(id).state, instance_state::retry_waiting);
  advance_time(std::chrono::seconds(1));  // the tick, before the retry
  sched.run();
  ASSERT_TRUE(propose(proto::retry{node_.term, now(), {id}}));
  sched.run();
  advance_time(std::chrono::seconds(3));
  sched.run();

  auto x = instance_of(id);
  EXPECT_EQ(x.state, instance_state::pending);
  EXPECT_EQ(x.attempt, 2u);
  EXPECT_EQ(x.error, "task paused: the run waits for its resume");

  // Resumed, it runs.
  ASSERT_TRUE(propose(proto::set_paused{"", task, false, now()}));
  sched.run();
  advance_time(std::chrono::seconds(1));
  sched.run();
  x = instance_of(id);
  EXPECT_EQ(x.state, instance_state::success) << x.error;
  EXPECT_EQ(x.attempt, 2u);
}

TEST_F(router_actor_test, a_retry_committed_while_its_slot_is_fired_again_is_still_placed) {
  // A slot fired again (its first fire not known to commit) is placed with
  // the fire. Its run exists already, in retry_waiting: the fire creates
  // nothing, and the placement gives the run back. A retry committed in
  // between was seen while the run was placed; it must be queued then, or
  // attempt 2 waits pending for good.
  lead(false);
  proto::task t;
  t.name = "refired";
  t.kind = proto::task_kind::noop;
  t.retry.kind = proto::retry_kind::fixed;
  t.retry.max_attempts = 5;
  t.retry.interval = 500;
  auto [task, id] = placed_earlier(t, "gone");
  proto::run_result r;
  r.instance_id = id;
  r.worker_id = "gone";
  r.attempt = 1;
  r.state = instance_state::failed;
  r.exit_code = 1;
  ASSERT_TRUE(propose(proto::report_results{node_.term, now(), {r}}));
  ASSERT_EQ(instance_of(id).state, instance_state::retry_waiting);
  lead(true);
  add_worker("w", {});

  // The retry reaches raft first; the router places the fired-again slot
  // before it sees the retry's commit.
  caf::anon_send(node_.raft, proto::propose_atom::value,
                 proto::command{proto::retry{node_.term, now(), {id}}});
  self->send(router_, proto::propose_atom::value,
             proto::fire{node_.term, now(), {proto::fire_slot{task, slot_, "t"}}});
  ASSERT_TRUE(sched.prioritize(router_));
  sched.run_once();
  sched.run();
  advance_time(std::chrono::seconds(1));
  sched.run();

  auto x = instance_of(id);
  EXPECT_EQ(x.state, instance_state::success) << x.error;
  EXPECT_EQ(x.attempt, 2u);
  EXPECT_EQ(x.worker_id, "w");
}

TEST_F(router_actor_test, a_run_a_worker_refuses_is_placed_again_as_the_same_attempt) {
  // Worker "broken" cannot open its outbox (a file where its directory goes),
  // but registers with capacity, as it does until its next registration says
  // max_load 0: it refuses the run. The run never started, so it must wait
  // for another worker as attempt 1, not end failed.
  namespace fs = std::filesystem;
  auto box = fs::temp_directory_path() / ("aisched-router-box-" + std::to_string(::getpid()));
  std::ofstream(box) << "not a directory\n";
  add_worker_to(router_, "broken", {}, {}, box.string());

  auto id = fire(add_task({}), slot_);
  auto x = instance_of(id);
  EXPECT_NE(x.state, instance_state::failed) << "a refused run was ended: " << x.error;
  EXPECT_EQ(x.attempt, 1u);

  add_worker("ok", {});
  sched.run();
  x = instance_of(id);
  EXPECT_EQ(x.state, instance_state::success) << x.error;
  EXPECT_EQ(x.worker_id, "ok");
  EXPECT_EQ(x.attempt, 1u) << "the refusal counted as an attempt";
  std::error_code ec;
  fs::remove(box, ec);
}

TEST_F(router_actor_test, a_worker_that_leaves_a_dispatch_unanswered_takes_nothing_new_until_heard) {
  // "stopped" takes a run and says nothing (SIGSTOP, a paused VM). Holding no
  // slot for what it swallowed, it would draw every later run, retries too;
  // once its proxy's request times out it takes none until its next heartbeat.
  auto promises = std::make_shared<test::burst_promises>();
  auto stopped = sys.spawn(test::silent_worker, std::shared_ptr<std::vector<proto::execute_request>>{},
                           promises);
  keep(stopped);
  proto::worker info;
  info.id = "stopped";
  caf::anon_send(router_, proto::register_atom::value, info, stopped);
  sched.run();
  auto task = add_task({});
  lose_dispatch(task, slot_);
  ASSERT_EQ(promises->size(), 1u) << "the run never reached the stopped worker";

  add_worker("ok", {});
  std::set<std::string> placed_on;
  for (unix_ms k = 1; k <= 4; ++k) {
    auto x = instance_of(fire(task, slot_ + k * 60'000));
    EXPECT_EQ(x.state, instance_state::success) << x.id << ": " << x.error;
    placed_on.insert(x.worker_id);
  }
  EXPECT_EQ(placed_on, std::set<std::string>{"ok"});
  EXPECT_EQ(promises->size(), 1u) << "a run went to the worker that answers nothing";

  proto::worker_heartbeat hb;  // heard from again, and answers: it takes runs again
  hb.id = "stopped";
  caf::anon_send(router_, proto::heartbeat_atom::value, hb);
  sched.run();
  EXPECT_EQ(status_of("stopped"), proto::worker_status::online);
}

TEST_F(router_actor_test, a_worker_that_answers_no_probe_stays_offline_through_its_heartbeats) {
  // A one-way cut (the scheduler simulation's worker_cut found it): its
  // heartbeats arrive, nothing sent to it does. Back online at each heartbeat,
  // it drew every retry of what it swallowed until each run's attempts were
  // spent. Now a heartbeat only asks it for an answer; it takes runs again
  // once one arrives.
  auto deaf = std::make_shared<bool>(true);
  auto got = std::make_shared<std::vector<proto::execute_request>>();
  auto cut = sys.spawn(test::deaf_worker, got, std::make_shared<test::burst_promises>(), deaf);
  keep(cut);
  proto::worker info;
  info.id = "cut";
  auto heartbeat = [&] {
    caf::anon_send(router_, proto::register_atom::value, info, cut);
    sched.run();
  };
  heartbeat();
  auto task = add_task({});
  lose_dispatch(task, slot_);
  ASSERT_EQ(got->size(), 1u) << "the run never reached the cut worker";
  EXPECT_EQ(status_of("cut"), proto::worker_status::offline);

  add_worker("ok", {});
  for (unix_ms k = 1; k <= 3; ++k) {
    heartbeat();  // heard from, as every 5 s: asked for an answer, none comes
    advance_time(std::chrono::seconds(6));
    sched.run();
    EXPECT_EQ(status_of("cut"), proto::worker_status::offline) << "heartbeat " << k;
    auto x = instance_of(fire(task, slot_ + k * 60'000));
    EXPECT_EQ(x.state, instance_state::success) << x.id << ": " << x.error;
    EXPECT_EQ(x.worker_id, "ok");
  }
  EXPECT_EQ(got->size(), 1u) << "a run went to the worker that answers nothing";

  *deaf = false;  // the link mends: the next heartbeat's probe is answered
  heartbeat();
  EXPECT_EQ(status_of("cut"), proto::worker_status::online);
}

}  // namespace
}  // namespace aisched::router
