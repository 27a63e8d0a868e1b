// Tests for the native worker proxy on CAF's test coordinator (virtual time, no
// threads): a real raft group of one over RocksDB, the real worker actor (noop
// runs complete inside it, without a thread) and the proxy between them, as the
// router wires them. Checks that a report is committed and only then
// acknowledged to the worker, that a refused run fails at once with the
// worker's reason (a worker whose outbox failed), and that a proxy of another
// term commits nothing and acknowledges nothing.
#define CAF_GTEST_DSL_IMPL
#include "support/caf_gtest_dsl.hpp"
#include "support/node_fixture.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "actors/worker/worker_actor.hpp"
#include "actors/worker_proxy/worker_proxy_actor.hpp"
#include "common/run_pool.hpp"

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

  /// A noop task fired and dispatched to worker "w1": its instance.
  proto::instance dispatched_run() {
    proto::task t;
    t.name = "nothing";
    t.kind = proto::task_kind::noop;
    auto id = create_task(t);
    unix_ms slot = 1'796'022'000'000;
    EXPECT_TRUE(propose_fire(id, slot));
    auto iid = proto::make_instance_id(id, slot, 0);
    EXPECT_TRUE(propose_dispatch(iid, slot + 1));
    return instance_of(iid);
  }

  proto::worker_actor spawn_worker(std::string outbox_dir = "") {
    worker::worker_config cfg;
    cfg.id = "w1";
    cfg.outbox_dir = std::move(outbox_dir);
    auto w = sys.spawn(worker::worker_actor_impl, cfg, pool_);
    keep(w);
    return w;
  }

  proto::worker_proxy_actor spawn_proxy(const proto::worker_actor& w, uint64_t term) {
    auto p = sys.spawn(worker_proxy_impl, std::string("w1"), w, node_.raft, term);
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
    auto h = self->request(w, caf::infinite, proto::held_atom::value);
    sched.run();
    h.receive([&](std::vector<proto::held_run>& runs, std::string&) { out = std::move(runs); },
              [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
    return out;
  }

  std::shared_ptr<worker::run_pool> pool_;
  fs::path box_file_;
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

TEST_F(worker_proxy_actor_test, a_run_the_worker_refuses_fails_at_once_with_its_reason) {
  // A worker whose outbox will not open (a file where its directory goes).
  box_file_ = fs::temp_directory_path() / ("aisched-proxy-box-" + std::to_string(::getpid()));
  std::ofstream(box_file_) << "not a directory\n";
  auto x = dispatched_run();
  auto w = spawn_worker(box_file_.string());
  auto proxy = spawn_proxy(w, node_.term);

  caf::anon_send(proxy, proto::execute_atom::value, execute_of(x));
  sched.run();

  auto now = instance_of(x.id);
  EXPECT_EQ(now.state, instance_state::failed)
      << "a worker that cannot keep its reports took the run";
  EXPECT_NE(now.error.find("outbox"), std::string::npos) << now.error;
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

}  // namespace
}  // namespace aisched::worker_proxy
