// Tests for worker::execute_task with real processes and a loopback HTTP stub: exit codes,
// the minimal environment, the scratch directory, timeouts and cancellation killing
// every process of the run (with and without namespaces), the output tail cap, shell-injection safety of the identity fields,
// container without runtime, and noop (HTTP tasks: executor_http_test).
// Failure messages name the state instead of dumping its byte.
#include "actors/worker/executor_fixture.hpp"
#include "common/clock.hpp"

namespace aisched::worker {
namespace {

using namespace testing_support;

// -- shell: exit codes and output ----------------------------------------------------

TEST_F(executor_test, exit_zero_is_success_with_output) {
  auto before = system_now_ms();
  auto r = run(shell("echo hello; echo oops >&2"));
  EXPECT_EQ(r.state, instance_state::success);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.error, "");
  EXPECT_NE(r.output.find("hello\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("oops\n"), std::string::npos) << r.output;  // stderr too
  EXPECT_EQ(r.instance_id, "42-1700000000000-1");
  EXPECT_GE(r.started_at, before);
  EXPECT_GE(r.finished_at, r.started_at);
}

TEST_F(executor_test, nonzero_exit_is_failed_with_that_code) {
  auto r = run(shell("echo partial; exit 3"));
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.error, "exit status 3");
  EXPECT_EQ(r.output, "partial\n");
}

TEST_F(executor_test, missing_command_is_exit_127_command_not_found) {
  auto r = run(shell("aisched-no-such-command-xyz --flag"));
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.error.find("command not found"), std::string::npos) << r.error;
  EXPECT_NE(r.output.find("not found"), std::string::npos) << r.output;  // the shell's message
}

TEST_F(executor_test, killed_by_a_signal_is_128_plus_signal) {
  auto r = run(shell("kill -TERM $$; sleep 5"));
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM);
}

TEST_F(executor_test, stdin_is_empty) {
  auto r = run(shell("wc -c"));  // would block forever if stdin were a terminal or pipe
  EXPECT_EQ(r.state, instance_state::success);
  EXPECT_EQ(r.output, "0\n");
}

TEST_F(executor_test, memory_cap_stops_a_run_that_allocates_past_it) {
  // python3 asks for 256 MiB at once: refused under a 64 MiB cap, fine without one.
  const std::string grab = "/usr/bin/python3 -c 'b = bytearray(256 * 1024 * 1024); print(len(b))'";
  auto capped = shell(grab);
  capped.memory_mb = 64;
  auto r = run(capped);
  EXPECT_EQ(r.state, instance_state::failed) << r.output;
  EXPECT_NE(r.output.find("MemoryError"), std::string::npos) << r.output;
  auto free_run = run(shell(grab));
  EXPECT_EQ(free_run.state, instance_state::success) << free_run.output;
  EXPECT_NE(free_run.output.find("268435456"), std::string::npos) << free_run.output;
}

// -- environment and scratch directory -------------------------------------------------

TEST_F(executor_test, run_sees_only_the_documented_environment) {
  ASSERT_EQ(setenv("AISCHED_TEST_LEAK", "parent-secret", 1), 0);
  auto r = run(shell("env"));
  unsetenv("AISCHED_TEST_LEAK");
  ASSERT_EQ(r.state, instance_state::success) << r.error << r.output;
  std::map<std::string, std::string> env;
  for (auto& line : lines_of(r.output)) {
    auto eq = line.find('=');
    ASSERT_NE(eq, std::string::npos) << line;
    env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  EXPECT_EQ(env.count("AISCHED_TEST_LEAK"), 0u);
  EXPECT_EQ(r.output.find("parent-secret"), std::string::npos);
  std::set<std::string> names;
  for (auto& [k, v] : env) names.insert(k);
  // PWD is set and exported by dash itself, not inherited.
  EXPECT_EQ(names, (std::set<std::string>{"PATH", "HOME", "IDEMPOTENCY_KEY", "SHARD_NO",
                                          "SHARD_TOTAL", "SCHEDULE_INSTANCE_ID", "ATTEMPT",
                                          "TRACE_ID", "TASK_ID", "PWD"}));
  EXPECT_EQ(env["PATH"], "/usr/local/bin:/usr/bin:/bin");
  EXPECT_EQ(env["IDEMPOTENCY_KEY"], "idem-abc");
  EXPECT_EQ(env["SHARD_NO"], "1");
  EXPECT_EQ(env["SHARD_TOTAL"], "4");
  EXPECT_EQ(env["SCHEDULE_INSTANCE_ID"], "42-1700000000000-1");
  EXPECT_EQ(env["ATTEMPT"], "2");
  EXPECT_EQ(env["TRACE_ID"], "trace-xyz");
  EXPECT_EQ(env["TASK_ID"], "42");
  EXPECT_EQ(env["HOME"], env["PWD"]);
  EXPECT_EQ(fs::path(env["HOME"]).parent_path(), scratch_);
}

TEST_F(executor_test, runs_in_a_scratch_dir_that_is_removed_afterwards) {
  auto r = run(shell("pwd -P; echo \"$HOME\"; echo data > made-here; ls"));
  ASSERT_EQ(r.state, instance_state::success) << r.error << r.output;
  auto lines = lines_of(r.output);
  ASSERT_EQ(lines.size(), 3u) << r.output;
  fs::path cwd = lines[0];
  EXPECT_EQ(cwd.parent_path(), scratch_);
  EXPECT_EQ(lines[1], cwd.string());  // HOME is the scratch dir
  EXPECT_EQ(lines[2], "made-here");   // it started empty
  EXPECT_FALSE(fs::exists(cwd));
  EXPECT_TRUE(fs::is_empty(scratch_));
}

TEST_F(executor_test, scratch_dir_is_removed_after_a_failed_run) {
  auto r = run(shell("pwd -P; mkdir -p a/b/c && touch a/b/c/f; exit 9"));
  EXPECT_EQ(r.exit_code, 9);
  auto lines = lines_of(r.output);
  ASSERT_FALSE(lines.empty());
  EXPECT_FALSE(fs::exists(lines[0]));
  EXPECT_TRUE(fs::is_empty(scratch_));
}

TEST_F(executor_test, scratch_dir_stays_below_the_root_for_any_instance_id) {
  for (std::string id : {"../escaped", "nested/dir"}) {
    auto req = shell("pwd -P");
    req.instance_id = id;
    auto r = run(req);
    ASSERT_EQ(r.state, instance_state::success) << id << ": " << r.error;
    auto cwd = fs::path(lines_of(r.output).at(0));
    EXPECT_EQ(cwd.parent_path(), scratch_) << id << " ran in " << cwd;
    EXPECT_TRUE(fs::is_empty(scratch_)) << id << " left directories behind";
    EXPECT_FALSE(fs::exists(tmp_.path() / "escaped-2")) << id;
  }
}

TEST_F(executor_test, identity_fields_never_reach_a_shell) {
  auto marker = [&](int i) { return tmp_.path() / ("injected-" + std::to_string(i)); };
  auto req = shell("printf '%s\\n' \"$SCHEDULE_INSTANCE_ID\" \"$TRACE_ID\" \"$IDEMPOTENCY_KEY\"");
  req.instance_id = "inst$(touch " + marker(1).string() + ")";
  req.trace_id = "t; touch " + marker(2).string() + "; echo";
  req.idempotency_key = "`touch " + marker(3).string() + "` && touch " + marker(4).string();
  req.http.url = "$(touch " + marker(5).string() + ")";
  req.image = "; touch " + marker(6).string();
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error << r.output;
  // The values arrive verbatim, as data.
  EXPECT_EQ(lines_of(r.output),
            (std::vector<std::string>{req.instance_id, req.trace_id, req.idempotency_key}));
  for (int i = 1; i <= 6; ++i) EXPECT_FALSE(fs::exists(marker(i))) << marker(i);
  // The '/' in the hostile id nests directories below the scratch root; clean those up
  // here (see scratch_dir_stays_below_the_root_for_any_instance_id).
  std::error_code ec;
  for (auto& e : fs::directory_iterator(scratch_, ec)) fs::remove_all(e.path(), ec);
}

// -- timeout and cancellation ----------------------------------------------------------

/// A command that leaves processes carrying `arg` behind in every way a shell can:
/// a background child, an orphan of an exited subshell, a setsid'd one (own session
/// and process group) and a double-forked setsid'd one; then it waits.
std::string escaping_children(const std::string& arg) {
  return "sh -c 'sleep " + arg + " &'; sleep " + arg + " & setsid sleep " + arg +
         " & (setsid sh -c 'sleep " + arg + " & exit' &); echo started; sleep " + arg + "; wait";
}

TEST_F(executor_test, timeout_kills_every_process_of_the_run) {
  auto arg = unique_sleep_arg();
  auto req = shell(escaping_children(arg));
  req.timeout = 500;
  auto start = steady::now();
  auto r = run(req);
  auto took = steady::now() - start;
  EXPECT_EQ(r.state, instance_state::timed_out);
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_EQ(r.error, "timed out after 500ms");
  EXPECT_EQ(r.output, "started\n");
  EXPECT_GE(ms(took), 450);
  EXPECT_LT(ms(took), 5000);
  EXPECT_TRUE(wait_marker_gone(arg)) << "processes of the run survived its timeout";
}

TEST_F(executor_test, processes_left_behind_die_with_a_run_that_succeeded) {
  auto arg = unique_sleep_arg();
  auto r = run(shell("setsid sleep " + arg + " >/dev/null 2>&1 & (setsid sleep " + arg +
                     " >/dev/null 2>&1 &); echo done"));
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  EXPECT_EQ(r.output, "done\n");
  EXPECT_TRUE(wait_marker_gone(arg)) << "processes of the run survived its end";
}

// Without namespaces (a node that may not create them) the supervisor is a subreaper
// and hunts what it adopts: the same guarantees.
TEST_F(executor_test, without_namespaces_timeout_kills_every_process_of_the_run) {
  opts_.namespaces = false;
  auto arg = unique_sleep_arg();
  auto req = shell(escaping_children(arg));
  req.timeout = 500;
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::timed_out);
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_TRUE(wait_marker_gone(arg)) << "processes of the run survived its timeout";
}

TEST_F(executor_test, without_namespaces_cancel_and_the_end_kill_every_process) {
  opts_.namespaces = false;
  auto arg = unique_sleep_arg();
  auto start = steady::now();
  auto r = run(shell(escaping_children(arg)), [&] { return steady::now() >= start + 300ms; });
  EXPECT_EQ(r.error, "cancelled");
  EXPECT_TRUE(wait_marker_gone(arg)) << "processes of the run survived the cancel";
  arg = unique_sleep_arg();
  r = run(shell("setsid sleep " + arg + " >/dev/null 2>&1 & (setsid sleep " + arg +
                " >/dev/null 2>&1 &); echo done"));
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  EXPECT_TRUE(wait_marker_gone(arg)) << "processes of the run survived its end";
}

TEST_F(executor_test, timeout_applies_after_the_command_closes_its_output) {
  auto req = shell("exec >/dev/null 2>&1; sleep 3");
  req.timeout = 300;
  auto start = steady::now();
  auto r = run(req);
  auto took = steady::now() - start;
  EXPECT_EQ(r.state, instance_state::timed_out);
  EXPECT_LT(ms(took), 2000);
}

TEST_F(executor_test, cancel_kills_every_process_of_the_run_quickly) {
  auto arg = unique_sleep_arg();
  auto start = steady::now();
  auto cancel_at = start + 300ms;
  auto r = run(shell(escaping_children(arg)), [&] { return steady::now() >= cancel_at; });
  auto took = steady::now() - start;
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.error, "cancelled");
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_GE(ms(took), 300);
  EXPECT_LT(ms(took), 3000);
  EXPECT_TRUE(wait_marker_gone(arg)) << "processes of the run survived the cancel";
}

TEST_F(executor_test, cancel_after_the_command_closes_its_output) {
  auto start = steady::now();
  auto r =
      run(shell("exec >/dev/null 2>&1; sleep 3"), [&] { return steady::now() >= start + 200ms; });
  EXPECT_EQ(r.error, "cancelled");
  EXPECT_LT(ms(steady::now() - start), 2000);
}

// -- output -------------------------------------------------------------------------

std::string numbered_lines_command(int n) {
  return "i=0; while [ $i -lt " + std::to_string(n) +
         " ]; do printf 'line %05d 0123456789012345678901234567890123456789\\n' $i; "
         "i=$((i+1)); done";
}

std::string numbered_lines(int n) {
  std::string out;
  char buf[64];
  for (int i = 0; i < n; ++i) {
    snprintf(buf, sizeof buf, "line %05d 0123456789012345678901234567890123456789\n", i);
    out += buf;
  }
  return out;
}

TEST_F(executor_test, output_cap_keeps_the_last_bytes) {
  opts_.output_cap = 1024;
  const int n = 2000;  // 52 bytes a line: 104 000 bytes
  auto expected = numbered_lines(n);
  ASSERT_GT(expected.size(), 100'000u);
  std::string streamed;
  auto r = run(shell(numbered_lines_command(n)), never,
               [&](std::string_view chunk) { streamed.append(chunk); });
  ASSERT_EQ(r.state, instance_state::success) << r.error;
  ASSERT_EQ(r.output.size(), 1024u);
  EXPECT_EQ(r.output, expected.substr(expected.size() - 1024));
  EXPECT_EQ(r.output.substr(r.output.size() - 52),
            "line 01999 0123456789012345678901234567890123456789\n");
  EXPECT_EQ(streamed, expected);  // the output callback sees everything, uncapped
}

TEST_F(executor_test, output_below_the_cap_is_kept_whole) {
  opts_.output_cap = 1024;
  auto r = run(shell(numbered_lines_command(10)));
  EXPECT_EQ(r.output, numbered_lines(10));
}

// -- container and noop ------------------------------------------------------------

TEST_F(executor_test, container_without_runtime_fails_with_127) {
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"})
    for (const char* name : {"podman", "docker"}) {
      auto p = std::string(dir) + "/" + name;
      if (access(p.c_str(), X_OK) == 0) GTEST_SKIP() << "a container runtime exists: " << p;
    }
  auto req = shell("echo hi");
  req.kind = task_kind::container;
  req.image = "alpine:3";
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.error.find("docker or podman"), std::string::npos) << r.error;
  EXPECT_TRUE(fs::is_empty(scratch_));
}

TEST_F(executor_test, noop_succeeds_at_once_without_running_anything) {
  auto marker = tmp_.path() / "noop-ran";
  auto req = shell("touch " + quoted(marker));
  req.kind = task_kind::noop;
  auto start = steady::now();
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "");
  EXPECT_EQ(r.instance_id, "42-1700000000000-1");
  EXPECT_LT(ms(steady::now() - start), 500);
  EXPECT_FALSE(fs::exists(marker));
}

TEST(run_environment, lists_path_home_and_the_run_identity) {
  execute_request req;
  req.instance_id = "9-1000-3";
  req.task_id = 9;
  req.attempt = 1;
  req.shard = 3;
  req.shards = 8;
  req.idempotency_key = "k";
  req.trace_id = "t";
  EXPECT_EQ(run_environment(req, "/scratch/x"),
            (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/scratch/x",
                                      "IDEMPOTENCY_KEY=k", "SHARD_NO=3", "SHARD_TOTAL=8",
                                      "SCHEDULE_INSTANCE_ID=9-1000-3", "ATTEMPT=1", "TRACE_ID=t",
                                      "TASK_ID=9"}));
}

}  // namespace
}  // namespace aisched::worker
