// Tests for the isolation of shell runs (worker::execute_task through
// actors/worker/sandbox): the descriptors a run sees, the user it runs as, its
// scratch directory, a setup failure that must never fall back to the node's user,
// event values that arrive as data. Processes escaping the run: executor_test.
#include "actors/worker/executor_fixture.hpp"

#include <fcntl.h>
#include <sys/stat.h>

namespace aisched::worker {
namespace {

using namespace testing_support;

/// Lists the shell's open descriptors below 1024 with builtins only: `ls` would open a
/// directory, a pipeline or a redirection would hold descriptors in the shell.
const std::string open_fds_command =
    "fd=0; while [ $fd -lt 1024 ]; do [ -e /proc/self/fd/$fd ] && printf '%s ' $fd; "
    "fd=$((fd+1)); done";

class executor_isolation_test : public executor_test {
 protected:
  /// Sets the run user to `nobody`; false (the test skips) unless we are root.
  bool as_nobody() {
    if (geteuid() != 0) return false;
    auto why = resolve_run_user("nobody", opts_.user);
    EXPECT_EQ(why, "");
    // The scratch root as the node prepares it: reachable, not listable.
    EXPECT_EQ(chmod(tmp_.path().c_str(), 0711), 0);
    EXPECT_EQ(prepare_scratch_root(scratch_.string()), "");
    return why.empty();
  }
};

TEST_F(executor_isolation_test, run_sees_only_stdin_stdout_and_stderr) {
  // Descriptors of the parent without close-on-exec, as libraries open them: a file
  // and a listening socket (the gateway's, in the node).
  int file = open("/dev/null", O_RDONLY);
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(file, 0);
  ASSERT_GE(sock, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(sock, 4), 0);
  auto r = run(shell(open_fds_command));
  close(file);
  close(sock);
  ASSERT_EQ(r.state, instance_state::success) << r.error << r.output;
  EXPECT_EQ(r.output, "0 1 2 ");
}

TEST_F(executor_isolation_test, run_executes_as_the_run_user_in_its_own_directory) {
  if (!as_nobody()) GTEST_SKIP() << "needs root";
  auto r = run(shell("id -u; id -g; id -G; stat -c '%U %a' \"$HOME\"; touch \"$HOME/x\" && "
                     "echo wrote; pwd -P"));
  ASSERT_EQ(r.state, instance_state::success) << r.error << r.output;
  auto lines = lines_of(r.output);
  ASSERT_EQ(lines.size(), 6u) << r.output;
  EXPECT_EQ(lines[0], std::to_string(opts_.user.uid));
  EXPECT_EQ(lines[1], std::to_string(opts_.user.gid));
  EXPECT_EQ(lines[2].find(" 0"), std::string::npos) << "kept root's groups: " << lines[2];
  EXPECT_NE(lines[0], "0");
  EXPECT_EQ(lines[3], "nobody 700");
  EXPECT_EQ(lines[4], "wrote");
  EXPECT_EQ(fs::path(lines[5]).parent_path(), scratch_);
  EXPECT_TRUE(fs::is_empty(scratch_)) << "the run's directory was not removed";
}

TEST_F(executor_isolation_test, run_cannot_signal_or_read_the_node) {
  if (!as_nobody()) GTEST_SKIP() << "needs root";
  auto node = std::to_string(getpid());
  // In its own pid namespace the node is not even visible; as another user it could
  // not be read or signalled anyway.
  auto r = run(shell("cat /proc/" + node + "/environ >/dev/null 2>&1 && echo read-environ; "
                     "kill -0 " + node + " 2>/dev/null && echo can-signal; echo end"));
  ASSERT_EQ(r.state, instance_state::success) << r.error << r.output;
  EXPECT_EQ(r.output, "end\n");
}

TEST_F(executor_isolation_test, setup_failure_fails_the_run_and_never_runs_as_root) {
  if (!as_nobody()) GTEST_SKIP() << "needs root";
  // A scratch root the run user cannot enter: the run must fail before exec, with
  // an error saying why, instead of running anyway (as root, or elsewhere).
  ASSERT_EQ(chmod(scratch_.c_str(), 0700), 0);
  auto marker = tmp_.path() / "ran";
  auto r = run(shell("touch " + quoted(marker)));
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.error, "cannot enter the scratch dir as nobody: Permission denied");
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(executor_isolation_test, event_values_reach_the_run_as_data) {
  auto marker = tmp_.path() / "injected";
  auto req = shell("printf '%s\\n' \"$AISCHED_EVENT_PAYLOAD_MSG\"");
  req.env["AISCHED_EVENT_PAYLOAD_MSG"] = "$(touch " + marker.string() + ") `id` '\"";
  req.env["PATH"] = "/nowhere";  // not an event value: ignored
  auto r = run(req);
  ASSERT_EQ(r.state, instance_state::success) << r.error << r.output;
  EXPECT_EQ(r.output, req.env["AISCHED_EVENT_PAYLOAD_MSG"] + "\n");
  EXPECT_FALSE(fs::exists(marker));
}

}  // namespace
}  // namespace aisched::worker
