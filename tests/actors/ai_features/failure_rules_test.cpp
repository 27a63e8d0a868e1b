// The failure rule engine names each common failure class from what a real run
// records (exit code, error text from the executor, output tail as shells and
// curl print it), and stays generic when nothing specific matches.
#include <gtest/gtest.h>

#include <algorithm>

#include "actors/ai_features/failure_rules.hpp"

using namespace aisched;
using namespace aisched::ai;

namespace {

failure_facts shell(int32_t code, std::string error, std::string output = "") {
  failure_facts f;
  f.instance_id = "7-1764471600000-0";
  f.kind = proto::task_kind::shell;
  f.state = proto::instance_state::failed;
  f.exit_code = code;
  f.error = std::move(error);
  f.output = std::move(output);
  return f;
}

failure_facts http(int32_t code, std::string error) {
  auto f = shell(code, std::move(error));
  f.kind = proto::task_kind::http;
  return f;
}

bool has(const proto::failure_analysis& a, const std::string& cat) {
  return std::find(a.categories.begin(), a.categories.end(), cat) != a.categories.end();
}

}  // namespace

TEST(failure_rules, exit_127_is_command_not_found_quoting_the_shell) {
  auto a = analyze_by_rules(shell(127, "exit status 127 (command not found)",
                                  "sh: 1: nonexistent_cmd: not found\n"));
  EXPECT_EQ(a.source, "rules");
  EXPECT_EQ(a.categories.front(), "command_not_found");
  EXPECT_EQ(a.severity, "high");
  EXPECT_NE(a.root_cause.find("nonexistent_cmd"), std::string::npos) << a.root_cause;
  EXPECT_GE(a.confidence, 0.9);
  EXPECT_FALSE(has(a, "nonzero_exit"));
}

TEST(failure_rules, bash_command_not_found_text_without_127) {
  auto a = analyze_by_rules(shell(1, "exit status 1", "bash: line 1: pg_dumpall: command not found"));
  EXPECT_EQ(a.categories.front(), "command_not_found");
}

TEST(failure_rules, exit_126_is_permission_denied) {
  auto a = analyze_by_rules(shell(126, "exit status 126 (cannot execute)",
                                  "sh: 1: /opt/jobs/backup.sh: Permission denied\n"));
  EXPECT_EQ(a.categories.front(), "permission_denied");
  EXPECT_NE(a.root_cause.find("backup.sh"), std::string::npos);
}

TEST(failure_rules, exit_137_without_cap_is_killed) {
  auto a = analyze_by_rules(shell(137, "exit status 137", "starting\n"));
  EXPECT_EQ(a.categories.front(), "killed");
  EXPECT_NE(a.summary.find("SIGKILL"), std::string::npos);
}

TEST(failure_rules, exit_137_under_a_memory_cap_is_out_of_memory) {
  auto f = shell(137, "exit status 137");
  f.memory_mb = 64;
  auto a = analyze_by_rules(f);
  EXPECT_EQ(a.categories.front(), "out_of_memory");
  EXPECT_TRUE(has(a, "killed"));
  EXPECT_NE(a.summary.find("64 MiB"), std::string::npos);
}

TEST(failure_rules, allocation_failure_text_is_out_of_memory) {
  auto a = analyze_by_rules(
      shell(1, "exit status 1", "Traceback (most recent call last):\n  ...\nMemoryError\n"));
  EXPECT_EQ(a.categories.front(), "out_of_memory");
  auto b = analyze_by_rules(shell(134, "exit status 134",
                                  "terminate called after throwing an instance of 'std::bad_alloc'"));
  EXPECT_EQ(b.categories.front(), "out_of_memory");
}

TEST(failure_rules, timed_out_state_is_timeout_with_the_limit) {
  auto f = shell(137, "timed out after 1s");
  f.state = proto::instance_state::timed_out;
  f.timeout = 1000;
  auto a = analyze_by_rules(f);
  EXPECT_EQ(a.categories.front(), "timeout");
  EXPECT_NE(a.summary.find("1s"), std::string::npos) << a.summary;
}

TEST(failure_rules, curl_connection_refused_http_task) {
  auto a = analyze_by_rules(http(-1, "Couldn't connect to server"));
  EXPECT_EQ(a.categories.front(), "connection_refused");
  auto b = analyze_by_rules(shell(7, "exit status 7",
                                  "curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: "
                                  "Connection refused\n"));
  EXPECT_EQ(b.categories.front(), "connection_refused");
  EXPECT_NE(b.root_cause.find("port 9"), std::string::npos);
}

TEST(failure_rules, dns_failure) {
  auto a = analyze_by_rules(http(-1, "Couldn't resolve host name"));
  EXPECT_EQ(a.categories.front(), "dns_failure");
  auto b = analyze_by_rules(
      shell(6, "exit status 6", "curl: (6) Could not resolve host: db.internal.example\n"));
  EXPECT_EQ(b.categories.front(), "dns_failure");
  EXPECT_NE(b.root_cause.find("db.internal.example"), std::string::npos);
}

TEST(failure_rules, http_5xx_and_4xx) {
  auto a = analyze_by_rules(http(503, "HTTP status 503"));
  EXPECT_EQ(a.categories.front(), "http_5xx");
  EXPECT_NE(a.summary.find("503"), std::string::npos);
  auto b = analyze_by_rules(shell(22, "exit status 22",
                                  "curl: (22) The requested URL returned error: 502\n"));
  EXPECT_EQ(b.categories.front(), "http_5xx");
  auto c = analyze_by_rules(http(404, "HTTP status 404"));
  EXPECT_EQ(c.categories.front(), "http_4xx");
  EXPECT_EQ(c.severity, "medium");
  auto d = analyze_by_rules(http(401, "HTTP status 401"));
  EXPECT_NE(d.root_cause.find("authorised"), std::string::npos);
}

TEST(failure_rules, tls_errors) {
  auto a = analyze_by_rules(http(-1, "SSL peer certificate or SSH remote key was not OK"));
  EXPECT_EQ(a.categories.front(), "tls_error");
  auto b = analyze_by_rules(shell(60, "exit status 60",
                                  "curl: (60) SSL certificate problem: certificate has expired\n"));
  EXPECT_EQ(b.categories.front(), "tls_error");
}

TEST(failure_rules, disk_full) {
  auto a = analyze_by_rules(shell(1, "exit status 1",
                                  "pg_dump: error: could not write to output file: No space left "
                                  "on device\n"));
  EXPECT_EQ(a.categories.front(), "disk_full");
  EXPECT_EQ(a.severity, "critical");
  EXPECT_NE(a.root_cause.find("pg_dump"), std::string::npos);
}

TEST(failure_rules, other_signals_and_generic_exit) {
  auto a = analyze_by_rules(shell(143, "exit status 143"));
  EXPECT_EQ(a.categories.front(), "signal");
  EXPECT_NE(a.root_cause.find("SIGTERM"), std::string::npos);
  auto b = analyze_by_rules(shell(3, "exit status 3", "ERROR: relation \"users\" does not exist\n"));
  EXPECT_EQ(b.categories, std::vector<std::string>{"nonzero_exit"});
  EXPECT_LT(b.confidence, 0.5);
  EXPECT_NE(b.root_cause.find("relation"), std::string::npos);
}

TEST(failure_rules, unknown_and_success) {
  auto a = analyze_by_rules(shell(0, ""));
  EXPECT_EQ(a.categories, std::vector<std::string>{"unknown"});
  auto f = shell(0, "");
  f.state = proto::instance_state::success;
  EXPECT_EQ(analyze_by_rules(f).categories, std::vector<std::string>{"none"});
}

TEST(failure_rules, facts_of_takes_the_task_cap_and_kind) {
  proto::instance x;
  x.id = "1-2-0";
  x.exit_code = 137;
  x.state = proto::instance_state::failed;
  proto::task t;
  t.kind = proto::task_kind::shell;
  t.memory_mb = 32;
  t.command = "python3 big.py";
  auto f = facts_of(x, &t);
  EXPECT_EQ(f.memory_mb, 32u);
  EXPECT_EQ(f.command, "python3 big.py");
  EXPECT_EQ(analyze_by_rules(f).categories.front(), "out_of_memory");
  EXPECT_EQ(analyze_by_rules(facts_of(x, nullptr)).categories.front(), "killed");
}
