// Tests for the native worker proxy on CAF's test coordinator (virtual time, no
// threads): a real raft group of one over RocksDB, the real worker actor (noop
// runs complete inside it, without a thread) and the proxy between them, as the
// router wires them. Checks that a report is committed and only then
// acknowledged to the worker, that a run's start queued with its result is
// folded into it (one transition, its start time kept), that a run the worker
// refuses (its outbox failed) goes back to the router with the worker's reason
// and stays dispatched (never a failed attempt: it did not start), that runs
// handed over in one burst (one request to the worker) each end as the worker
// says, and one
// cancelled before its burst went out never reaches it, that runs a lying
// worker does not answer for fail at once, that a proxy of another
// term commits nothing and acknowledges nothing, and that an external worker's
// report, handed over with `settle`, is committed on its own and answered.
#define CAF_GTEST_DSL_IMPL
#include "support/caf_gtest_dsl.hpp"
#include "support/node_fixture.hpp"
#include "support/silent_worker.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "actors/worker/worker_actor.hpp"
#include "actors/worker_proxy/worker_proxy_actor.hpp"
#include "common/run_pool.hpp"
#include "storage/state_machine.hpp"

namespace aisched::proto {
void PrintTo(instance_state s, std::ostream* os) { *os << name_of(s); }
}  // namespace aisched::proto

namespace aisched::worker_proxy {
namespace {

namespace fs = std::filesystem;
using proto::instance_state;

class worker_proxy_actor_test : public test_coordinator_fixture<test::actor_test_config>,
                                public test::node_fixture {
 protected:
  worker_proxy_actor_test() : node_fixture(sys, sched, self, "proxy") {
    pool_ = std::make_shared<worker::run_pool>(1);
  }

  ~worker_proxy_actor_test() override {
    pool_->stop();
    std::error_code ec;
    fs::remove(box_file_, ec);
  }

  /// A noop task fired (for `slot`) and dispatched to worker "w1": its instance.
  proto::instance dispatched_run(unix_ms slot = 1'796'022'000'000) {
    proto::task t;
    t.name = "nothing";
    t.kind = proto::task_kind::noop;
    auto id = create_task(t);
    EXPECT_TRUE(propose_fire(id, slot));
    auto iid = proto::make_instance_id(id, slot, 0);
    EXPECT_TRUE(propose_dispatch(iid, slot + 1));
    return instance_of(iid);
  }

  proto::worker_actor spawn_worker(std::string outbox_dir = "") {
    worker::worker_config cfg;
    cfg.id = "w1";
    cfg.outbox_dir = std::move(outbox_dir);
    auto w = sys.spawn(worker::worker_actor_impl, cfg,
                       std::make_shared<worker::process_executor>(pool_, worker::exec_options{}));
    keep(w);
    return w;
  }

  proto::worker_proxy_actor spawn_proxy(const proto::worker_actor& w, uint64_t term) {
    auto sink = sys.spawn([got = not_taken_, unanswered = unanswered_](
                              proto::not_taken_sink::pointer) -> proto::not_taken_sink::behavior_type {
      return {[got](proto::not_taken_atom, const std::vector<proto::run_result>& runs) {
                got->insert(got->end(), runs.begin(), runs.end());
              },
              [unanswered](proto::unanswered_atom, const std::string& worker_id) {
                unanswered->push_back(worker_id);
              }};
    });
    keep(sink);
    auto p = sys.spawn(worker_proxy_impl, std::string("w1"), w, sink, node_.raft, term,
                       wall_clock{});
    keep(p);
    return p;
  }

  static proto::execute_request execute_of(const proto::instance& x) {
    proto::execute_request req;
    req.instance_id = x.id;
    req.task_id = x.task_id;
    req.kind = proto::task_kind::noop;
    req.attempt = x.attempt;
    return req;
  }

  /// The runs worker `w` holds (executing, or final and not acknowledged).
  std::vector<proto::held_run> held(const proto::worker_actor& w) {
    std::vector<proto::held_run> out;
    auto h = self->request(w, caf::infinite, proto::held_atom::value, uint64_t{0},
                           std::string());
    sched.run();
    h.receive([&](std::vector<proto::held_run>& runs, std::string&) { out = std::move(runs); },
              [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
    return out;
  }

  std::shared_ptr<worker::run_pool> pool_;
  fs::path box_file_;
  /// What the proxies sent their router as not taken (the router's part).
  std::shared_ptr<std::vector<proto::run_result>> not_taken_ =
      std::make_shared<std::vector<proto::run_result>>();
  /// The workers the proxies told their router left a dispatch unanswered.
  std::shared_ptr<std::vector<std::string>> unanswered_ =
      std::make_shared<std::vector<std::string>>();
};

TEST_F(worker_proxy_actor_test, a_report_is_committed_then_acknowledged_to_the_worker) {
  auto x = dispatched_run();
  auto w = spawn_worker();
  auto proxy = spawn_proxy(w, node_.term);

  caf::anon_send(proxy, proto::execute_atom::value, execute_of(x));
  sched.run();

  EXPECT_EQ(instance_of(x.id).state, instance_state::success);
  EXPECT_EQ(instance_of(x.id).worker_id, "w1");
  EXPECT_TRUE(held(w).empty()) << "the committed report was not acknowledged: the worker would "
                                  "keep re-sending it";
}

TEST_F(worker_proxy_actor_test, a_start_queued_with_its_result_is_folded_into_it_with_its_time) {
  auto x = dispatched_run();
  auto w = spawn_worker();
  auto proxy = spawn_proxy(w, node_.term);
  // What every commit listener (router, trigger, retry) hears of the run.
  auto heard = std::make_shared<std::vector<instance_state>>();
  auto listener = sys.spawn([heard, id = x.id]() -> proto::commit_listener_actor::behavior_type {
    return {[](proto::leader_atom, const proto::leadership&) {},
            [heard, id](proto::committed_atom, const proto::applied& a) {
              for (auto& y : a.instances)
                if (y.id == id) heard->push_back(y.state);
            }};
  });
  subscribe(listener);
  sched.run();

  proto::run_result start;
  start.instance_id = x.id;
  start.worker_id = "w1";
  start.attempt = x.attempt;
  start.state = instance_state::running;
  start.started_at = x.dispatched_at + 5;
  auto end = start;
  end.state = instance_state::success;
  end.started_at = 0;  // a result that does not restate its start
  end.finished_at = x.dispatched_at + 9;
  caf::anon_send(proxy, proto::report_atom::value, start);
  caf::anon_send(proxy, proto::report_atom::value, end);
  sched.run();

  EXPECT_EQ(*heard, (std::vector<instance_state>{instance_state::success}))
      << "the start queued with its result was committed as a transition of its own";
  auto now = instance_of(x.id);
  EXPECT_EQ(now.state, instance_state::success);
  EXPECT_EQ(now.started_at, x.dispatched_at + 5) << "the folded start lost its time";
  EXPECT_EQ(now.finished_at, x.dispatched_at + 9);
}

TEST_F(worker_proxy_actor_test, a_run_the_worker_refuses_goes_back_to_the_router_with_its_reason) {
  // A worker whose outbox will not open (a file where its directory goes).
  box_file_ = fs::temp_directory_path() / ("aisched-proxy-box-" + std::to_string(::getpid()));
  std::ofstream(box_file_) << "not a directory\n";
  auto x = dispatched_run();
  auto w = spawn_worker(box_file_.string());
  auto proxy = spawn_proxy(w, node_.term);

  caf::anon_send(proxy, proto::execute_atom::value, execute_of(x));
  sched.run();

  EXPECT_EQ(instance_of(x.id).state, instance_state::dispatched)
      << "a run that never started was ended (a failed attempt it never made)";
  ASSERT_EQ(not_taken_->size(), 1u) << "the refused run did not go back to the router";
  auto& back = not_taken_->front();
  EXPECT_EQ(back.instance_id, x.id);
  EXPECT_EQ(back.attempt, x.attempt);
  EXPECT_EQ(back.worker_id, "w1");
  EXPECT_NE(back.error.find("outbox"), std::string::npos) << back.error;
}

TEST_F(worker_proxy_actor_test, runs_handed_over_in_one_burst_each_end_as_the_worker_says) {
  // Sent to the worker in one request; the worker takes two and refuses the
  // one whose instant is further away than it holds a run.
  auto a = dispatched_run(1'796'022'000'000);
  auto b = dispatched_run(1'796'022'060'000);
  auto far = dispatched_run(1'796'022'120'000);
  auto w = spawn_worker();
  auto proxy = spawn_proxy(w, node_.term);
  auto too_far = execute_of(far);
  too_far.hold_ms = worker::max_hold + 1;

  caf::anon_send(proxy, proto::execute_atom::value, execute_of(a));
  caf::anon_send(proxy, proto::execute_atom::value, too_far);
  caf::anon_send(proxy, proto::execute_atom::value, execute_of(b));
  sched.run();

  EXPECT_EQ(instance_of(a.id).state, instance_state::success);
  EXPECT_EQ(instance_of(b.id).state, instance_state::success);
  EXPECT_EQ(instance_of(far.id).state, instance_state::dispatched)
      << "the refused run was ended instead of going back to the router";
  ASSERT_EQ(not_taken_->size(), 1u) << "the refusal was lost in the batch";
  EXPECT_EQ(not_taken_->front().instance_id, far.id);
  EXPECT_NE(not_taken_->front().error.find("holds a run"), std::string::npos)
      << not_taken_->front().error;
  EXPECT_TRUE(held(w).empty()) << "committed reports stay unacknowledged";
}

TEST_F(worker_proxy_actor_test, a_run_cancelled_before_its_burst_is_sent_never_runs) {
  // The cancel reaches the proxy behind the run, before the proxy sends its
  // burst to the worker: the worker must never get the run.
  auto x = dispatched_run();
  auto w = spawn_worker();
  auto proxy = spawn_proxy(w, node_.term);

  caf::anon_send(proxy, proto::execute_atom::value, execute_of(x));
  caf::anon_send(proxy, proto::cancel_run_atom::value, x.id);
  sched.run();

  EXPECT_EQ(instance_of(x.id).state, instance_state::dispatched)
      << "the cancelled run ran and its report was committed";
  EXPECT_TRUE(held(w).empty()) << "the worker took a run cancelled before it was sent";
}

TEST_F(worker_proxy_actor_test, a_proxy_of_another_term_commits_and_acknowledges_nothing) {
  auto x = dispatched_run();
  auto w = spawn_worker();
  auto stale = spawn_proxy(w, node_.term + 1);  // not the term the entries commit in

  caf::anon_send(stale, proto::execute_atom::value, execute_of(x));
  sched.run();

  EXPECT_EQ(instance_of(x.id).state, instance_state::dispatched) << "a fenced report was applied";
  EXPECT_EQ(held(w), (std::vector<proto::held_run>{{x.id, x.attempt}}))
      << "a report that was not committed must stay in the worker's outbox";
}

TEST_F(worker_proxy_actor_test, runs_a_lying_worker_does_not_answer_for_fail_at_once) {
  // Not left dispatched until their deadline: each run without an answer
  // ends failed, saying so.
  auto a = dispatched_run(1'796'022'000'000);
  auto b = dispatched_run(1'796'022'060'000);
  auto w = sys.spawn(test::silent_worker, std::shared_ptr<std::vector<proto::execute_request>>{},
                     std::shared_ptr<test::burst_promises>{});
  keep(w);
  auto proxy = spawn_proxy(w, node_.term);

  caf::anon_send(proxy, proto::execute_atom::value, execute_of(a));
  caf::anon_send(proxy, proto::execute_atom::value, execute_of(b));
  sched.run();

  for (auto& id : {a.id, b.id}) {
    auto x = instance_of(id);
    EXPECT_EQ(x.state, instance_state::failed) << id;
    EXPECT_NE(x.error.find("no answer"), std::string::npos) << x.error;
  }
}

TEST_F(worker_proxy_actor_test, a_worker_that_leaves_a_burst_unanswered_is_named_to_the_router) {
  // So that the router places nothing new there until it is heard from again
  // (the retries of what it swallowed would all go there: it holds no slot).
  auto promises = std::make_shared<test::burst_promises>();
  auto a = dispatched_run(1'796'024'000'000);
  auto w = sys.spawn(test::silent_worker, std::shared_ptr<std::vector<proto::execute_request>>{},
                     promises);
  keep(w);
  auto proxy = spawn_proxy(w, node_.term);
  caf::anon_send(proxy, proto::execute_atom::value, execute_of(a));
  sched.run();
  ASSERT_EQ(promises->size(), 1u);
  EXPECT_TRUE(unanswered_->empty()) << "named before its request timed out";

  advance_time(std::chrono::seconds(11));
  sched.run();
  EXPECT_EQ(*unanswered_, std::vector<std::string>{"w1"});
  auto x = instance_of(a.id);
  EXPECT_EQ(x.state, instance_state::failed);
  EXPECT_NE(x.error.find("request_timeout"), std::string::npos) << x.error;
}

TEST_F(worker_proxy_actor_test, a_worker_that_answers_with_no_runs_taken_is_not_named) {
  // An answer, even one that takes nothing, is the worker heard from.
  auto a = dispatched_run(1'796'024'060'000);
  auto w = sys.spawn(test::silent_worker, std::shared_ptr<std::vector<proto::execute_request>>{},
                     std::shared_ptr<test::burst_promises>{});
  keep(w);
  auto proxy = spawn_proxy(w, node_.term);
  caf::anon_send(proxy, proto::execute_atom::value, execute_of(a));
  sched.run();
  advance_time(std::chrono::seconds(11));
  sched.run();
  EXPECT_TRUE(unanswered_->empty());
}

TEST_F(worker_proxy_actor_test, a_burst_carries_the_instant_its_proxy_stops_waiting) {
  // Past it the run counts as a failed attempt and is retried: a worker that
  // reaches the request later (it was stopped) refuses it unstarted
  // (worker_sim_executor_test), so the two attempts never run at once.
  auto got = std::make_shared<std::vector<proto::execute_request>>();
  auto a = dispatched_run(1'796'023'000'000);
  auto w = sys.spawn(test::silent_worker, got, std::shared_ptr<test::burst_promises>{});
  keep(w);
  auto proxy = spawn_proxy(w, node_.term);
  auto before = system_now_ms();
  caf::anon_send(proxy, proto::execute_atom::value, execute_of(a));
  sched.run();
  auto after = system_now_ms();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_GE(got->front().answer_by, before + 10'000);
  EXPECT_LE(got->front().answer_by, after + 10'000);
}

/// An external worker's report, as the router hands it over once it has checked
/// the worker's credential: `report` with `settle`, answered by its own commit.
class external_report_test : public worker_proxy_actor_test {
 protected:
  proto::worker_proxy_actor spawn_http_proxy(uint64_t term) {
    auto p = sys.spawn(http_worker_proxy_impl, std::string("w1"),
                       std::string("http://127.0.0.1:9"), std::string("http://127.0.0.1:9"),
                       pool_, node_.raft, term, wall_clock{});
    keep(p);
    return p;
  }

  static proto::run_result report_of(const proto::instance& x, std::string worker) {
    proto::run_result r;
    r.instance_id = x.id;
    r.worker_id = std::move(worker);
    r.attempt = x.attempt;
    r.state = instance_state::success;
    r.output = "done";
    return r;
  }

  caf::expected<proto::applied> settle(const proto::worker_proxy_actor& p, proto::run_result r) {
    caf::expected<proto::applied> out = caf::make_error(caf::sec::request_timeout);
    auto h = self->request(p, caf::infinite, proto::report_atom::value, std::move(r),
                           proto::settle_atom::value);
    sched.run();
    h.receive([&](proto::applied& a) { out = std::move(a); },
              [&](caf::error& e) { out = std::move(e); });
    return out;
  }
};

TEST_F(external_report_test, a_settled_report_is_committed_by_the_proxy_and_answered) {
  auto x = dispatched_run();
  auto proxy = spawn_http_proxy(node_.term);

  auto got = settle(proxy, report_of(x, "w1"));

  ASSERT_TRUE(got) << sys.render(got.error());
  ASSERT_EQ(got->instances.size(), 1u);
  EXPECT_EQ(got->instances[0].id, x.id);
  EXPECT_EQ(instance_of(x.id).state, instance_state::success);
  EXPECT_EQ(instance_of(x.id).output, "done");
}

TEST_F(external_report_test, another_workers_report_is_refused_with_the_state_machines_error) {
  auto x = dispatched_run();  // assigned to w1
  auto proxy = spawn_http_proxy(node_.term);

  auto got = settle(proxy, report_of(x, "w2"));

  ASSERT_FALSE(got) << "a report from a worker the run is not assigned to was accepted";
  EXPECT_EQ(view(got.error()).code, errc::illegal_transition)
      << sys.render(got.error());
  EXPECT_EQ(instance_of(x.id).state, instance_state::dispatched);
}

TEST_F(external_report_test, a_proxy_of_another_term_settles_nothing) {
  auto x = dispatched_run();
  auto stale = spawn_http_proxy(node_.term + 1);

  auto got = settle(stale, report_of(x, "w1"));

  EXPECT_FALSE(got) << "a fenced report was answered as committed";
  EXPECT_EQ(instance_of(x.id).state, instance_state::dispatched) << "a fenced report was applied";
}

}  // namespace
}  // namespace aisched::worker_proxy
