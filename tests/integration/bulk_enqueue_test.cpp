// Bulk enqueue (POST /api/v1/tasks/{id}/runs) on real `aisched` nodes started
// as `make run` starts them: every payload runs exactly once with its own
// payload; bad input is a clear 400 (or 404) that enqueues nothing; and a batch
// acknowledged by a leader that is then SIGKILLed still runs every payload
// exactly once under the next leader. Free loopback ports, temporary dirs,
// polling with deadlines.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/node_process.hpp"
#include "support/raft_group_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

std::string runs_path(int64_t id) { return "/api/v1/tasks/" + std::to_string(id) + "/runs"; }

/// Every instance of task `id` (pages of 200), or nullopt if a page failed.
std::optional<std::vector<json::object>> instances_of(uint16_t port, int64_t id) {
  std::vector<json::object> out;
  std::string cursor;
  for (int page = 0; page < 1000; ++page) {
    auto r = http_call(port, "GET", "/api/v1/instances?task_id=" + std::to_string(id) +
                                        "&limit=200" + (cursor.empty() ? "" : "&cursor=" + cursor));
    if (r.status != 200) return std::nullopt;
    auto v = parse(r).as_object();
    for (auto& x : v.at("items").as_array()) out.push_back(x.as_object());
    cursor = str(v, "next_cursor");
    if (cursor.empty()) return out;
  }
  return std::nullopt;
}

/// Polls until task `id` has `n` instances, all ended; returns the last read.
std::vector<json::object> await_all_ended(uint16_t port, int64_t id, size_t n,
                                          std::chrono::milliseconds timeout) {
  std::vector<json::object> last;
  eventually(
      [&] {
        auto xs = instances_of(port, id);
        if (!xs) return false;
        last = std::move(*xs);
        if (last.size() < n) return false;
        for (auto& x : last) {
          auto s = str(x, "state");
          if (s != "success" && s != "failed" && s != "timed_out" && s != "cancelled")
            return false;
        }
        return true;
      },
      timeout);
  return last;
}

/// Checks that `xs` are `n` successful runs, one per payload: the output of
/// run k is "n=k", and no payload ran twice or not at all.
void expect_each_payload_once(const std::vector<json::object>& xs, size_t n) {
  EXPECT_EQ(xs.size(), n);
  std::map<std::string, int> seen;
  std::set<std::string> ids;
  for (auto& x : xs) {
    EXPECT_TRUE(ids.insert(str(x, "id")).second) << "instance listed twice: " << str(x, "id");
    EXPECT_EQ(str(x, "state"), "success") << json::serialize(x);
    auto out = str(x, "output");
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    seen[out] += 1;
    EXPECT_EQ(out, "n=" + std::to_string(num(x, "shard"))) << "run k must see payload k";
  }
  for (size_t k = 0; k < n; ++k)
    EXPECT_EQ(seen["n=" + std::to_string(k)], 1) << "payload " << k << " ran that many times";
}

const char* echo_task = R"({"name":"echo-n","command":"echo n={{event.payload.n}}"})";
// A run in flight on a member that dies is timed out at its deadline (dispatch
// + timeout + 30 s grace) and retried under the next leader.
const char* retried_echo_task = R"({"name":"echo-n","command":"echo n={{event.payload.n}}",
    "timeout":"2s","retry":{"policy":"fixed","interval":"200ms","max_attempts":3}})";

}  // namespace

TEST(bulk_enqueue, every_payload_runs_once_with_its_own_payload) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto id = create_task(port, echo_task);
  ASSERT_NE(id, 0);

  constexpr size_t n = 300;
  auto r = http_call(port, "POST", runs_path(id), payloads_body(n));
  ASSERT_EQ(r.status, 202u) << r.body;
  auto v = parse(r);
  auto& answered = v.as_object().at("instance_ids").as_array();
  ASSERT_EQ(answered.size(), n) << r.body;
  std::set<std::string> distinct;
  for (auto& x : answered) distinct.insert(std::string(x.as_string()));
  EXPECT_EQ(distinct.size(), n) << "run ids repeat";

  auto xs = await_all_ended(port, id, n, 60s);
  expect_each_payload_once(xs, n);

  // A second batch is new runs, not a repeat of the first.
  auto again = http_call(port, "POST", runs_path(id), payloads_body(2));
  ASSERT_EQ(again.status, 202u) << again.body;
  EXPECT_EQ(await_all_ended(port, id, n + 2, 30s).size(), n + 2);
}

TEST(bulk_enqueue, bad_input_is_a_clear_error_and_enqueues_nothing) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto id = create_task(port, echo_task);
  auto sharded = create_task(port, R"({"name":"s","kind":"noop","shards":3})");
  ASSERT_NE(id, 0);
  ASSERT_NE(sharded, 0);

  struct bad_case {
    int64_t task;
    std::string body;
    unsigned status;
    std::string field;
  };
  std::vector<bad_case> cases{
      {id, "not json", 400, ""},
      {id, "{}", 400, "payloads"},
      {id, R"({"payloads":{}})", 400, "payloads"},
      {id, R"({"payloads":[]})", 400, "payloads"},
      {id, payloads_body(1001), 400, "payloads"},
      {id, R"({"payloads":[{"n":0},7]})", 400, "payloads[1]"},
      {id, R"({"payloads":[{}],"priority":1})", 400, "priority"},
      {sharded, payloads_body(2), 400, "id"},
      {id + 1000, payloads_body(2), 404, ""},
  };
  for (auto& c : cases) {
    auto r = http_call(port, "POST", runs_path(c.task), c.body);
    EXPECT_EQ(r.status, c.status) << c.body.substr(0, 80) << ": " << r.body;
    auto v = parse(r);
    ASSERT_TRUE(v.is_object()) << r.body;
    auto* e = v.as_object().if_contains("error");
    ASSERT_TRUE(e && e->is_object()) << r.body;
    EXPECT_FALSE(str(e->as_object(), "message").empty()) << r.body;
    if (!c.field.empty()) {
      EXPECT_EQ(str(e->as_object(), "field"), c.field) << r.body;
    }
  }
  for (auto t : {id, sharded}) {
    auto xs = instances_of(port, t);
    ASSERT_TRUE(xs);
    EXPECT_TRUE(xs->empty()) << "a refused batch enqueued " << xs->size() << " runs";
  }
  auto max = http_call(port, "POST", runs_path(id), payloads_body(1000));
  EXPECT_EQ(max.status, 202u) << "the documented limit itself is accepted: " << max.body;
}

TEST(bulk_enqueue, a_batch_acknowledged_before_the_leader_dies_ends_once_per_payload) {
  temp_dir dir;
  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  auto id = create_task(g.port(leader), retried_echo_task);
  ASSERT_NE(id, 0) << g.dump();

  constexpr size_t n = 200;
  auto r = http_call(g.port(leader), "POST", runs_path(id), payloads_body(n));
  ASSERT_EQ(r.status, 202u) << r.body;
  ASSERT_EQ(g.kill(leader), SIGKILL);  // some runs ran, some were in flight, some pending

  auto next = g.await_leader(g.running_members(), 15s);
  ASSERT_NE(next, none) << "no new leader\n" << g.dump();
  auto xs = await_all_ended(g.port(next), id, n, 120s);
  expect_each_payload_once(xs, n);
  if (HasFailure()) ADD_FAILURE() << g.dump();
}
