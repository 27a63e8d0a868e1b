// Runs placed ahead of their instant survive the leader's death (#41 item 3):
// a group of three at default flags (a slot fires --fire-ahead-ms, 250 ms,
// early and its runs wait on their workers for the instant) runs 50
// `@every 2s` tasks with the default single attempt. Once a slot's runs are
// placed, some on the leader's own worker, the leader is SIGKILLed before the
// slot's instant and restarted on its data after a new leader is elected: its
// worker comes back holding none of them. Those attempts never started (no
// `running` committed), so they are no failed execution: they are placed again
// as the same attempt. Every run of the slot ends `success`, and no attempt of
// any run executes twice (each appends "<run> <attempt>" to a file).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/node_process.hpp"
#include "support/raft_group_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr int tasks_n = 50;
constexpr int64_t every_ms = 2000;  // `@every 2s`: slots at multiples of 2 s

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

void sleep_until_ms(int64_t at) {
  auto now = wall_ms();
  if (at > now) std::this_thread::sleep_for(std::chrono::milliseconds(at - now));
}

/// The runs of `ids` the member at `port` has dispatched to worker `worker`.
std::set<std::string> dispatched_on(uint16_t port, const std::set<std::string>& ids,
                                    const std::string& worker) {
  std::set<std::string> out;
  auto r = http_call(port, "GET", "/api/v1/instances?state=dispatched&limit=1000", "", 1s);
  if (r.status != 200) return out;
  json::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object() || !v.as_object().contains("items")) return out;
  for (auto& x : v.at("items").as_array()) {
    auto& o = x.as_object();
    if (ids.count(str(o, "id")) && str(o, "worker_id") == worker) out.insert(str(o, "id"));
  }
  return out;
}

json::object instance_at(uint16_t port, const std::string& id) {
  auto r = http_call(port, "GET", "/api/v1/instances/" + id, "", 2s);
  if (r.status != 200) return {};
  json::error_code ec;
  auto v = json::parse(r.body, ec);
  return !ec && v.is_object() ? v.as_object() : json::object{};
}

bool terminal(const std::string& s) {
  return s == "success" || s == "failed" || s == "timed_out" || s == "cancelled";
}

}  // namespace

TEST(fire_ahead_kill, runs_held_on_a_killed_leaders_worker_are_placed_again_and_run_once) {
  temp_dir dir;
  // Runs may execute as another user: the side-effect file is everyone's.
  auto side = dir.path() + "/side";
  ASSERT_EQ(mkdir(side.c_str(), 0777), 0);
  ASSERT_EQ(chmod(side.c_str(), 0777), 0);
  auto effects = side + "/effects";
  std::ofstream(effects).flush();
  ASSERT_EQ(chmod(effects.c_str(), 0666), 0);

  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  // Each execution appends "<run> <attempt>".
  const std::string command = R"(echo \"$SCHEDULE_INSTANCE_ID $ATTEMPT\" >> )" + effects;
  std::vector<int64_t> tasks;
  for (int i = 0; i < tasks_n; ++i) {
    auto id = create_task(g.port(leader), R"({"name":"tick-)" + std::to_string(i) +
                                              R"(","schedule":"@every 2s","command":")" + command +
                                              R"("})");
    ASSERT_NE(id, 0) << g.dump();
    tasks.push_back(id);
  }
  std::this_thread::sleep_for(3s);  // the slots fire in rhythm

  // A slot whose runs are placed, some on the leader's own worker, before its
  // instant: the leader dies then. A slot whose runs are not seen placed there
  // in time (a loaded machine) is let pass and the next one tried.
  int64_t slot = 0;
  std::set<std::string> slot_ids, held_by_leader;
  for (int round = 0; round < 6 && held_by_leader.empty(); ++round) {
    leader = g.await_leader(g.running_members());
    ASSERT_NE(leader, none) << g.dump();
    slot = (wall_ms() + 1500) / every_ms * every_ms + every_ms;
    slot_ids.clear();
    for (auto t : tasks) slot_ids.insert(std::to_string(t) + "-" + std::to_string(slot) + "-0");
    sleep_until_ms(slot - 260);
    while (wall_ms() < slot - 100) {
      held_by_leader = dispatched_on(g.port(leader), slot_ids, g.id(leader));
      if (!held_by_leader.empty()) break;
      std::this_thread::sleep_for(5ms);
    }
    if (wall_ms() >= slot - 50) held_by_leader.clear();  // seen too late to die before it
    if (held_by_leader.empty()) continue;
    ASSERT_EQ(g.kill(leader), SIGKILL);
    ASSERT_LT(wall_ms(), slot) << "killed after the instant: the test proves nothing";
  }
  ASSERT_FALSE(held_by_leader.empty())
      << "no slot's runs were seen placed on the leader's worker before the instant\n"
      << g.dump();

  auto killed = leader;
  auto next = g.await_leader(g.running_members(), 20s);
  ASSERT_NE(next, none) << g.dump();
  g.start(killed);  // its worker registers with the new leader without the held runs
  ASSERT_TRUE(g.running(killed)) << g.dump();

  std::map<std::string, json::object> final_of;
  bool all_final = eventually(
      [&] {
        auto port = g.port(next);
        for (auto& id : slot_ids) {
          if (final_of.count(id)) continue;
          auto x = instance_at(port, id);
          if (terminal(str(x, "state"))) final_of[id] = x;
        }
        return final_of.size() == slot_ids.size();
      },
      90s);
  ASSERT_TRUE(all_final) << final_of.size() << " of " << slot_ids.size() << " runs final\n"
                         << g.dump();
  for (auto& [id, x] : final_of) {
    EXPECT_EQ(str(x, "state"), "success")
        << (held_by_leader.count(id) ? "held on the killed leader's worker: " : "")
        << json::serialize(x);
    EXPECT_EQ(num(x, "attempt"), 1) << "placed again as the same attempt: " << json::serialize(x);
  }

  // Each run of the slot executed, and no attempt of any run executed twice.
  std::map<std::string, int> seen;
  for (auto& line : lines_of(effects)) seen[line] += 1;
  for (auto& [line, n] : seen) EXPECT_EQ(n, 1) << "executed " << n << " times: " << line;
  for (auto& id : slot_ids) EXPECT_EQ(seen.count(id + " 1"), 1u) << id << " never executed";
}
