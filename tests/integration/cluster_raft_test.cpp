// A Raft group of three real `aisched` scheduler nodes (`--peers`) on free loopback
// cluster ports: they elect one leader, replicate writes made on a follower, keep
// every task and fire no slot twice across two leader SIGKILLs (and a restart of the
// first victim), and a member cut off from the majority (two SIGSTOPped) commits
// nothing. Every process is started by the harness in tests/support/, with a
// temporary data dir, and killed by pid (stopped ones are SIGCONTed first); all
// waiting is polling with deadlines.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "storage/format_version.hpp"
#include "support/node_process.hpp"
#include "support/raft_group_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

/// SIGCONTs the processes it holds when destroyed: declared after the group, it
/// runs first, so no stopped process is left behind (or killed while stopped).
struct resume_on_exit {
  std::vector<pid_t> pids;
  void resume() {
    for (auto p : pids)
      if (p > 0) ::kill(p, SIGCONT);
    pids.clear();
  }
  ~resume_on_exit() { resume(); }
};

/// One run, as listed.
struct run {
  std::string id, state;
  int64_t task = 0, slot = 0, shard = 0, attempt = 0, created = 0;
  std::string json;
};

/// Every instance a node lists (100 a page, paged with the cursor); `ok` false if a page failed.
std::vector<run> all_runs(uint16_t port, bool* ok, const std::string& filter = "") {
  std::vector<run> out;
  std::string cursor;
  *ok = false;
  for (int page = 0; page < 1000; ++page) {
    auto r = http_call(
        port, "GET",
        "/api/v1/instances?limit=100" + filter + (cursor.empty() ? "" : "&cursor=" + cursor));
    if (r.status != 200) return out;
    boost::system::error_code ec;
    auto v = json::parse(r.body, ec);
    if (ec || !v.is_object()) return out;
    for (auto& x : v.at("items").as_array()) {
      auto& o = x.as_object();
      out.push_back(run{str(o, "id"), str(o, "state"), num(o, "task_id"),
                        rfc3339_ms(str(o, "slot")), num(o, "shard"), num(o, "attempt"),
                        rfc3339_ms(str(o, "created_at")), json::serialize(o)});
    }
    cursor = str(v.as_object(), "next_cursor");
    if (cursor.empty()) {
      *ok = true;
      return out;
    }
  }
  return out;
}

/// Whether every task in `ids` has at least `n` successful runs of slots after `after_ms`.
bool all_tasks_ran_after(uint16_t port, const std::vector<int64_t>& ids, int64_t after_ms, int n) {
  bool ok = false;
  auto runs = all_runs(port, &ok, "&state=success");
  if (!ok) return false;
  std::map<int64_t, int> ran;
  for (auto& x : runs)
    if (x.slot > after_ms) ++ran[x.task];
  for (auto id : ids)
    if (ran[id] < n) return false;
  return true;
}

/// Number of instances of task `id` a node lists; -1 if it could not be read.
long runs_of(uint16_t port, int64_t id) {
  bool ok = false;
  auto runs = all_runs(port, &ok, "&task_id=" + std::to_string(id));
  return ok ? long(runs.size()) : -1;
}

}  // namespace

TEST(cluster_raft, three_nodes_elect_one_leader_and_replicate) {
  auto started = steady::now();
  temp_dir dir;
  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << "no agreed leader\n" << g.dump();
  RecordProperty("seconds_to_agreed_leader", std::to_string(seconds_since(started)));
  RecordProperty("leader", g.id(leader));
  // Exactly one member says it leads, and all are in the same term.
  std::set<uint64_t> terms;
  int leaders = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    auto v = view_of(g.port(i));
    ASSERT_TRUE(v.ok) << g.dump();
    terms.insert(v.term);
    if (v.role == "leader") ++leaders;
  }
  EXPECT_EQ(leaders, 1) << g.dump();
  EXPECT_EQ(terms.size(), 1u) << g.dump();

  // Writes on a follower are forwarded to the leader.
  auto follower = (leader + 1) % g.size();
  std::map<int64_t, std::string> names;
  for (int i = 0; i < 20; ++i) {
    auto name = "replicated-" + std::to_string(i);
    auto id = create_task(g.port(follower), R"({"name":")" + name + R"(","kind":"noop"})");
    ASSERT_NE(id, 0) << g.dump();
    EXPECT_TRUE(names.emplace(id, name).second) << "id " << id << " given twice";
  }
  ASSERT_EQ(names.size(), 20u);

  // Every member eventually serves all 20 from its own state.
  for (size_t i = 0; i < g.size(); ++i) {
    std::string missing;
    bool all = eventually(
        [&] {
          for (auto& [id, name] : names) {
            auto r = http_call(g.port(i), "GET", "/api/v1/tasks/" + std::to_string(id));
            if (r.status != 200) {
              missing = std::to_string(id) + " -> " + std::to_string(r.status) + " " + r.body;
              return false;
            }
            auto v = parse(r);
            EXPECT_EQ(str(v.as_object(), "name"), name) << g.id(i) << ": " << r.body;
          }
          return true;
        },
        10s);
    EXPECT_TRUE(all) << g.id(i) << " lacks task " << missing << "\n" << g.dump();
  }

  // Manual runs, events and backfills sent to a follower reach the leader's trigger.
  auto some = names.begin()->first;
  auto r = http_call(g.port(follower), "POST", "/api/v1/tasks/" + std::to_string(some) + "/trigger");
  EXPECT_EQ(r.status, 201u) << r.body << "\n" << g.dump();
  r = http_call(g.port(follower), "POST", "/api/v1/events/nobody-listens", "{}");
  EXPECT_EQ(r.status, 200u) << r.body;

  // Every member reports its own status and HTTP address in the cluster view.
  r = http_call(g.port(follower), "GET", "/api/v1/cluster");
  ASSERT_EQ(r.status, 200u) << r.body;
  auto cv = parse(r);
  std::set<std::string> roles, addrs;
  for (auto& m : cv.at("members").as_array()) {
    auto& mo = m.as_object();
    EXPECT_TRUE(mo.at("reachable").as_bool()) << r.body;
    roles.insert(str(mo, "role"));
    addrs.insert(str(mo, "http_addr"));
    EXPECT_GE(num(mo, "term"), 1) << r.body;
    // The build and data format each member runs, as it says itself.
    EXPECT_EQ(str(mo, "version"), AISCHED_VERSION) << r.body;
    EXPECT_EQ(num(mo, "data_format"), static_cast<int64_t>(aisched::storage::current_format))
        << r.body;
  }
  EXPECT_EQ(roles, (std::set<std::string>{"leader", "follower"})) << r.body;
  ASSERT_TRUE(cv.at("versions").is_array()) << r.body;
  EXPECT_EQ(json::serialize(cv.at("versions")), std::string("[\"") + AISCHED_VERSION + "\"]")
      << r.body;
  std::set<std::string> expected_addrs;
  for (size_t i = 0; i < g.size(); ++i) expected_addrs.insert("127.0.0.1:" + std::to_string(g.port(i)));
  EXPECT_EQ(addrs, expected_addrs) << r.body;
  RecordProperty("seconds_total", std::to_string(seconds_since(started)));
}

TEST(cluster_raft, leader_failover_loses_no_task_and_doubles_no_slot) {
  auto started = steady::now();
  temp_dir dir;
  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << "no agreed leader\n" << g.dump();

  std::vector<int64_t> ids;
  for (int i = 0; i < 200; ++i) {
    auto id =
        create_task(g.port((leader + 1 + i) % 3), R"({"name":"every-)" + std::to_string(i) +
                                                      R"(","kind":"noop","schedule":"@every 1s"})");
    ASSERT_NE(id, 0) << g.dump();
    ids.push_back(id);
  }
  ASSERT_TRUE(eventually([&] { return all_tasks_ran_after(g.port(leader), ids, 0, 2); }, 10s))
      << "not every task ran twice before the first kill\n"
      << g.dump();

  // A failover: SIGKILL the leader, time until the survivors agree on a new one.
  struct failover {
    size_t killed = none, next = none;
    int64_t kill_ms = 0;  // wall clock just before the SIGKILL
    double seconds = 0;
  };
  std::vector<failover> failovers;
  auto fail_over = [&](size_t victim) {
    failover f;
    f.killed = victim;
    f.kill_ms = wall_ms();
    auto t = steady::now();
    EXPECT_EQ(g.kill(victim), SIGKILL);
    f.next = g.await_leader(g.running_members(), 15s);
    f.seconds = seconds_since(t);
    failovers.push_back(f);
    auto n = std::to_string(failovers.size());
    RecordProperty("failover_" + n + "_seconds", std::to_string(f.seconds));
    RecordProperty("failover_" + n + "_killed", g.id(victim));
    if (f.next != none) RecordProperty("failover_" + n + "_new_leader", g.id(f.next));
    return f;
  };

  auto f1 = fail_over(leader);
  ASSERT_NE(f1.next, none) << "no new leader after killing " << g.id(leader) << "\n" << g.dump();
  EXPECT_LT(f1.seconds, 5.0) << g.dump();
  leader = f1.next;

  // Let three more slots fire under the new leader.
  auto before = runs_of(g.port(leader), ids[0]);
  ASSERT_GE(before, 0);
  ASSERT_TRUE(eventually([&] { return runs_of(g.port(leader), ids[0]) >= before + 3; }, 10s))
      << "no runs under the new leader\n"
      << g.dump();

  // The first victim comes back on its data dir and port, and catches up without
  // disturbing the leader (its term is behind; pre-vote keeps it from campaigning).
  auto term = view_of(g.port(leader)).term;
  g.start(f1.killed);
  ASSERT_TRUE(g.running(f1.killed)) << g.dump();
  auto commit = view_of(g.port(leader)).commit;
  ASSERT_TRUE(eventually(
      [&] {
        auto v = view_of(g.port(f1.killed));
        return v.ok && !v.leader.empty() && v.applied >= commit;
      },
      20s))
      << g.id(f1.killed) << " did not catch up to " << commit << "\n"
      << g.dump();
  auto current = g.await_leader({0, 1, 2});
  ASSERT_NE(current, none) << g.dump();
  EXPECT_EQ(g.id(current), g.id(leader)) << "the restart moved the leadership\n" << g.dump();
  EXPECT_EQ(view_of(g.port(current)).term, term) << "the restart started an election\n" << g.dump();

  auto f2 = fail_over(current);
  ASSERT_NE(f2.next, none) << "no new leader after killing " << g.id(current) << "\n" << g.dump();
  EXPECT_LT(f2.seconds, 5.0) << g.dump();
  leader = f2.next;
  ASSERT_TRUE(
      eventually([&] { return all_tasks_ran_after(g.port(leader), ids, f2.kill_ms, 2); }, 15s))
      << "not every task ran twice after the second failover\n"
      << g.dump();

  // Stop firing, then read the committed state once both survivors agree on it.
  for (auto id : ids) {
    http_result r;
    eventually(
        [&] {
          r = http_call(g.port(leader), "POST", "/api/v1/tasks/" + std::to_string(id) + "/pause");
          return r.status != 503;
        },
        10s);
    ASSERT_TRUE(r.status >= 200 && r.status < 300)
        << "pause " << id << ": " << r.status << " " << r.body;
  }
  auto survivors = g.running_members();
  ASSERT_EQ(survivors.size(), 2u);
  std::vector<run> runs;
  std::string last_signature;
  bool settled = eventually(
      [&] {
        std::vector<std::string> sigs;
        for (auto m : survivors) {
          bool ok = false;
          auto xs = all_runs(g.port(m), &ok);
          if (!ok) return false;
          std::string sig;
          for (auto& x : xs) sig += x.id + ":" + x.state + ":" + std::to_string(x.attempt) + ",";
          sigs.push_back(sig);
          runs = std::move(xs);
        }
        bool same = sigs[0] == sigs[1] && sigs[0] == last_signature;
        last_signature = sigs[0];
        return same;
      },
      20s);
  ASSERT_TRUE(settled) << "the survivors do not settle on the same instances\n" << g.dump();

  // Every task still exists on every running member.
  for (auto m : survivors)
    for (auto id : ids) {
      auto r = http_call(g.port(m), "GET", "/api/v1/tasks/" + std::to_string(id));
      EXPECT_EQ(r.status, 200u) << g.id(m) << " lost task " << id << ": " << r.body;
    }

  // One instance per (task, slot, shard), with the id its key implies.
  std::map<int64_t, std::vector<const run*>> by_task;
  std::set<std::tuple<int64_t, int64_t, int64_t>> keys;
  std::map<std::string, int> states;
  for (auto& x : runs) {
    ++states[x.state];
    EXPECT_TRUE(keys.emplace(x.task, x.slot, x.shard).second) << "twice: " << x.json;
    EXPECT_EQ(x.id,
              std::to_string(x.task) + "-" + std::to_string(x.slot) + "-" + std::to_string(x.shard))
        << x.json;
    EXPECT_EQ(x.shard, 0) << x.json;
    EXPECT_EQ(x.slot % 1000, 0) << "not a whole second: " << x.json;
    by_task[x.task].push_back(&x);
  }
  for (auto& [s, n] : states) RecordProperty("instances_" + s, n);
  RecordProperty("instances", int(runs.size()));
  EXPECT_EQ(by_task.size(), ids.size()) << "instances of unknown tasks, or tasks that never ran";

  // Failover windows: from the kill to the new leader's first fire (the earliest
  // instance created after the kill).
  std::vector<int64_t> first_fire(failovers.size(), INT64_MAX);
  for (auto& x : runs)
    for (size_t f = 0; f < failovers.size(); ++f)
      if (x.created > failovers[f].kill_ms + 100)
        first_fire[f] = std::min(first_fire[f], x.created);
  for (size_t f = 0; f < failovers.size(); ++f) {
    ASSERT_NE(first_fire[f], INT64_MAX);
    RecordProperty("failover_" + std::to_string(f + 1) + "_kill_to_first_fire_ms",
                   int(first_fire[f] - failovers[f].kill_ms));
  }

  int gaps = 0;
  std::vector<int> catch_ups(failovers.size(), 0);
  for (auto id : ids) {
    auto& xs = by_task[id];
    ASSERT_FALSE(xs.empty()) << "task " << id << " never ran";
    EXPECT_LT(xs.front()->slot, failovers[0].kill_ms) << "task " << id << " first ran late";
    EXPECT_GT(xs.back()->slot, failovers[1].kill_ms) << "task " << id << " stopped firing";
    for (size_t i = 1; i < xs.size(); ++i) {
      auto a = xs[i - 1]->slot, b = xs[i]->slot;
      ASSERT_GT(b, a) << "slots out of order: " << xs[i - 1]->json << " " << xs[i]->json;
      if (b - a == 1000) continue;
      // A gap: only where nobody led, i.e. it spans a kill and is no longer than
      // the kill-to-first-fire window plus the slot cut short on each side.
      ++gaps;
      bool explained = false;
      for (size_t f = 0; f < failovers.size(); ++f) {
        auto k = failovers[f].kill_ms;
        if (a < k + 200 && b > k && b - a <= (first_fire[f] - k) + 2500) explained = true;
      }
      EXPECT_TRUE(explained) << "task " << id << ": gap of " << (b - a) << " ms between slots " << a
                             << " and " << b << " (kills at " << failovers[0].kill_ms << ", "
                             << failovers[1].kill_ms << "; first fires at " << first_fire[0] << ", "
                             << first_fire[1] << ")";
    }
    // fire_once: the slots due while nobody led (after the kill, before the new
    // leader's first fire) are run late at most once; and once at least if one
    // whole second of that window was certainly missed.
    for (size_t f = 0; f < failovers.size(); ++f) {
      auto k = failovers[f].kill_ms, r = first_fire[f];
      int late = 0, late_or_first = 0;
      for (auto* x : xs) {
        if (x->slot > k + 100 && x->slot <= r - 100) ++late;
        if (x->slot > k + 100 && x->slot <= r) ++late_or_first;
      }
      catch_ups[f] += late;
      EXPECT_LE(late, 1) << "task " << id << ": " << late << " catch-up runs after failover "
                         << f + 1 << " (kill " << k << ", first fire " << r << ")";
      bool missed = (k + 200 + 999) / 1000 * 1000 < r - 300;
      if (missed) {
        EXPECT_GE(late_or_first, 1) << "task " << id << ": no catch-up run after failover " << f + 1
                                    << " (kill " << k << ", first fire " << r << ")";
      }
    }
  }
  RecordProperty("gaps", gaps);
  for (size_t f = 0; f < failovers.size(); ++f)
    RecordProperty("failover_" + std::to_string(f + 1) + "_catch_up_runs", catch_ups[f]);
  RecordProperty("seconds_total", std::to_string(seconds_since(started)));
}

TEST(cluster_raft, minority_partition_cannot_commit) {
  auto started = steady::now();
  temp_dir dir;
  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  resume_on_exit stopped;  // destroyed before the group: SIGCONT before SIGKILL
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << "no agreed leader\n" << g.dump();
  ASSERT_NE(create_task(g.port(leader), R"({"name":"before","kind":"noop"})"), 0);

  // Freeze both followers: the leader is alone, a minority of one. Only once
  // every thread of theirs has stopped: until then they still acknowledge.
  for (size_t i = 0; i < g.size(); ++i)
    if (i != leader) {
      stopped.pids.push_back(g.pid(i));
      ASSERT_TRUE(freeze(g.pid(i))) << "follower " << g.id(i) << " did not stop";
    }
  auto t = steady::now();
  auto r = http_call(g.port(leader), "POST", "/api/v1/tasks",
                     R"({"name":"during-partition","kind":"noop"})", 5s);
  RecordProperty("partitioned_write_status", int(r.status));
  RecordProperty("partitioned_write_seconds", std::to_string(seconds_since(t)));
  EXPECT_NE(r.status, 201u) << "a write committed without a majority: " << r.body << "\n"
                            << g.dump();
  // Check-quorum: a leader that hears from no majority steps down.
  member_view v;
  EXPECT_TRUE(
      eventually([&] { return (v = view_of(g.port(leader))).ok && v.role != "leader"; }, 5s))
      << "the isolated leader still leads: " << v.role << "\n"
      << g.dump();

  stopped.resume();
  auto healed = steady::now();
  ASSERT_NE(g.await_leader({0, 1, 2}), none) << "no leader after the partition\n" << g.dump();
  http_result after;
  EXPECT_TRUE(eventually(
      [&] {
        after = http_call(g.port(leader), "POST", "/api/v1/tasks",
                          R"({"name":"after-partition","kind":"noop"})", 5s);
        return after.status == 201;
      },
      15s))
      << "writes do not succeed after the partition healed: " << after.status << " " << after.body
      << "\n"
      << g.dump();
  RecordProperty("seconds_heal_to_write", std::to_string(seconds_since(healed)));

  // The write that timed out has an unknown outcome: the isolated leader kept it in
  // its log and may commit it after the heal. Recorded, not asserted.
  std::set<std::string> names;
  EXPECT_TRUE(eventually(
      [&] {
        auto r = http_call(g.port(leader), "GET", "/api/v1/tasks?limit=1000");
        if (r.status != 200) return false;
        names.clear();
        auto page = parse(r);  // kept alive: the loop below refers into it
        for (auto& t : page.at("items").as_array()) names.insert(str(t.as_object(), "name"));
        return names.count("after-partition") > 0;
      },
      10s))
      << g.dump();
  RecordProperty("partitioned_write_committed_later", int(names.count("during-partition")));
  RecordProperty("seconds_total", std::to_string(seconds_since(started)));
}
