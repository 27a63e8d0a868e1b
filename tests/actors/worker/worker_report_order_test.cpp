// The worker actor on CAF's test coordinator, one message at a time: a
// finished run's final report is in its outbox file (written to the kernel)
// as soon as the message that finished the run has been handled, before any
// other message (a flush, a send) runs, so a kill of the process at any later
// point cannot lose it (issue 41 item 4). Checks a burst of no-ops (one
// execute message) and a run of the pool (its done message).
#define CAF_GTEST_DSL_IMPL
#include "support/caf_gtest_dsl.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "actors/worker/worker_actor.hpp"
#include "common/run_pool.hpp"
#include "proto/registry.hpp"
#include "support/test_dir.hpp"

namespace aisched::worker {
namespace {

namespace fs = std::filesystem;

struct order_test_config : caf::actor_system_config {
  order_test_config() { proto::register_types(*this); }
};

/// Stands in for the worker proxy: takes the worker's reports and drops them.
proto::worker_proxy_actor::behavior_type silent_proxy() {
  return {
      [](proto::report_atom, const proto::run_result&) {},
      [](proto::report_atom, const proto::run_result&,
         proto::settle_atom) -> caf::result<proto::applied> { return proto::applied{}; },
      [](proto::execute_atom, const proto::execute_request&) {},
      [](proto::execute_atom, proto::flush_atom) {},
      [](proto::cancel_run_atom, const std::string&) {},
      [](proto::wake_atom, const std::string&, unix_ms) {},
      [](proto::flush_atom) {},
  };
}

class worker_report_order_test : public test_coordinator_fixture<order_test_config>,
                                 public ::testing::Test {
 protected:
  worker_report_order_test() {
    root_ = test::make_test_dir("report-order-");
    // Its one thread busy until the pool stops: a run of the pool is taken
    // and never starts; its done message comes from the test.
    pool_ = std::make_shared<run_pool>(1);
    pool_->submit([](const std::atomic<bool>& stopping) {
      while (!stopping.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    worker_config wcfg;
    wcfg.id = "w1";
    wcfg.outbox_dir = (root_ / "outbox").string();
    exec_options exec;
    exec.scratch_root = (root_ / "scratch").string();
    exec.supervisor = AISCHED_SUPERVISOR_PATH;
    worker_ = sys.spawn(worker_actor_impl, wcfg,
                        std::make_shared<process_executor>(pool_, std::move(exec)));
    proxy_ = sys.spawn(silent_proxy);
    sched.run();  // messages only: the worker's 1 s tick re-arms for ever
  }

  ~worker_report_order_test() override {
    pool_->stop();
    caf::anon_send_exit(worker_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(proxy_, caf::exit_reason::user_shutdown);
    sched.run();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  /// What the outbox's segment files hold now, as any reader (a restarted
  /// worker) would read them.
  std::string on_disk() const {
    std::string out;
    for (auto& e : fs::directory_iterator(root_ / "outbox"))
      if (e.path().extension() == ".outbox") {
        std::ifstream in(e.path(), std::ios::binary);
        out.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
    return out;
  }

  static proto::execute_request request(std::string instance_id, proto::task_kind kind) {
    proto::execute_request req;
    req.instance_id = std::move(instance_id);
    req.task_id = 7;
    req.kind = kind;
    req.command = "true";
    req.attempt = 1;
    req.timeout = 60'000;
    return req;
  }

  fs::path root_;
  std::shared_ptr<run_pool> pool_;
  proto::worker_actor worker_;
  proto::worker_proxy_actor proxy_;
};

TEST_F(worker_report_order_test, a_burst_of_no_ops_is_in_the_outbox_file_once_its_message_ran) {
  ASSERT_FALSE(root_.empty());
  std::vector<proto::execute_request> burst;
  for (int i = 0; i < 50; ++i)
    burst.push_back(request("7-" + std::to_string(9000 + i) + "-0", proto::task_kind::noop));
  caf::anon_send(worker_, proto::execute_atom::value, burst, proxy_);
  // The burst's message alone: no flush behind it, no report handled yet.
  ASSERT_TRUE(sched.try_run_once());
  auto disk = on_disk();
  for (auto& req : burst)
    EXPECT_NE(disk.find(req.instance_id + "#1"), std::string::npos)
        << req.instance_id << " finished (a no-op ends as it starts) but its report is not in "
        << "the outbox file: a kill now loses it, and the leader fails the run worker_lost";
  sched.run();
}

TEST_F(worker_report_order_test, a_pool_run_is_in_the_outbox_file_once_its_done_message_ran) {
  ASSERT_FALSE(root_.empty());
  auto req = request("7-9100-0", proto::task_kind::shell);
  caf::anon_send(worker_, proto::execute_atom::value, req, proxy_);
  sched.run();
  auto key = req.instance_id + "#1";
  auto records_of = [&](const std::string& disk) {
    size_t n = 0;
    for (auto at = disk.find(key); at != std::string::npos; at = disk.find(key, at + 1)) ++n;
    return n;
  };
  auto before = on_disk();
  EXPECT_EQ(records_of(before), 1u) << "before a run can start, the outbox holds one report";
  EXPECT_NE(before.find("may have been running"), std::string::npos)
      << "the report a restart sends in the run's stead says it may have run";
  proto::run_result r;
  r.instance_id = req.instance_id;
  r.state = proto::instance_state::success;
  r.started_at = 1'000;
  r.finished_at = 1'005;
  caf::anon_send(worker_, proto::done_atom::value, r, uint32_t{1});
  ASSERT_TRUE(sched.try_run_once());  // the done message alone
  EXPECT_EQ(records_of(on_disk()), 2u)
      << "the run finished but its report waits in the worker's memory: a kill now loses it";
  sched.run();
}

}  // namespace
}  // namespace aisched::worker
