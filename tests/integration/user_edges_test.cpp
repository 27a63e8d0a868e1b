// What a new user stumbled on (issue 43), each on a real default node: a run
// cancelled while it prints keeps its output (instance, attempts) and
// `aischedctl run logs --follow` ends with its final state; the example external
// worker (tools/example-worker/worker.py) keeps a timed-out run's output, kills a
// cancelled run's processes, and leaves none behind when it is killed itself;
// an invalid task draft always says why. One node serves the suite; processes of
// runs are found by a unique argument (test_helpers.hpp) and always reaped.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

class user_edges : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<temp_dir>();
    node_ = std::make_unique<node_process>(dir_->path() + "/data");
  }
  static void TearDownTestSuite() {
    node_.reset();
    dir_.reset();
  }
  void SetUp() override { ASSERT_TRUE(node_->running()) << "the node did not start"; }

  static uint16_t port() { return node_->http_port(); }

  /// Triggers task `id` once; returns the run's id ("" after a test failure).
  static std::string trigger(int64_t id) {
    auto r = http_call(port(), "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger");
    if (r.status != 200 && r.status != 201 && r.status != 202) {
      ADD_FAILURE() << "trigger failed (" << r.status << "): " << r.body;
      return "";
    }
    return str(parse(r).at("instances").as_array().at(0).as_object(), "id");
  }

  static json::object run(const std::string& id) {
    auto r = http_call(port(), "GET", "/api/v1/instances/" + id);
    return r.status == 200 ? parse(r).as_object() : json::object{};
  }

  /// The run's newest attempt record (empty if it has none).
  static json::object last_attempt(const std::string& id) {
    auto r = http_call(port(), "GET", "/api/v1/instances/" + id + "/attempts");
    if (r.status != 200) return {};
    auto v = parse(r);
    auto& items = v.at("attempts").as_array();
    return items.empty() ? json::object{} : items.back().as_object();
  }

  static bool reaches(const std::string& id, const std::string& state,
                      std::chrono::milliseconds timeout = 15s) {
    return eventually([&] { return str(run(id), "state") == state; }, timeout);
  }

  /// Starts the example worker as `id`, taking runs labelled zone=`id`.
  static std::unique_ptr<child_process> start_example_worker(const std::string& id) {
    auto p = std::make_unique<child_process>(
        std::vector<std::string>{"/usr/bin/python3", AISCHED_EXAMPLE_WORKER, "--server",
                                 "http://127.0.0.1:" + std::to_string(port()), "--id", id,
                                 "--label", "zone=" + id, "--heartbeat", "0.5"},
        dir_->path() + "/" + id + ".log");
    if (p->await_log(R"(listening on (\d+))").empty())
      ADD_FAILURE() << "example worker " << id << " did not start; log:\n" << p->log();
    bool online = eventually(
        [&] {
          auto r = http_call(port(), "GET", "/api/v1/workers");
          if (r.status != 200) return false;
          auto v = parse(r);
          for (auto& w : v.at("items").as_array())
            if (str(w.as_object(), "id") == id) return str(w.as_object(), "status") == "online";
          return false;
        },
        15s);
    if (!online) ADD_FAILURE() << "example worker " << id << " never came online";
    return p;
  }

  static inline std::unique_ptr<temp_dir> dir_;
  static inline std::unique_ptr<node_process> node_;
};

TEST_F(user_edges, cancelled_run_keeps_its_output_and_follow_ends_with_its_state) {
  auto id = create_task(port(), R"({"name":"count-then-cancel",
      "command":"for i in $(seq 10); do echo line $i; sleep 1; done"})");
  ASSERT_GT(id, 0);
  auto run_id = trigger(id);
  ASSERT_FALSE(run_id.empty());
  command_result followed;
  std::thread follow([&] {
    followed = run_command({AISCHEDCTL_BINARY, "--server",
                            "http://127.0.0.1:" + std::to_string(port()), "run", "logs", run_id,
                            "--follow"},
                           30s);
  });
  bool running = reaches(run_id, "running");
  if (running) std::this_thread::sleep_for(4s);  // lines 1 to 4
  auto cancel = http_call(port(), "POST", "/api/v1/instances/" + run_id + "/cancel");
  follow.join();
  ASSERT_TRUE(running) << json::serialize(run(run_id));
  ASSERT_EQ(cancel.status, 200u) << cancel.body;

  // What it printed before the cancel is its output, in the run and its attempt.
  bool kept = eventually(
      [&] { return str(run(run_id), "output").find("line 3\n") != std::string::npos; }, 10s);
  auto x = run(run_id);
  EXPECT_TRUE(kept) << json::serialize(x);
  EXPECT_EQ(str(x, "state"), "cancelled");
  EXPECT_EQ(str(x, "output").find("line 10"), std::string::npos) << str(x, "output");
  EXPECT_EQ(num(x, "exit_code"), 128 + SIGKILL);
  auto a = last_attempt(run_id);
  EXPECT_EQ(str(a, "state"), "cancelled") << json::serialize(a);
  EXPECT_NE(str(a, "output").find("line 1\nline 2\nline 3\n"), std::string::npos)
      << json::serialize(a);
  EXPECT_EQ(num(a, "exit_code"), 128 + SIGKILL);

  // The follower saw the lines, then how the run ended, and says it did not succeed.
  EXPECT_NE(followed.out.find("line 1\n"), std::string::npos) << followed.out;
  EXPECT_NE(followed.err.find("ended: cancelled, exit code 137"), std::string::npos)
      << followed.err;
  EXPECT_EQ(followed.exit_code, 8) << followed.err;
}

TEST_F(user_edges, example_worker_keeps_a_timed_out_runs_output) {
  auto worker = start_example_worker("py-timeout");
  auto id = create_task(port(), R"({"name":"py-timeout","timeout":"2s",
      "labels":{"zone":"py-timeout"},"command":"echo before-the-timeout; sleep 30"})");
  ASSERT_GT(id, 0);
  auto run_id = trigger(id);
  ASSERT_FALSE(run_id.empty());
  ASSERT_TRUE(reaches(run_id, "timed_out", 20s)) << json::serialize(run(run_id));
  auto x = run(run_id);
  EXPECT_NE(str(x, "output").find("before-the-timeout"), std::string::npos) << json::serialize(x);
}

TEST_F(user_edges, example_worker_kills_a_cancelled_runs_processes_and_keeps_its_output) {
  auto worker = start_example_worker("py-cancel");
  auto arg = unique_sleep_arg();
  auto id = create_task(port(), R"({"name":"py-cancel","labels":{"zone":"py-cancel"},
      "command":"echo started; sleep )" + arg + R"("})");
  ASSERT_GT(id, 0);
  auto run_id = trigger(id);
  ASSERT_FALSE(run_id.empty());
  ASSERT_TRUE(eventually([&] { return !pids_with_arg(arg).empty(); }, 15s))
      << json::serialize(run(run_id)) << "\n" << worker->log();
  auto cancel = http_call(port(), "POST", "/api/v1/instances/" + run_id + "/cancel");
  ASSERT_EQ(cancel.status, 200u) << cancel.body;
  EXPECT_TRUE(all_gone(arg)) << "the cancelled run's sleep still runs";
  bool kept = eventually(
      [&] { return str(run(run_id), "output").find("started") != std::string::npos; }, 10s);
  EXPECT_TRUE(kept) << json::serialize(run(run_id));
  EXPECT_EQ(str(run(run_id), "state"), "cancelled");
}

TEST_F(user_edges, example_worker_killed_leaves_no_process_of_its_runs) {
  auto worker = start_example_worker("py-kill");
  auto arg = unique_sleep_arg();
  auto id = create_task(port(), R"({"name":"py-kill","labels":{"zone":"py-kill"},
      "command":"echo started; sleep )" + arg + R"(; echo never"})");
  ASSERT_GT(id, 0);
  auto run_id = trigger(id);
  ASSERT_FALSE(run_id.empty());
  ASSERT_TRUE(eventually([&] { return !pids_with_arg(arg).empty(); }, 15s))
      << json::serialize(run(run_id)) << "\n" << worker->log();
  worker->stop(SIGKILL);
  EXPECT_TRUE(all_gone(arg)) << "the run's sleep outlived its worker (kill -9)";
  http_call(port(), "POST", "/api/v1/instances/" + run_id + "/cancel");
}

TEST_F(user_edges, an_invalid_task_draft_says_why) {
  auto r = http_call(port(), "POST", "/api/v1/ai/task-draft", R"({"text":"make it faster"})");
  ASSERT_EQ(r.status, 200u) << r.body;
  auto d = parse(r).as_object();
  EXPECT_FALSE(d.at("valid").as_bool());
  auto* why = d.if_contains("validation_error");
  ASSERT_TRUE(why && why->is_object()) << r.body;
  EXPECT_FALSE(str(why->as_object(), "message").empty()) << r.body;

  auto kept = http_call(port(), "POST", "/api/v1/ai/task-draft",
                        R"({"text":"every 5 minutes run ./scripts/sync.sh --full"})");
  ASSERT_EQ(kept.status, 200u) << kept.body;
  EXPECT_EQ(str(parse(kept).at("document").as_object(), "command"), "./scripts/sync.sh --full")
      << kept.body;
}

}  // namespace
