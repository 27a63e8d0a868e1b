// Pause without side effects, and worker load that follows the runs, on a real
// default node (issue #43, items 4 and 7): the pending runs of a paused task
// stay pending (saying why) until it is resumed; slots a buffer_all task holds
// stay buffered through a pause and fire on resume; an attempt the node times
// out is cancelled on its external worker, whose slot is then free again.
// Each test starts its own node and polls with deadlines.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "support/http_receiver.hpp"
#include "support/node_process.hpp"
#include "support/serving_node.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

/// Every run of task `task`, from one listing.
json::array runs_of(uint16_t port, int64_t task) {
  auto r = http_call(port, "GET", "/api/v1/instances?limit=1000&task_id=" + std::to_string(task));
  EXPECT_EQ(r.status, 200) << r.body;
  auto v = parse(r);
  if (!v.is_object() || !v.as_object().contains("items")) return {};
  return v.as_object()["items"].as_array();
}

/// How many runs of `runs` are in state `state`.
size_t count_in(const json::array& runs, const std::string& state) {
  size_t n = 0;
  for (auto& v : runs) n += str(v.as_object(), "state") == state;
  return n;
}

json::object run(uint16_t port, const std::string& id) {
  auto r = http_call(port, "GET", "/api/v1/instances/" + id);
  return r.status == 200 ? parse(r).as_object() : json::object{};
}

// -- an external worker that never reports -----------------------------------------

/// Whether request `q` of the worker's receiver is to `path` and names run `run_id`
/// ("": any run).
bool is(const http_receiver::request& q, const std::string& path, const std::string& run_id) {
  return q.head.rfind("POST " + path + " ", 0) == 0 &&
         (run_id.empty() || q.body.find("\"" + run_id + "\"") != std::string::npos);
}

/// An external HTTP worker with `max_load` 1 that takes every run (202) and never
/// reports one; it stops a run when told to cancel it. Its heartbeats (every
/// 300 ms) carry its true load: the runs it was handed and not told to cancel.
class silent_worker {
 public:
  silent_worker(uint16_t port, std::string id) : port_(port), id_(std::move(id)) {
    auto r = http_call(port_, "POST", "/api/v1/workers",
                       json::serialize(json::object{{"id", id_},
                                                    {"callback_url", rx_.url("")},
                                                    {"labels", json::object{{"pool", "silent"}}},
                                                    {"max_load", 1}}));
    EXPECT_EQ(r.status, 201u) << r.body;
    if (r.status == 201) credential_ = str(parse(r).as_object(), "credential");
    beat_ = std::thread([this] {
      while (!stop_) {
        http_call(port_, "POST", "/api/v1/workers/" + id_ + "/heartbeat",
                  json::serialize(json::object{{"load", load()}}), 2s,
                  {{"X-Worker-Credential", credential_}});
        std::this_thread::sleep_for(300ms);
      }
    });
  }
  ~silent_worker() {
    stop_ = true;
    beat_.join();
  }
  silent_worker(const silent_worker&) = delete;
  silent_worker& operator=(const silent_worker&) = delete;

  bool registered() const { return !credential_.empty(); }
  bool received(const std::string& run_id) const { return seen("/internal/tasks/execute", run_id); }
  bool told_to_cancel(const std::string& run_id) const {
    return seen("/internal/tasks/cancel", run_id);
  }

  /// The runs handed over and not cancelled since.
  int64_t load() const {
    std::set<std::string> running;
    for (auto& q : rx_.requests()) {
      boost::system::error_code ec;
      auto v = json::parse(q.body, ec);
      auto id = !ec && v.is_object() ? str(v.as_object(), "instance_id") : "";
      if (is(q, "/internal/tasks/execute", "")) running.insert(id);
      if (is(q, "/internal/tasks/cancel", "")) running.erase(id);
    }
    return static_cast<int64_t>(running.size());
  }

 private:
  bool seen(const std::string& path, const std::string& run_id) const {
    for (auto& q : rx_.requests())
      if (is(q, path, run_id)) return true;
    return false;
  }

  uint16_t port_;
  std::string id_;
  http_receiver rx_{std::vector<int>{202}};
  std::string credential_;
  std::atomic<bool> stop_{false};
  std::thread beat_;
};

/// The load GET /api/v1/workers lists for worker `id` (-1 if it is not listed).
int64_t listed_load(uint16_t port, const std::string& id) {
  auto r = http_call(port, "GET", "/api/v1/workers");
  if (r.status != 200) return -1;
  auto v = parse(r);
  auto* items = v.is_object() ? v.as_object().if_contains("items") : nullptr;
  if (!items || !items->is_array()) return -1;
  for (auto& w : items->as_array())
    if (str(w.as_object(), "id") == id) return num(w.as_object(), "load");
  return -1;
}

/// Triggers task `task` now; the id of the run it created ("" on failure).
std::string trigger(uint16_t port, int64_t task) {
  auto r = http_call(port, "POST", task_path(task) + "/trigger");
  EXPECT_EQ(r.status, 201u) << r.body;
  if (r.status != 201) return "";
  auto v = parse(r);
  auto* items = v.is_object() ? v.as_object().if_contains("instances") : nullptr;
  if (!items || !items->is_array() || items->as_array().empty()) return "";
  return str(items->as_array().at(0).as_object(), "id");
}

}  // namespace

// -- item 4: pause --------------------------------------------------------------------

TEST(pause_load, pending_runs_of_a_paused_task_stay_pending_until_it_is_resumed) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();

  // Six runs of a task that runs one at a time: one runs, five wait.
  auto id = create_task(port, R"({"name":"one-at-a-time","command":"sleep 2",)"
                              R"("max_concurrency":1})");
  ASSERT_NE(id, 0);
  auto batch = http_call(port, "POST", task_path(id) + "/runs", payloads_body(6));
  ASSERT_EQ(batch.status, 202u) << batch.body;
  ASSERT_TRUE(eventually([&] { return count_in(runs_of(port, id), "running") == 1; }, 15s))
      << json::serialize(runs_of(port, id)) << tail(node.log());
  ASSERT_EQ(http_call(port, "POST", task_path(id) + "/pause").status, 200u);

  // The running one finishes; nothing else starts while the task is paused, and
  // the waiting runs say why.
  ASSERT_TRUE(eventually([&] { return count_in(runs_of(port, id), "success") == 1; }, 10s))
      << json::serialize(runs_of(port, id));
  bool said_why = eventually(
      [&] {
        auto runs = runs_of(port, id);
        if (count_in(runs, "pending") != 5) return false;
        for (auto& v : runs)
          if (str(v.as_object(), "state") == "pending" &&
              str(v.as_object(), "error") != "task paused: the run waits for its resume")
            return false;
        return true;
      },
      10s);
  EXPECT_TRUE(said_why) << json::serialize(runs_of(port, id));
  std::this_thread::sleep_for(3s);  // longer than a run: a second one would have started
  auto paused_runs = runs_of(port, id);
  EXPECT_EQ(count_in(paused_runs, "success"), 1u) << json::serialize(paused_runs);
  EXPECT_EQ(count_in(paused_runs, "pending"), 5u) << json::serialize(paused_runs);

  // Resumed, they run, one at a time.
  ASSERT_EQ(http_call(port, "POST", task_path(id) + "/resume").status, 200u);
  EXPECT_TRUE(eventually([&] { return count_in(runs_of(port, id), "success") == 6; }, 40s))
      << json::serialize(runs_of(port, id)) << tail(node.log());
}

TEST(pause_load, slots_buffered_by_buffer_all_stay_through_a_pause_and_fire_on_resume) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();

  // Each run takes 3 s and a slot comes every second: the slots after the first
  // wait in the buffer for it.
  auto id = create_task(port, R"({"name":"buffered","command":"sleep 3",)"
                              R"("schedule":"@every 1s","overlap":"buffer_all"})");
  ASSERT_NE(id, 0);
  int64_t first = -1;
  ASSERT_TRUE(eventually(
      [&] {
        auto runs = runs_of(port, id);
        if (runs.empty()) return false;
        auto& x = runs.at(0).as_object();
        first = time_ms(x.at("slot"));
        return str(x, "state") == "running";
      },
      15s))
      << tail(node.log());
  // Pause 2.4 s after the first slot: the slots first+1 s and first+2 s are buffered.
  std::this_thread::sleep_for(std::chrono::milliseconds(
      std::max<int64_t>(0, first + 2400 - wall_ms())));
  auto paused_at = wall_ms();
  ASSERT_EQ(http_call(port, "POST", task_path(id) + "/pause").status, 200u);

  // The first run ends while paused: no buffered slot fires, none is dropped.
  ASSERT_TRUE(eventually([&] { return count_in(runs_of(port, id), "success") == 1; }, 10s))
      << json::serialize(runs_of(port, id));
  std::this_thread::sleep_for(1500ms);
  auto while_paused = runs_of(port, id);
  EXPECT_EQ(while_paused.size(), 1u) << "a paused task fired: " << json::serialize(while_paused);

  // Resumed, every slot buffered before the pause fires, oldest first.
  ASSERT_EQ(http_call(port, "POST", task_path(id) + "/resume").status, 200u);
  std::set<int64_t> want;
  for (auto s = first + 1000; s <= paused_at - 300; s += 1000) want.insert(s);
  ASSERT_GE(want.size(), 2u);
  std::set<int64_t> fired;
  bool all = eventually(
      [&] {
        fired.clear();
        for (auto& v : runs_of(port, id)) fired.insert(time_ms(v.as_object().at("slot")));
        for (auto s : want)
          if (!fired.count(s)) return false;
        return true;
      },
      20s);
  std::string got;
  for (auto s : fired) got += std::to_string(s - first) + " ";
  EXPECT_TRUE(all) << "slots (ms after the first) that have a run: " << got
                   << "; buffered before the pause: " << want.size() << "\n"
                   << tail(node.log());
}

// -- item 7: worker load --------------------------------------------------------------

TEST(pause_load, a_timed_out_attempt_is_cancelled_on_its_worker_and_frees_its_slot) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  ASSERT_TRUE(await_ready(port));
  silent_worker worker(port, "silent-1");
  ASSERT_TRUE(worker.registered());

  // Only the silent worker matches; its one slot is taken by a run it never reports.
  auto id = create_task(port, R"({"name":"unreported","command":"true","timeout":"1s",)"
                              R"("labels":{"pool":"silent"}})");
  ASSERT_NE(id, 0);
  auto first = trigger(port, id);
  ASSERT_FALSE(first.empty());
  ASSERT_TRUE(eventually([&] { return worker.received(first); }, 15s)) << tail(node.log());
  EXPECT_TRUE(eventually([&] { return listed_load(port, "silent-1") == 1; }, 5s));

  // The node times it out at its deadline (timeout plus the grace for a late report).
  ASSERT_TRUE(eventually([&] { return str(run(port, first), "state") == "timed_out"; }, 60s))
      << json::serialize(run(port, first)) << tail(node.log());
  // It is cancelled on the worker, and the worker's slot is free again.
  EXPECT_TRUE(eventually([&] { return worker.told_to_cancel(first); }, 10s))
      << "the worker was not told to stop the timed-out run";
  EXPECT_TRUE(eventually([&] { return listed_load(port, "silent-1") == 0; }, 10s))
      << "load " << listed_load(port, "silent-1") << " after the run timed out";

  // A second run is placed on it.
  auto second = trigger(port, id);
  ASSERT_FALSE(second.empty());
  EXPECT_TRUE(eventually([&] { return worker.received(second); }, 15s))
      << json::serialize(run(port, second)) << tail(node.log());
}
