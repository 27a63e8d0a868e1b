// Honest execution across a crash, on a real single `aisched` node at its
// defaults: runs in flight when the node is SIGKILLed are recorded as attempts
// lost with their worker (`worker_lost: ...`) after the restart and retried as
// the next attempt, so a job sees a new ATTEMPT and runs once per attempt; the
// run's history (GET /api/v1/instances/{id}/attempts) shows every attempt.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <boost/json.hpp>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

bool serving(const node_process& node) {
  return node.running() &&
         eventually([&] { return http_call(node.http_port(), "GET", "/healthz").status == 200; });
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

std::string state_of(uint16_t port, const std::string& id) {
  auto r = http_call(port, "GET", "/api/v1/instances/" + id);
  return r.status == 200 ? str(parse(r).as_object(), "state") : "";
}

bool terminal(const std::string& s) {
  return s == "success" || s == "failed" || s == "timed_out" || s == "cancelled";
}

/// The process groups of the first attempts (each run is its own group, led by
/// the shell that wrote its pid): killed here because, until runs die with
/// their node, they outlive the SIGKILL.
void kill_orphans(const std::string& pids_path) {
  for (auto& line : lines_of(pids_path)) {
    auto pid = static_cast<pid_t>(std::stol(line));
    if (pid > 0) kill(-pid, SIGKILL);
  }
}

}  // namespace

TEST(crash_attempts, runs_lost_with_a_killed_node_are_retried_as_new_attempts_once_each) {
  constexpr int runs = 16;  // the built-in worker's default slots: all run at once
  temp_dir dir;
  auto data = dir.path() + "/data";
  // Runs may execute as another user: the side-effect files are everyone's.
  auto side = dir.path() + "/side";
  ASSERT_EQ(mkdir(side.c_str(), 0777), 0);
  ASSERT_EQ(chmod(side.c_str(), 0777), 0);
  auto effects = side + "/effects";
  auto pids = side + "/pids";
  for (auto& f : {effects, pids}) {
    std::ofstream(f).flush();
    ASSERT_EQ(chmod(f.c_str(), 0666), 0);
  }
  // Each attempt appends "<instance> <attempt>"; the first then sleeps (it is
  // in flight at the kill), later ones end at once.
  const std::string command = "echo \\\"$SCHEDULE_INSTANCE_ID $ATTEMPT\\\" >> " + effects +
                              "; if [ \\\"$ATTEMPT\\\" = 1 ]; then echo $$ >> " + pids +
                              "; exec sleep 30; fi; echo attempt $ATTEMPT";
  std::vector<std::string> ids;
  {
    node_process node(data);
    ASSERT_TRUE(serving(node)) << tail(node.log());
    auto port = node.http_port();
    for (int i = 0; i < runs; ++i) {
      auto id = create_task(port, R"({"name":"crash-)" + std::to_string(i) + R"(","command":")" +
                                      command +
                                      R"(","retry":{"policy":"fixed","interval":"100ms","max_attempts":3}})");
      ASSERT_NE(id, 0);
      auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger");
      ASSERT_EQ(r.status, 201u) << r.body;
      auto v = parse(r);
      ids.push_back(str(v.at("instances").as_array().at(0).as_object(), "id"));
    }
    bool all_running = eventually(
        [&] {
          for (auto& id : ids)
            if (state_of(port, id) != "running") return false;
          return lines_of(pids).size() == runs;
        },
        30s);
    ASSERT_TRUE(all_running) << tail(node.log());
    EXPECT_EQ(node.stop(SIGKILL), SIGKILL);
  }
  kill_orphans(pids);

  node_process node(data);
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  bool all_final = eventually(
      [&] {
        for (auto& id : ids)
          if (!terminal(state_of(port, id))) return false;
        return true;
      },
      30s);
  kill_orphans(pids);  // a first attempt run again (the bug) sleeps too
  ASSERT_TRUE(all_final) << tail(node.log());

  for (auto& id : ids) {
    auto x = parse(http_call(port, "GET", "/api/v1/instances/" + id)).as_object();
    EXPECT_EQ(str(x, "state"), "success") << json::serialize(x);
    EXPECT_EQ(num(x, "attempt"), 2) << json::serialize(x);
    auto r = http_call(port, "GET", "/api/v1/instances/" + id + "/attempts");
    ASSERT_EQ(r.status, 200u) << r.body;
    auto v = parse(r);
    auto& history = v.at("attempts").as_array();
    ASSERT_EQ(history.size(), 2u) << r.body;
    auto& first = history[0].as_object();
    auto& second = history[1].as_object();
    EXPECT_EQ(num(first, "attempt"), 1) << r.body;
    EXPECT_EQ(str(first, "state"), "failed") << r.body;
    EXPECT_EQ(str(first, "error").rfind("worker_lost: ", 0), 0u) << r.body;
    EXPECT_FALSE(str(first, "worker_id").empty()) << r.body;
    EXPECT_NE(time_ms(first.at("dispatched_at")), -1) << r.body;
    EXPECT_EQ(num(second, "attempt"), 2) << r.body;
    EXPECT_EQ(str(second, "state"), "success") << r.body;
    EXPECT_NE(str(second, "output").find("attempt 2"), std::string::npos) << r.body;
  }

  // Exactly one execution per (instance, attempt): attempts 1 and 2 of each.
  std::map<std::string, int> seen;
  for (auto& line : lines_of(effects)) seen[line] += 1;
  for (auto& [line, n] : seen) EXPECT_EQ(n, 1) << "executed " << n << " times: " << line;
  EXPECT_EQ(seen.size(), 2u * runs);
  for (auto& id : ids) {
    EXPECT_EQ(seen.count(id + " 1"), 1u) << id;
    EXPECT_EQ(seen.count(id + " 2"), 1u) << id;
  }

  auto missing = http_call(port, "GET", "/api/v1/instances/999-0-0/attempts");
  EXPECT_EQ(missing.status, 404u) << missing.body;
}
