// A real single `aisched` node over HTTP: task CRUD, errors, and durability
// across SIGKILL and clean restarts.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <fstream>
#include <string>
#include <thread>
#include <vector>
#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const char* backup_task =
    R"({"name":"db-backup","kind":"shell","command":"echo backup","schedule":"0 3 * * *",
        "timezone":"Europe/Berlin","labels":{"zone":"eu"},"shards":2,"timeout":"10m",
        "retry":{"policy":"exponential","max_attempts":5,"initial":"1s","max":"10m",
                 "multiplier":2.0,"jitter":true},"overlap":"skip","misfire":"fire_once"})";

}  // namespace

TEST(node, task_survives_sigkill_restart) {
  temp_dir dir;
  auto data = dir.path() + "/data";
  int64_t id = 0;
  {
    node_process node(data);
    ASSERT_TRUE(node.running());
    auto created = http_call(node.http_port(), "POST", "/api/v1/tasks", backup_task);
    ASSERT_EQ(created.status, 201u) << created.body;
    auto v = parse(created);
    id = v.at("id").as_int64();
    EXPECT_GE(id, 1);
    EXPECT_EQ(v.at("version").as_int64(), 1);
    EXPECT_EQ(v.at("next_fire_times").as_array().size(), 5u);
    // SIGKILL: no clean shutdown, no flush. The committed task must survive.
    EXPECT_EQ(node.stop(SIGKILL), SIGKILL);  // status of a signalled child
  }
  node_process node(data);
  ASSERT_TRUE(node.running());
  auto got = http_call(node.http_port(), "GET", "/api/v1/tasks/" + std::to_string(id));
  ASSERT_EQ(got.status, 200u) << got.body;
  auto v = parse(got);
  EXPECT_EQ(v.at("name").as_string(), "db-backup");
  EXPECT_EQ(v.at("schedule").as_string(), "0 3 * * *");
  EXPECT_EQ(v.at("timezone").as_string(), "Europe/Berlin");
  EXPECT_EQ(v.at("shards").as_int64(), 2);
  EXPECT_EQ(v.at("retry").at("max_attempts").as_int64(), 5);
  // A new task after the restart gets a fresh id, never a reused one.
  auto second = http_call(node.http_port(), "POST", "/api/v1/tasks",
                          R"({"name":"second","kind":"noop"})");
  ASSERT_EQ(second.status, 201u) << second.body;
  EXPECT_EQ(parse(second).at("id").as_int64(), id + 1);
  int status = node.stop(SIGTERM);
  ASSERT_TRUE(WIFEXITED(status)) << node.log();
  EXPECT_EQ(WEXITSTATUS(status), 0) << node.log();
}

TEST(node, crud_and_errors_over_http) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  EXPECT_EQ(http_call(port, "GET", "/healthz").status, 200u);
  EXPECT_EQ(parse(http_call(port, "GET", "/api/v1/version")).at("node_id").as_string(), "n1");

  auto created = http_call(port, "POST", "/api/v1/tasks",
                           R"({"name":"a","command":"true","schedule":"@every 10s"})");
  ASSERT_EQ(created.status, 201u) << created.body;
  auto path = "/api/v1/tasks/" + std::to_string(parse(created).at("id").as_int64());

  // A partial update keeps the omitted fields; a stale version is a conflict.
  auto updated = http_call(port, "PATCH", path, R"({"timeout":"5m"})");
  ASSERT_EQ(updated.status, 200u) << updated.body;
  auto u = parse(updated);
  EXPECT_EQ(u.at("timeout").as_string(), "5m");
  EXPECT_EQ(u.at("schedule").as_string(), "@every 10s");
  EXPECT_EQ(u.at("version").as_int64(), 2);
  auto stale = http_call(port, "PATCH", path, R"({"version":1,"name":"b"})");
  EXPECT_EQ(stale.status, 409u) << stale.body;
  EXPECT_EQ(parse(http_call(port, "GET", path)).at("name").as_string(), "a");

  auto paused = http_call(port, "POST", path + "/pause");
  ASSERT_EQ(paused.status, 200u);
  EXPECT_TRUE(parse(paused).at("paused").as_bool());

  // Bad input: precise errors, nothing written.
  auto bad_cron = http_call(port, "POST", "/api/v1/tasks",
                            R"({"name":"x","command":"y","schedule":"0 25 * * *"})");
  EXPECT_EQ(bad_cron.status, 400u);
  EXPECT_EQ(parse(bad_cron).at("error").at("field").as_string(), "schedule");
  auto unknown = http_call(port, "POST", "/api/v1/tasks", R"({"name":"x","comand":"y"})");
  EXPECT_EQ(unknown.status, 400u);
  EXPECT_EQ(parse(unknown).at("error").at("field").as_string(), "comand");
  auto malformed = http_call(port, "POST", "/api/v1/tasks", R"({"name":)");
  EXPECT_EQ(malformed.status, 400u);
  EXPECT_EQ(parse(malformed).at("error").at("code").as_string(), "invalid_argument");
  auto huge = http_call(port, "POST", "/api/v1/tasks", std::string(2 << 20, 'x'));
  EXPECT_EQ(huge.status, 413u);
  EXPECT_EQ(http_call(port, "GET", "/api/v1/tasks/999").status, 404u);
  EXPECT_EQ(http_call(port, "GET", "/api/v1/tasks/abc").status, 400u);
  EXPECT_EQ(http_call(port, "GET", "/api/v1/nope").status, 404u);
  auto list = parse(http_call(port, "GET", "/api/v1/tasks"));
  EXPECT_EQ(list.at("items").as_array().size(), 1u);

  // A create retried with the same Idempotency-Key makes one task.
  const std::string doc = R"({"name":"once","command":"true","schedule":"@every 10s"})";
  auto first = http_call(port, "POST", "/api/v1/tasks", doc, 10s, {{"Idempotency-Key", "k-1"}});
  auto retry = http_call(port, "POST", "/api/v1/tasks", doc, 10s, {{"Idempotency-Key", "k-1"}});
  ASSERT_EQ(first.status, 201u) << first.body;
  ASSERT_EQ(retry.status, 201u) << retry.body;
  EXPECT_EQ(parse(first).at("id"), parse(retry).at("id"));
  auto other = http_call(port, "POST", "/api/v1/tasks", doc, 10s, {{"Idempotency-Key", "k-2"}});
  EXPECT_NE(parse(other).at("id"), parse(first).at("id"));
  auto bad_key = http_call(port, "POST", "/api/v1/tasks", doc, 10s,
                           {{"Idempotency-Key", std::string(200, 'k')}});
  EXPECT_EQ(bad_key.status, 400u) << bad_key.body;
  EXPECT_EQ(parse(http_call(port, "GET", "/api/v1/tasks")).at("items").as_array().size(), 3u);

  EXPECT_EQ(http_call(port, "DELETE", path).status, 204u);
  EXPECT_EQ(http_call(port, "GET", path).status, 404u);
  // The node is still healthy after all of that.
  EXPECT_EQ(http_call(port, "GET", "/healthz").status, 200u);
}

TEST(node, tasks_list_pages_through_everything) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  for (int i = 0; i < 12; ++i)
    ASSERT_EQ(http_call(port, "POST", "/api/v1/tasks",
                        R"({"name":"t)" + std::to_string(i) + R"(","kind":"noop"})")
                  .status,
              201u);
  std::vector<int64_t> ids;
  std::string cursor;
  for (int page = 0; page < 10; ++page) {
    auto v = parse(http_call(port, "GET", "/api/v1/tasks?limit=5&cursor=" + cursor));
    for (auto& t : v.at("items").as_array()) ids.push_back(t.at("id").as_int64());
    cursor = std::string(v.at("next_cursor").as_string());
    if (cursor.empty()) break;
  }
  ASSERT_EQ(ids.size(), 12u);
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], int64_t(i + 1));
}

// A member that never had a leader stops on SIGTERM. With --auth and an admin
// password, the admin's bootstrap proposal is retried until a leader commits
// it; its retry closure once held the node's whole API context (the raft,
// store and agent actors), so the process logged "stopped" and then waited
// for those actors forever.
TEST(node, a_member_that_never_had_a_leader_stops_on_sigterm) {
  temp_dir dir;
  auto secret = [&](const std::string& name, const std::string& content) {
    auto path = dir.path() + "/" + name;
    std::ofstream(path) << content << "\n";
    ::chmod(path.c_str(), 0600);
    return path;
  };
  std::vector<std::string> addrs;
  for (int i = 0; i < 3; ++i) addrs.push_back("127.0.0.1:" + std::to_string(free_port()));
  auto peers = "n1=" + addrs[0] + ",n2=" + addrs[1] + ",n3=" + addrs[2];
  node_process n1(dir.path() + "/n1",
                  {"--node-id", "n1", "--peers", peers, "--auth", "--auth-secret-file",
                   secret("auth", "shutdown-test-auth-secret-0123456789"),
                   "--admin-password-file", secret("admin", "admin-password-1"),
                   "--cluster-secret-file", secret("cluster", "shutdown-test-cluster-secret-0123")},
                  20s, addrs[0]);
  ASSERT_TRUE(n1.running()) << n1.log();
  std::this_thread::sleep_for(2500ms);  // the admin's bootstrap is retried (once a second)
  EXPECT_EQ(n1.stop(SIGTERM, 15s), 0) << "a member without a leader did not exit on SIGTERM\n"
                                       << n1.log();
}
