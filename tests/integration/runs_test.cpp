// Runs end to end on a real single `aisched` node (all roles, built-in worker):
// fixed-rate shards, retries and their policies, timeouts, cancellation, a run
// in flight across SIGKILL, label routing, and pause/resume. Each test starts its
// own node on free loopback ports with a temporary data dir and waits by polling.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <boost/json.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

using instance_fn = std::function<bool(const json::object&)>;

/// Triggers task `id` now; returns the ids of the instances it created.
std::vector<std::string> trigger(uint16_t port, int64_t id) {
  auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger");
  std::vector<std::string> out;
  if (r.status != 201) {
    ADD_FAILURE() << "trigger of task " << id << " failed (" << r.status << "): " << r.body;
    return out;
  }
  auto v = parse(r);  // kept alive: the loop below walks into it
  for (auto& x : v.at("instances").as_array()) out.push_back(str(x.as_object(), "id"));
  if (out.empty()) ADD_FAILURE() << "trigger created no instance: " << r.body;
  return out;
}

/// One instance, or an empty object (after recording a failure) if it cannot be read.
json::object get_instance(uint16_t port, const std::string& id) {
  auto r = http_call(port, "GET", "/api/v1/instances/" + id);
  if (r.status != 200) {
    ADD_FAILURE() << "GET instance " << id << " failed (" << r.status << "): " << r.body;
    return {};
  }
  return parse(r).as_object();
}

/// All instances of task `id`, paging through the list `limit` at a time.
std::vector<json::object> instances_of(uint16_t port, int64_t id, int limit = 5) {
  std::vector<json::object> out;
  std::string cursor;
  for (int page = 0; page < 10'000; ++page) {
    auto target = "/api/v1/instances?task_id=" + std::to_string(id) +
                  "&limit=" + std::to_string(limit) + (cursor.empty() ? "" : "&cursor=" + cursor);
    auto r = http_call(port, "GET", target);
    if (r.status != 200) {
      ADD_FAILURE() << "GET " << target << " failed (" << r.status << "): " << r.body;
      return out;
    }
    auto v = parse(r).as_object();
    auto& items = v.at("items").as_array();
    if (items.size() > size_t(limit)) ADD_FAILURE() << "page larger than limit: " << r.body;
    for (auto& x : items) out.push_back(x.as_object());
    cursor = str(v, "next_cursor");
    if (cursor.empty()) return out;
  }
  ADD_FAILURE() << "instance list of task " << id << " never ended";
  return out;
}

bool terminal(const std::string& state) {
  return state == "success" || state == "failed" || state == "timed_out" || state == "cancelled";
}

/// Polls instance `id` until `pred` holds or `timeout` passes; returns the last read.
json::object await_instance(uint16_t port, const std::string& id, const instance_fn& pred,
                            std::chrono::milliseconds timeout) {
  json::object last;
  eventually(
      [&] {
        auto r = http_call(port, "GET", "/api/v1/instances/" + id);
        if (r.status != 200) return false;
        last = parse(r).as_object();
        return pred(last);
      },
      timeout);
  return last;
}

json::object await_terminal(uint16_t port, const std::string& id,
                            std::chrono::milliseconds timeout = 10s) {
  return await_instance(
      port, id, [](const json::object& x) { return terminal(str(x, "state")); }, timeout);
}

json::object await_state(uint16_t port, const std::string& id, const std::string& state,
                         std::chrono::milliseconds timeout = 10s) {
  return await_instance(
      port, id, [&](const json::object& x) { return str(x, "state") == state; }, timeout);
}

/// Whether `node` runs and serves its API: the node binds (and logs) its HTTP port
/// before the actors behind it are wired, and answers 503 until they are.
bool serving(const node_process& node) {
  return node.running() &&
         eventually([&] { return http_call(node.http_port(), "GET", "/healthz").status == 200; });
}

}  // namespace

TEST(runs, every_second_shell_task_runs_each_slot_once_with_output) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto id = create_task(port, R"({"name":"tick",
      "command":"echo run $SCHEDULE_INSTANCE_ID shard $SHARD_NO/$SHARD_TOTAL attempt $ATTEMPT",
      "schedule":"@every 1s","shards":2})");
  ASSERT_NE(id, 0);

  std::vector<json::object> all;
  auto successes = [&] {
    size_t n = 0;
    for (auto& x : all) n += str(x, "state") == "success";
    return n;
  };
  bool enough = eventually(
      [&] {
        all = instances_of(port, id);
        return successes() >= 8;
      },
      15s);
  ASSERT_TRUE(enough) << successes() << " successful instances of " << all.size() << "\n"
                      << tail(node.log());

  std::set<std::string> ids;
  std::map<int64_t, std::set<int64_t>> shards_by_slot;
  for (auto& x : all) {
    auto xid = str(x, "id");
    EXPECT_TRUE(ids.insert(xid).second) << "instance listed twice: " << xid;
    auto slot = time_ms(x.at("slot"));
    auto shard = num(x, "shard");
    ASSERT_GT(slot, 0) << json::serialize(x);
    EXPECT_EQ(slot % 1000, 0) << "slot not on a whole second: " << json::serialize(x);
    EXPECT_EQ(num(x, "task_id"), id);
    EXPECT_EQ(num(x, "shards"), 2);
    EXPECT_EQ(xid, std::to_string(id) + "-" + std::to_string(slot) + "-" + std::to_string(shard));
    EXPECT_TRUE(shards_by_slot[slot].insert(shard).second) << "slot/shard twice: " << xid;
    auto state = str(x, "state");
    // A fresh echo never fails; the newest slots may still be on their way.
    EXPECT_TRUE(state == "success" || !terminal(state)) << json::serialize(x);
    if (state != "success") continue;
    auto line = "run " + xid + " shard " + std::to_string(shard) + "/2 attempt 1";
    EXPECT_NE(str(x, "output").find(line), std::string::npos)
        << "output lacks '" << line << "': " << json::serialize(x);
    EXPECT_EQ(num(x, "attempt"), 1);
    EXPECT_EQ(num(x, "exit_code"), 0);
    EXPECT_FALSE(str(x, "worker_id").empty()) << json::serialize(x);
    EXPECT_EQ(str(x, "idempotency_key"), xid);
    EXPECT_FALSE(str(x, "trace_id").empty());
    auto started = time_ms(x.at("started_at")), finished = time_ms(x.at("finished_at"));
    EXPECT_GT(started, 0) << json::serialize(x);
    EXPECT_GE(finished, started) << json::serialize(x);
    EXPECT_GE(started, slot) << "ran before its slot: " << json::serialize(x);
  }
  // Every slot has both shards, and no slot between the first and the last is
  // missing or doubled.
  ASSERT_GE(shards_by_slot.size(), 4u);
  int64_t prev = 0;
  for (auto& [slot, shards] : shards_by_slot) {
    EXPECT_EQ(shards, (std::set<int64_t>{0, 1})) << "slot " << slot;
    if (prev != 0) {
      EXPECT_EQ(slot - prev, 1000) << "gap or double between " << prev << " and " << slot;
    }
    prev = slot;
  }
}

TEST(runs, failing_task_retries_on_its_backoff_then_fails) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto flaky = create_task(port, R"({"name":"flaky","command":"echo attempt $ATTEMPT; exit 3",
      "retry":{"policy":"fixed","interval":"300ms","max_attempts":3}})");
  auto second = create_task(port, R"({"name":"second-time-lucky",
      "command":"echo attempt $ATTEMPT; test $ATTEMPT -ge 2",
      "retry":{"policy":"fixed","interval":"300ms","max_attempts":3}})");
  ASSERT_NE(flaky, 0);
  ASSERT_NE(second, 0);
  auto flaky_ids = trigger(port, flaky);
  auto second_ids = trigger(port, second);
  ASSERT_EQ(flaky_ids.size(), 1u);
  ASSERT_EQ(second_ids.size(), 1u);

  // While it waits between attempts, the next one is due exactly one interval
  // after the failed one finished (checked whenever a poll sees it waiting).
  int waits_seen = 0;
  auto x = await_instance(
      port, flaky_ids[0],
      [&](const json::object& i) {
        if (str(i, "state") == "retry_waiting") {
          ++waits_seen;
          EXPECT_EQ(time_ms(i.at("next_attempt_at")) - time_ms(i.at("finished_at")), 300)
              << json::serialize(i);
        }
        return terminal(str(i, "state"));
      },
      15s);
  EXPECT_EQ(str(x, "state"), "failed") << json::serialize(x) << "\n" << tail(node.log());
  EXPECT_EQ(num(x, "attempt"), 3) << json::serialize(x);
  EXPECT_EQ(num(x, "exit_code"), 3) << json::serialize(x);
  EXPECT_NE(str(x, "output").find("attempt 3"), std::string::npos) << json::serialize(x);
  EXPECT_EQ(str(x, "output").find("attempt 2"), std::string::npos)
      << "output of an earlier attempt kept: " << json::serialize(x);
  // Two waits of 300 ms lie between the fire and the end of the third attempt.
  EXPECT_GE(time_ms(x.at("finished_at")) - time_ms(x.at("created_at")), 600) << json::serialize(x);
  RecordProperty("retry_waiting_polls_seen", waits_seen);

  auto y = await_terminal(port, second_ids[0], 15s);
  EXPECT_EQ(str(y, "state"), "success") << json::serialize(y);
  EXPECT_EQ(num(y, "attempt"), 2) << json::serialize(y);
  EXPECT_EQ(num(y, "exit_code"), 0) << json::serialize(y);
  EXPECT_NE(str(y, "output").find("attempt 2"), std::string::npos) << json::serialize(y);
  EXPECT_GE(time_ms(y.at("finished_at")) - time_ms(y.at("created_at")), 300) << json::serialize(y);
  // A retry reuses the instance: one per triggered slot.
  EXPECT_EQ(instances_of(port, flaky).size(), 1u);
  EXPECT_EQ(instances_of(port, second).size(), 1u);
}

TEST(runs, on_error_codes_retries_only_listed_codes) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  const std::string retry =
      R"("retry":{"policy":"on_error_codes","error_codes":[75,76],"interval":"100ms",)";
  // Listed code first (retried), then an unlisted one (final).
  auto listed_then_not = create_task(
      port, R"({"name":"a","command":"if [ $ATTEMPT -eq 1 ]; then exit 75; fi; exit 3",)" + retry +
                R"("max_attempts":5}})");
  // Unlisted from the start: no retry.
  auto unlisted =
      create_task(port, R"({"name":"b","command":"exit 4",)" + retry + R"("max_attempts":5}})");
  // Always listed: retried until the attempts run out.
  auto always_listed =
      create_task(port, R"({"name":"c","command":"exit 76",)" + retry + R"("max_attempts":3}})");
  ASSERT_NE(listed_then_not, 0);
  ASSERT_NE(unlisted, 0);
  ASSERT_NE(always_listed, 0);
  auto a = trigger(port, listed_then_not);
  auto b = trigger(port, unlisted);
  auto c = trigger(port, always_listed);
  ASSERT_EQ(a.size() + b.size() + c.size(), 3u);

  auto xa = await_terminal(port, a[0]);
  EXPECT_EQ(str(xa, "state"), "failed") << json::serialize(xa);
  EXPECT_EQ(num(xa, "attempt"), 2) << json::serialize(xa);
  EXPECT_EQ(num(xa, "exit_code"), 3) << json::serialize(xa);

  auto xb = await_terminal(port, b[0]);
  EXPECT_EQ(str(xb, "state"), "failed") << json::serialize(xb);
  EXPECT_EQ(num(xb, "attempt"), 1) << json::serialize(xb);
  EXPECT_EQ(num(xb, "exit_code"), 4) << json::serialize(xb);

  auto xc = await_terminal(port, c[0]);
  EXPECT_EQ(str(xc, "state"), "failed") << json::serialize(xc);
  EXPECT_EQ(num(xc, "attempt"), 3) << json::serialize(xc);
  EXPECT_EQ(num(xc, "exit_code"), 76) << json::serialize(xc);
}

TEST(runs, timeout_kills_the_run_and_counts_as_an_attempt) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto sleep_arg = unique_sleep_arg(30);
  auto once = create_task(port, R"({"name":"slow","command":"exec sleep )" + sleep_arg +
                                    R"(","timeout":"500ms",
      "retry":{"policy":"fixed","max_attempts":1}})");
  auto twice = create_task(port, R"({"name":"slow-twice","command":"exec sleep 30",
      "timeout":"500ms","retry":{"policy":"fixed","interval":"100ms","max_attempts":2}})");
  ASSERT_NE(once, 0);
  ASSERT_NE(twice, 0);
  auto start = std::chrono::steady_clock::now();
  auto a = trigger(port, once);
  auto b = trigger(port, twice);
  ASSERT_EQ(a.size() + b.size(), 2u);

  auto x = await_terminal(port, a[0], 15s);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(str(x, "state"), "timed_out") << json::serialize(x) << "\n" << tail(node.log());
  EXPECT_EQ(num(x, "attempt"), 1) << json::serialize(x);
  EXPECT_NE(str(x, "error").find("timed out"), std::string::npos) << json::serialize(x);
  EXPECT_EQ(num(x, "exit_code"), 128 + SIGKILL) << json::serialize(x);
  EXPECT_LT(elapsed, 10s) << "the 30 s command was not cut off at its 500 ms timeout";
  EXPECT_LT(time_ms(x.at("finished_at")) - time_ms(x.at("started_at")), 5000) << json::serialize(x);
  // The process itself is gone, not just the record.
  EXPECT_TRUE(all_gone(sleep_arg)) << "the run's sleep still runs";

  // A timed-out attempt is an attempt: the second one runs and times out too.
  auto y = await_terminal(port, b[0], 15s);
  EXPECT_EQ(str(y, "state"), "timed_out") << json::serialize(y);
  EXPECT_EQ(num(y, "attempt"), 2) << json::serialize(y);
}

TEST(runs, cancel_stops_a_running_run) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto sleep_arg = unique_sleep_arg(30);
  auto id = create_task(port, R"({"name":"long","command":"exec sleep )" + sleep_arg + R"("})");
  ASSERT_NE(id, 0);
  auto ids = trigger(port, id);
  ASSERT_EQ(ids.size(), 1u);
  auto x = await_state(port, ids[0], "running");
  ASSERT_EQ(str(x, "state"), "running") << json::serialize(x) << "\n" << tail(node.log());
  ASSERT_TRUE(eventually([&] { return !pids_with_arg(sleep_arg).empty(); }, 5s));

  auto r = http_call(port, "POST", "/api/v1/instances/" + ids[0] + "/cancel");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(str(parse(r).as_object(), "state"), "cancelled") << r.body;

  EXPECT_TRUE(all_gone(sleep_arg)) << "the run still runs after cancel\n" << tail(node.log());
  // The killed run's own report does not overwrite the cancellation.
  auto after = get_instance(port, ids[0]);
  EXPECT_EQ(str(after, "state"), "cancelled") << json::serialize(after);
  EXPECT_NE(time_ms(after.at("finished_at")), -1) << json::serialize(after);
}

TEST(runs, run_in_flight_at_sigkill_without_retries_ends_worker_lost_after_restart) {
  temp_dir dir;
  auto data = dir.path() + "/data";
  auto sleep_arg = unique_sleep_arg(2);
  int64_t id = 0;
  std::string instance_id;
  {
    node_process node(data);
    ASSERT_TRUE(serving(node)) << tail(node.log());
    auto port = node.http_port();
    id = create_task(
        port, R"({"name":"survivor","command":"sleep )" + sleep_arg + R"(; echo done"})");
    ASSERT_NE(id, 0);
    auto ids = trigger(port, id);
    ASSERT_EQ(ids.size(), 1u);
    instance_id = ids[0];
    auto x = await_state(port, instance_id, "running");
    ASSERT_EQ(str(x, "state"), "running") << json::serialize(x) << "\n" << tail(node.log());
    EXPECT_EQ(node.stop(SIGKILL), SIGKILL);
  }
  node_process node(data);
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  // The restarted worker does not hold the run: its attempt was lost with the
  // node, and without a retry policy that is the run's end (not a silent re-run).
  auto x = await_terminal(port, instance_id, 20s);
  EXPECT_EQ(str(x, "state"), "failed") << json::serialize(x) << "\n" << tail(node.log());
  EXPECT_EQ(num(x, "attempt"), 1) << json::serialize(x);
  EXPECT_EQ(str(x, "error").rfind("worker_lost: ", 0), 0u) << json::serialize(x);
  auto all = instances_of(port, id);
  ASSERT_EQ(all.size(), 1u) << "one trigger, one instance";
  EXPECT_EQ(str(all[0], "id"), instance_id);
  auto task = http_call(port, "GET", "/api/v1/tasks/" + std::to_string(id));
  ASSERT_EQ(task.status, 200u) << task.body;
  EXPECT_EQ(str(parse(task).as_object(), "name"), "survivor");

  // The first incarnation's run died with the node, and was not run again.
  EXPECT_TRUE(all_gone(sleep_arg));
}

TEST(runs, labels_route_only_to_matching_workers) {
  temp_dir dir;
  node_process node(dir.path() + "/data", {"--worker-label", "zone=eu"});
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  // The built-in worker registers with the leader's router a moment after the
  // node serves HTTP.
  json::object workers;
  EXPECT_TRUE(eventually([&] {
    workers = parse(http_call(port, "GET", "/api/v1/workers")).as_object();
    return workers.at("items").as_array().size() == 1;
  }));
  ASSERT_EQ(workers.at("items").as_array().size(), 1u) << json::serialize(workers);
  EXPECT_EQ(str(workers.at("items").as_array()[0].at("labels").as_object(), "zone"), "eu")
      << json::serialize(workers);

  auto us = create_task(port, R"({"name":"us","command":"true","labels":{"zone":"us"}})");
  auto eu = create_task(port, R"({"name":"eu","command":"true","labels":{"zone":"eu"}})");
  auto any = create_task(port, R"({"name":"any","command":"true"})");
  ASSERT_NE(us, 0);
  ASSERT_NE(eu, 0);
  ASSERT_NE(any, 0);
  // The us run is queued first; its siblings overtake it.
  auto us_ids = trigger(port, us);
  auto eu_ids = trigger(port, eu);
  auto any_ids = trigger(port, any);
  ASSERT_EQ(us_ids.size() + eu_ids.size() + any_ids.size(), 3u);
  for (auto* ids : {&eu_ids, &any_ids}) {
    auto x = await_terminal(port, (*ids)[0]);
    EXPECT_EQ(str(x, "state"), "success") << json::serialize(x);
    EXPECT_EQ(str(x, "worker_id"), "n1") << json::serialize(x);
  }
  auto x = get_instance(port, us_ids[0]);
  EXPECT_EQ(str(x, "state"), "pending") << "no worker has zone=us: " << json::serialize(x);
  EXPECT_EQ(str(x, "worker_id"), "") << json::serialize(x);
}

TEST(runs, paused_task_does_not_fire_and_resumes) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  // A second fixed-rate task is the clock: the paused window is measured in its
  // slots rather than in sleeps.
  auto clock = create_task(port, R"({"name":"clock","kind":"noop","schedule":"@every 1s"})");
  auto id = create_task(port, R"({"name":"pausable","command":"true","schedule":"@every 1s"})");
  ASSERT_NE(clock, 0);
  ASSERT_NE(id, 0);
  auto path = "/api/v1/tasks/" + std::to_string(id);
  ASSERT_TRUE(eventually([&] { return !instances_of(port, id).empty(); }, 5s))
      << "the task never fired before the pause\n"
      << tail(node.log());

  auto paused = http_call(port, "POST", path + "/pause");
  auto paused_at = wall_ms();  // the pause is committed by now
  ASSERT_EQ(paused.status, 200u) << paused.body;
  auto p = parse(paused).as_object();
  EXPECT_TRUE(p.at("paused").as_bool());
  EXPECT_TRUE(p.at("next_fire_times").as_array().empty()) << paused.body;

  auto clock_reaches = [&](int64_t t) {
    for (auto& x : instances_of(port, clock))
      if (time_ms(x.at("slot")) >= t) return true;
    return false;
  };
  ASSERT_TRUE(eventually([&] { return clock_reaches(paused_at + 3000); }, 8s))
      << "the clock task stopped firing\n"
      << tail(node.log());
  // A slot whose instant came more than 50 ms after the pause ran nothing
  // (README: a pause more than 50 ms before the instant withdraws the held
  // run; the withdrawal travels from the leader to the worker, so one
  // committed in the instant's last milliseconds may lose that race): at
  // most a run fired ahead of its instant (--fire-ahead-ms) before the
  // pause, then withdrawn by it unstarted. paused_at is after the commit.
  constexpr int64_t withdraw_margin_ms = 50;
  auto withdrawn = [](const json::object& x) {
    return str(x, "state") == "cancelled" && x.at("started_at").is_null() &&
           str(x, "error").find("withdrawn before its instant") != std::string::npos;
  };
  for (auto& x : instances_of(port, id))
    if (time_ms(x.at("slot")) > paused_at + withdraw_margin_ms)
      EXPECT_TRUE(withdrawn(x)) << "ran while paused: " << json::serialize(x);

  auto resume_sent = wall_ms();
  auto resumed = http_call(port, "POST", path + "/resume");
  ASSERT_EQ(resumed.status, 200u) << resumed.body;
  auto q = parse(resumed).as_object();
  EXPECT_FALSE(q.at("paused").as_bool());
  EXPECT_FALSE(q.at("next_fire_times").as_array().empty()) << resumed.body;
  auto fired_after_resume = [&] {
    for (auto& x : instances_of(port, id))
      if (time_ms(x.at("slot")) > resume_sent && str(x, "state") == "success") return true;
    return false;
  };
  EXPECT_TRUE(eventually(fired_after_resume, 5s)) << "no run after resume\n" << tail(node.log());
  // Whatever a resume may catch up, nothing was created while the task was
  // paused. A slot inside the lead fires the moment the resume commits, and
  // the trigger's clock (wall time at its start plus steady time since) may
  // read a few ms behind this process's: 100 ms of slack, in a pause of 3 s.
  for (auto& x : instances_of(port, id)) {
    auto slot = time_ms(x.at("slot"));
    if (slot > paused_at + withdraw_margin_ms && !withdrawn(x)) {
      EXPECT_GE(time_ms(x.at("created_at")), resume_sent - 100)
          << "created while paused: " << json::serialize(x);
    }
  }
}

TEST(runs, instance_list_filters_by_slot_time_range) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto id = create_task(port, R"({"name":"ticks","kind":"noop","schedule":"@every 1s"})");
  ASSERT_NE(id, 0);
  ASSERT_TRUE(eventually([&] { return instances_of(port, id).size() >= 4; }, 10s))
      << tail(node.log());

  auto runs = instances_of(port, id);
  std::vector<int64_t> slots;
  for (auto& x : runs) slots.push_back(time_ms(x.at("slot")));
  std::sort(slots.begin(), slots.end());
  // The window holds exactly the second and third slots.
  auto since = slots[1], until = slots[3];
  auto rfc = [](int64_t ms) {
    std::time_t s = ms / 1000;
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::gmtime(&s));
    char out[40];
    std::snprintf(out, sizeof out, "%s.%03dZ", buf, int(ms % 1000));
    return std::string(out);
  };
  auto r = http_call(port, "GET", "/api/v1/instances?task_id=" + std::to_string(id) +
                                      "&since=" + rfc(since) + "&until=" + rfc(until));
  ASSERT_EQ(r.status, 200u) << r.body;
  auto v = parse(r);
  std::vector<int64_t> got;
  for (auto& x : v.at("items").as_array()) got.push_back(time_ms(x.at("slot")));
  EXPECT_EQ(got, (std::vector<int64_t>{slots[2], slots[1]})) << r.body;

  auto bad = http_call(port, "GET", "/api/v1/instances?since=yesterday");
  EXPECT_EQ(bad.status, 400u) << bad.body;
  EXPECT_EQ(str(parse(bad).at("error").as_object(), "field"), "since") << bad.body;
  auto reversed = http_call(port, "GET", "/api/v1/instances?since=" + rfc(until) + "&until=" + rfc(since));
  EXPECT_EQ(reversed.status, 400u) << reversed.body;
  EXPECT_EQ(str(parse(reversed).at("error").as_object(), "field"), "until") << reversed.body;
}

TEST(runs, dag_route_shows_dependencies_and_latest_states) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto up = create_task(port, R"({"name":"extract","command":"true"})");
  ASSERT_NE(up, 0);
  auto down = create_task(port, R"({"name":"load","command":"true","depends_on":[)" +
                                    std::to_string(up) + "]}");
  ASSERT_NE(down, 0);
  trigger(port, up);

  json::value dag;
  auto node_of = [&](int64_t id) -> json::object {
    for (auto& n : dag.at("nodes").as_array())
      if (n.at("id").to_number<int64_t>() == id) return n.as_object();
    return {};
  };
  ASSERT_TRUE(eventually(
      [&] {
        auto r = http_call(port, "GET", "/api/v1/dag");
        if (r.status != 200) return false;
        dag = parse(r);
        auto a = node_of(up);
        return a.contains("last_state") && a.at("last_state") == "success";
      },
      10s))
      << "the triggered upstream run should show as its latest state: " << json::serialize(dag)
      << "\n"
      << tail(node.log());
  // A downstream without a schedule of its own fires on its upstream's success.
  EXPECT_TRUE(eventually(
      [&] {
        auto r = http_call(port, "GET", "/api/v1/dag");
        if (r.status != 200) return false;
        dag = parse(r);
        auto d = node_of(down);
        return d.contains("last_state") && d.at("last_state") == "success";
      },
      10s))
      << "the downstream should run after its upstream succeeded: " << json::serialize(dag);
  EXPECT_EQ(str(node_of(up), "name"), "extract");
  auto& edges = dag.at("edges").as_array();
  ASSERT_EQ(edges.size(), 1u) << json::serialize(dag);
  EXPECT_EQ(edges[0].at("from").to_number<int64_t>(), up);
  EXPECT_EQ(edges[0].at("to").to_number<int64_t>(), down);
}
