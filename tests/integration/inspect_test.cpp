// aisched-inspect against real nodes: a scheduler node (all roles) lists the
// actors of DESIGN §2 with their own state (raft leads in term >= 1, the
// trigger has the task just created armed, the router knows the built-in
// worker); a worker node answers on its own cluster port; --watch stops after
// --count rounds; a port with no aisched behind it exits 1 within the timeout.
// Every process is started by the harness in tests/support/ and killed by pid;
// all waiting is polling with deadlines.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

const char* const cluster_listening = R"re("msg":"cluster listening","addr":"127\.0\.0\.1:(\d+)")re";

/// The cluster port a node logged; 0 until it has.
uint16_t cluster_port_in(const std::string& log) {
  std::smatch m;
  static const std::regex re(cluster_listening);
  return std::regex_search(log, m, re) ? static_cast<uint16_t>(std::stoi(m[1])) : 0;
}

command_result inspect(uint16_t port, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{AISCHED_INSPECT_BINARY, "--node",
                                "127.0.0.1:" + std::to_string(port)};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_command(args, 20s);
}

/// The actors of a `-o json` answer by name (empty when it is not one).
std::map<std::string, json::object> actors_of(const command_result& r) {
  std::map<std::string, json::object> out;
  json::error_code ec;
  auto v = json::parse(r.out, ec);
  if (ec || !v.is_object()) return out;
  for (auto& a : v.as_object().at("actors").as_array())
    out[str(a.as_object(), "name")] = a.as_object();
  return out;
}

std::string detail(const json::object& actor, const char* key) {
  return str(actor.at("details").as_object(), key);
}

}  // namespace

TEST(inspect, lists_the_actors_of_a_scheduler_node_with_their_state) {
  temp_dir dir;
  node_process node(dir.path() + "/n1");
  ASSERT_TRUE(node.running());
  uint16_t port = 0;
  ASSERT_TRUE(eventually([&] { return (port = cluster_port_in(node.log())) != 0; }))
      << tail(node.log());
  auto created = http_call(node.http_port(), "POST", "/api/v1/tasks",
                           R"({"name":"hourly","kind":"shell","command":"true",)"
                           R"("schedule":"@every 1h"})");
  ASSERT_EQ(created.status, 201u) << created.body;

  // The trigger learns of the task once it is committed: poll until it shows.
  command_result r;
  std::map<std::string, json::object> actors;
  ASSERT_TRUE(eventually([&] {
    r = inspect(port, {"-o", "json"});
    actors = actors_of(r);
    return r.exit_code == 0 && actors.count("trigger") && detail(actors["trigger"], "tasks") == "1";
  })) << "exit " << r.exit_code << "\n" << r.out << r.err;

  // Every actor of DESIGN §2 a node with all roles runs, plus the observability ones.
  for (auto name : {"inspector", "raft", "store", "trigger", "retry", "router", "backpressure",
                    "worker", "endpoint", "llm_agent", "analysis", "alerter", "load_sampler"}) {
    ASSERT_EQ(actors.count(name), 1u) << name << " missing:\n" << r.out;
    auto& a = actors[name];
    EXPECT_TRUE(a.at("responsive").as_bool()) << name << ": " << str(a, "error");
    EXPECT_GE(num(a, "handled"), 1) << name;
    EXPECT_GE(num(a, "mailbox"), 0) << name;
  }
  EXPECT_EQ(detail(actors["llm_agent"], "model"), "none") << "no LLM is configured here";
  auto& raft = actors["raft"];
  EXPECT_EQ(detail(raft, "role"), "leader");
  EXPECT_GE(std::stoll(detail(raft, "term")), 1);
  EXPECT_GE(std::stoll(detail(raft, "commit_index")), 2);  // at least the task's create
  auto& trigger = actors["trigger"];
  EXPECT_EQ(detail(trigger, "leading"), "true");
  EXPECT_EQ(detail(trigger, "armed"), "1");
  EXPECT_NE(rfc3339_ms(detail(trigger, "next_due")), -1) << detail(trigger, "next_due");
  auto& router = actors["router"];
  EXPECT_EQ(detail(router, "worker.n1").rfind("online", 0), 0u) << detail(router, "worker.n1");
  EXPECT_EQ(detail(router, "queue"), "0");
  EXPECT_FALSE(detail(actors["backpressure"], "level").empty());

  // The table form: a header line, then one row per actor.
  auto table = inspect(port);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("NAME"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("role=leader"), std::string::npos) << table.out;
}

TEST(inspect, watch_shows_count_rounds_then_exits_0) {
  temp_dir dir;
  node_process node(dir.path() + "/n1");
  ASSERT_TRUE(node.running());
  uint16_t port = 0;
  ASSERT_TRUE(eventually([&] { return (port = cluster_port_in(node.log())) != 0; }));
  auto r = inspect(port, {"-o", "json", "--watch", "--interval", "100ms", "--count", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  int rounds = 0;
  while (std::getline(lines, line)) {
    json::error_code ec;
    auto v = json::parse(line, ec);
    ASSERT_FALSE(ec) << line;
    EXPECT_EQ(str(v.as_object(), "node_id"), "n1");
    ++rounds;
  }
  EXPECT_EQ(rounds, 3);
}

TEST(inspect, a_worker_node_answers_on_its_own_cluster_port) {
  temp_dir dir;
  node_process node(dir.path() + "/n1");
  ASSERT_TRUE(node.running());
  uint16_t port = 0;
  ASSERT_TRUE(eventually([&] { return (port = cluster_port_in(node.log())) != 0; }));
  child_process worker({AISCHED_BINARY, "--node-id", "w1", "--roles", "worker", "--join",
                        "127.0.0.1:" + std::to_string(port), "--data-dir", dir.path() + "/w1"},
                       dir.path() + "/w1.log");
  auto wport = worker.await_log(cluster_listening);
  ASSERT_FALSE(wport.empty()) << worker.log();
  command_result r;
  std::map<std::string, json::object> actors;
  ASSERT_TRUE(eventually([&] {
    r = inspect(static_cast<uint16_t>(std::stoi(wport)), {"-o", "json"});
    actors = actors_of(r);
    return r.exit_code == 0 && actors.count("worker") &&
           detail(actors["worker"], "connected") == "true";
  })) << "exit " << r.exit_code << "\n" << r.out << r.err;
  EXPECT_EQ(actors.count("endpoint"), 1u);
  EXPECT_EQ(actors.count("raft"), 0u) << "a worker node runs no raft";
  EXPECT_EQ(detail(actors["endpoint"], "scheduler"), "false");
}

TEST(inspect, a_port_without_aisched_exits_1_within_the_timeout) {
  // Nothing listening: refused at once.
  auto start = steady::now();
  auto refused = inspect(free_port(), {"--timeout", "2s"});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_NE(refused.err.find("cannot reach"), std::string::npos) << refused.err;

  // A listener that accepts and never speaks CAF: the connect times out.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  start = steady::now();
  auto silent = inspect(ntohs(addr.sin_port), {"--timeout", "1s"});
  ::close(fd);
  EXPECT_EQ(silent.exit_code, 1) << silent.out << silent.err;
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(inspect, usage_errors_exit_2) {
  EXPECT_EQ(run_command({AISCHED_INSPECT_BINARY}).exit_code, 2);
  EXPECT_EQ(run_command({AISCHED_INSPECT_BINARY, "--node", "nohost"}).exit_code, 2);
  EXPECT_EQ(run_command({AISCHED_INSPECT_BINARY, "--node", "127.0.0.1:1", "--timeout", "soon"})
                .exit_code,
            2);
  EXPECT_EQ(run_command({AISCHED_INSPECT_BINARY, "--help"}).exit_code, 0);
}
