// Late requests of a deposed leader are fenced (README), end to end: three members
// at default flags, each with its built-in worker (a survivor's worker is used by the
// old and the new leader), run `@every 1s` tasks whose runs append
// "$SCHEDULE_INSTANCE_ID $ATTEMPT" to a marker file. Each round SIGSTOPs the leader
// holding runs it placed ahead of a slot but never handed out: the followers stop
// from 450 ms before the instant, so its fire at -250 ms (--fire-ahead-ms) cannot
// commit; it stops at -150 ms, the followers go on and elect a successor, which
// places those runs again as the same attempts once the survivors' workers registered
// with it. The old leader then wakes and hands them out late: at once in even rounds
// (before CAF's 5 s connection timeout drops its links, so the survivors' workers get
// them and must refuse them), 3 s later in odd ones (only its own worker hears it).
// Checks: no (run, attempt) ran twice, every slot ran, one leader per term, a round
// held placed runs. worker_fenced_total is only reported: whether a late hand-out
// leaves the waking leader before it hears of its successor (and stops its worker
// proxies) is a race inside that process (by hand, 3 of 19 rounds woken in time).
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/node_process.hpp"
#include "support/prometheus_text.hpp"
#include "support/raft_group_process.hpp"
#include "support/test_helpers.hpp"
#include "support/worker_nodes.hpp"
#include "tools/chaos/leaders.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr int tasks_n = 12;
constexpr int rounds_n = 4;

/// SIGCONTs its processes when destroyed: declared after the group, it runs first.
struct resume_on_exit {
  std::vector<pid_t> pids;
  ~resume_on_exit() {
    for (auto p : pids)
      if (p > 0) ::kill(p, SIGCONT);
  }
};

void sleep_until_ms(int64_t at) {
  auto now = wall_ms();
  if (at > now) std::this_thread::sleep_for(std::chrono::milliseconds(at - now));
}

/// The sum of `members`' own values of metric `name` (0 for one that does not answer).
double metric(const raft_group& g, const std::vector<size_t>& members, const std::string& name) {
  double sum = 0;
  for (auto i : members) {
    auto r = http_call(g.port(i), "GET", "/metrics", "", 2s);
    if (r.status == 200) sum += parse_prometheus_text(r.body).value(name).value_or(0);
  }
  return sum;
}

json::object object_at(uint16_t port, const std::string& target) {
  auto r = http_call(port, "GET", target, "", 2s);
  json::error_code ec;
  auto v = json::parse(r.body, ec);
  return r.status == 200 && !ec && v.is_object() ? v.as_object() : json::object{};
}

/// Whether leader `l` has the built-in workers of all `members` registered with it.
bool registered(const raft_group& g, size_t l, const std::vector<size_t>& members) {
  auto o = object_at(g.port(l), "/api/v1/workers");
  auto* items = o.if_contains("items");
  std::set<std::string> seen;
  if (items && items->is_array())
    for (auto& w : items->as_array()) seen.insert(str(w.as_object(), "id"));
  for (auto i : members)
    if (!seen.count(g.id(i))) return false;
  return true;
}

/// What the runs recorded: "<run> <attempt>" -> how many executions.
std::map<std::string, int> executions(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, int> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out[line] += 1;
  return out;
}

}  // namespace

TEST(fencing_node, a_deposed_leaders_late_dispatch_runs_no_attempt_twice) {
  temp_dir dir;
  auto marker = shared_runs_file(dir.path());

  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  resume_on_exit stopped{{g.pid(0), g.pid(1), g.pid(2)}};  // SIGCONT before the group's SIGKILL
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  // fire_all: a slot that comes due while no one leads fires too.
  const std::string task = R"({"schedule":"@every 1s","misfire":"fire_all",)"
                           R"("retry":{"policy":"fixed","interval":"500ms","max_attempts":5},)"
                           R"("command":"echo \"$SCHEDULE_INSTANCE_ID $ATTEMPT\" >> )" +
                           marker + R"(","name":"fence-)";
  std::vector<int64_t> tasks;
  for (int i = 0; i < tasks_n; ++i) {
    tasks.push_back(create_task(g.port(leader), task + std::to_string(i) + R"("})"));
    ASSERT_NE(tasks.back(), 0) << g.dump();
  }
  std::this_thread::sleep_for(3s);  // the slots fire in rhythm

  std::vector<int64_t> slots;  // per round: the slot whose runs the stopped leader held
  for (int round = 0, tries = 0; round < rounds_n; ++tries) {
    ASSERT_LT(tries, rounds_n + 4) << "the followers never stopped before a slot's fire";
    auto l = g.await_leader({0, 1, 2}, 30s);
    ASSERT_NE(l, none) << g.dump();
    std::vector<size_t> others;
    for (size_t i = 0; i < g.size(); ++i)
      if (i != l) others.push_back(i);
    auto fenced_before = metric(g, {0, 1, 2}, "worker_fenced_total");
    int64_t slot = (wall_ms() + 1000) / 1000 * 1000 + 1000;
    sleep_until_ms(slot - 450);
    for (auto f : others) ASSERT_TRUE(freeze(g.pid(f))) << g.id(f) << " did not stop";
    if (wall_ms() > slot - 270) {  // stopped too late to keep the fire from committing
      for (auto f : others) ::kill(g.pid(f), SIGCONT);
      continue;
    }
    sleep_until_ms(slot - 150);
    ASSERT_TRUE(freeze(g.pid(l))) << g.id(l) << " did not stop";
    auto stopped_at = std::chrono::steady_clock::now();
    for (auto f : others) ::kill(g.pid(f), SIGCONT);

    // The successor and the survivors' workers registered with it, asked of the
    // survivors only (their own metrics): the stopped one answers nothing.
    size_t next = none;
    bool read = eventually(
        [&] {
          for (auto f : others)
            if (next == none && metric(g, {f}, "raft_is_leader") == 1) next = f;
          return next != none && registered(g, next, others);
        },
        20s);
    auto read_after = seconds_since(stopped_at);
    ASSERT_TRUE(read) << "no successor that the survivors' workers registered with\n" << g.dump();
    if (round % 2) std::this_thread::sleep_for(3s);  // a long pause: its links time out
    auto woke_after = seconds_since(stopped_at);
    ::kill(g.pid(l), SIGCONT);
    ASSERT_NE(g.await_leader({0, 1, 2}, 30s), none) << g.dump();

    auto fenced = metric(g, {0, 1, 2}, "worker_fenced_total") - fenced_before;
    std::ostringstream line;
    line << std::fixed << std::setprecision(2) << "stopped " << g.id(l) << ", successor "
         << g.id(next) << " read the workers after " << read_after << " s, woke after "
         << woke_after << " s, worker_fenced_total +" << fenced;
    std::cout << "round " << round << ": " << line.str() << std::endl;
    RecordProperty("round_" + std::to_string(round), line.str());
    slots.push_back(slot);
    ++round;
  }

  // Every slot from before the first round to after the last executed.
  int64_t from = slots.front() - 2000, to = wall_ms() / 1000 * 1000;
  std::string missing;
  bool all_ran = eventually(
      [&] {
        std::set<std::string> ran;
        for (auto& e : executions(marker)) ran.insert(e.first.substr(0, e.first.find(' ')));
        missing.clear();
        for (auto t : tasks)
          for (auto s = from; s <= to; s += 1000)
            if (auto id = std::to_string(t) + "-" + std::to_string(s) + "-0"; !ran.count(id))
              missing = id;
        return missing.empty();
      },
      60s);
  EXPECT_TRUE(all_ran) << "never executed: " << missing << "\n" << g.dump();

  // The edge was reached: a stopped leader had fired a slot ahead of its instant
  // (its runs created before it) and handed none of them out (all started late).
  auto now_leader = g.await_leader({0, 1, 2}, 30s);
  ASSERT_NE(now_leader, none) << g.dump();
  int held_rounds = 0;
  for (auto s : slots) {
    bool held = true;
    for (auto t : tasks) {
      auto x = object_at(g.port(now_leader),
                         "/api/v1/instances/" + std::to_string(t) + "-" + std::to_string(s) + "-0");
      auto at = [&](const char* k) { return x.contains(k) ? time_ms(x.at(k)) : -1; };
      held = held && at("created_at") > 0 && at("created_at") < s && at("started_at") >= s + 1000;
    }
    held_rounds += held ? 1 : 0;
  }
  RecordProperty("rounds_with_placed_runs_held", held_rounds);
  EXPECT_GE(held_rounds, 1) << "no stopped leader held runs it had placed: the test proved nothing";

  for (auto& [line, n] : executions(marker))
    EXPECT_EQ(n, 1) << "run and attempt executed " << n << " times: " << line;

  std::map<std::string, std::string> logs;
  for (size_t i = 0; i < g.size(); ++i) logs[g.id(i)] = g.log(i);
  size_t elections = 0;
  for (auto& split : aisched::chaos::check_one_leader_per_term(logs, elections))
    ADD_FAILURE() << split;
  EXPECT_GE(elections, size_t(rounds_n + 1)) << "fewer elections than leaders stopped";
}
