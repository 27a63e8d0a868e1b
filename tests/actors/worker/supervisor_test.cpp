// Tests for the run supervisor (actors/worker/supervisor, started by sandbox's
// spawn_supervised): it is a process of its own, not a copy of the node; the run's
// arguments and secrets never appear where /proc shows them to other users; a spec
// larger than a socket buffer arrives whole; a bad spec is refused, never run.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "actors/worker/sandbox.hpp"

namespace aisched::worker {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// VmRSS of `pid` in kB, -1 when unknown.
long rss_kb(pid_t pid) {
  std::istringstream in(slurp("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

/// Reads the run's output until it ends and its status until the exit (deadline 10 s).
struct finished {
  std::string output;
  std::vector<run_status> records;
};
finished wait_for(const supervised_run& run) {
  finished f;
  bool out_open = true, status_open = true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char buf[4096];
  auto exited = [&] {
    for (auto& r : f.records)
      if (r.kind == run_status::exited) return true;
    return !status_open;
  };
  while ((out_open || !exited()) && std::chrono::steady_clock::now() < deadline) {
    pollfd p[2] = {{out_open ? run.output_fd : -1, POLLIN, 0},
                   {status_open ? run.status_fd : -1, POLLIN, 0}};
    poll(p, 2, 50);
    if (p[0].revents) {
      auto n = read(run.output_fd, buf, sizeof buf);
      if (n > 0) f.output.append(buf, static_cast<size_t>(n));
      else out_open = false;
    }
    if (p[1].revents) status_open = read_status(run.status_fd, f.records);
  }
  return f;
}

void end(const supervised_run& run) {
  terminate_supervised(run);
  close(run.output_fd);
  close(run.status_fd);
}

spawn_spec spec_of(std::vector<std::string> argv, std::vector<std::string> env = {}) {
  spawn_spec s;
  s.supervisor = AISCHED_SUPERVISOR_PATH;
  s.argv = std::move(argv);
  s.env = std::move(env);
  s.dir = "/";
  return s;
}

TEST(supervisor, is_a_small_process_of_its_own_not_a_copy_of_the_node) {
  // A node holding a lot of memory: a fork of it would share (and count) all of it.
  constexpr size_t big = 256u << 20;
  std::vector<char> ballast(big);
  for (size_t i = 0; i < big; i += 4096) ballast[i] = static_cast<char>(i);
  ASSERT_GT(rss_kb(getpid()), 200 * 1024);
  supervised_run run;
  std::string error;
  ASSERT_TRUE(spawn_supervised(spec_of({"/bin/sleep", "5"}), run, error)) << error;
  // Its status line "started" comes once the run is about to exec.
  std::vector<run_status> records;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (records.empty() && std::chrono::steady_clock::now() < deadline) {
    pollfd p{run.status_fd, POLLIN, 0};
    poll(&p, 1, 50);
    read_status(run.status_fd, records);
  }
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records[0].kind, run_status::started);
  long sup = rss_kb(run.supervisor);
  EXPECT_GT(sup, 0);
  EXPECT_LT(sup, 32 * 1024) << "the supervisor carries the node's memory";
  auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(run.supervisor) + "/exe");
  EXPECT_EQ(exe.filename(), "aisched-supervisor");
  end(run);
}

TEST(supervisor, the_runs_arguments_and_secrets_are_not_in_its_cmdline_or_environment) {
  supervised_run run;
  std::string error;
  ASSERT_TRUE(spawn_supervised(
      spec_of({"/bin/sh", "-c", "echo $TOKEN; sleep 5", "arg-hunter2"}, {"TOKEN=hunter2"}), run,
      error))
      << error;
  std::string out;
  char buf[256];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (out.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{run.output_fd, POLLIN, 0};
    if (poll(&p, 1, 50) > 0) {
      auto n = read(run.output_fd, buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  EXPECT_EQ(out, "hunter2\n");  // the run got it
  auto proc = "/proc/" + std::to_string(run.supervisor);
  auto cmdline = slurp(proc + "/cmdline");
  EXPECT_EQ(cmdline, std::string("aisched-supervisor") + '\0' + "/" + '\0');
  EXPECT_EQ(slurp(proc + "/environ").find("hunter2"), std::string::npos);
  end(run);
}

TEST(supervisor, a_spec_larger_than_a_socket_buffer_arrives_whole) {
  // 1.5 MB of environment (exec takes at most 128 KiB per string, 2 MB in all).
  std::vector<std::string> env;
  for (int i = 0; i < 15; ++i) env.push_back("V" + std::to_string(i) + "=" + std::string(100'000, 'v'));
  supervised_run run;
  std::string error;
  ASSERT_TRUE(spawn_supervised(
      spec_of({"/bin/sh", "-c", "printf %s \"$V0$V7$V14\" | wc -c"}, env), run, error))
      << error;
  auto f = wait_for(run);
  end(run);
  EXPECT_EQ(f.output, "300000\n");
  ASSERT_EQ(f.records.size(), 2u);
  EXPECT_EQ(f.records[1].kind, run_status::exited);
  EXPECT_EQ(f.records[1].code, 0);
}

TEST(supervisor, a_missing_helper_is_an_error_naming_it_and_starts_nothing) {
  auto spec = spec_of({"/bin/true"});
  spec.supervisor = "/nonexistent/aisched-supervisor";
  supervised_run run;
  std::string error;
  EXPECT_FALSE(spawn_supervised(spec, run, error));
  EXPECT_NE(error.find("/nonexistent/aisched-supervisor"), std::string::npos) << error;
  spec.supervisor.clear();
  EXPECT_FALSE(spawn_supervised(spec, run, error));
  EXPECT_NE(error.find("aisched-supervisor"), std::string::npos) << error;
}

TEST(supervisor, is_found_beside_the_binary_or_in_libexec_and_nowhere_else) {
  namespace fs = std::filesystem;
  auto root = fs::temp_directory_path() / ("aisched-find-" + std::to_string(getpid()));
  fs::create_directories(root / "bin");
  fs::create_directories(root / "libexec/aisched");
  auto exe = (root / "bin/aisched").string();
  EXPECT_EQ(find_supervisor(exe), "");
  auto installed = root / "libexec/aisched/aisched-supervisor";
  fs::copy_file(AISCHED_SUPERVISOR_PATH, installed);
  EXPECT_EQ(find_supervisor(exe), fs::canonical(installed).string());
  auto beside = root / "bin/aisched-supervisor";  // a build tree: wins
  fs::copy_file(AISCHED_SUPERVISOR_PATH, beside);
  EXPECT_EQ(find_supervisor(exe), fs::canonical(beside).string());
  fs::remove(beside);
  fs::permissions(installed, fs::perms::owner_read);  // not executable: not taken
  EXPECT_EQ(find_supervisor(exe), "");
  fs::remove_all(root);
}

TEST(supervisor, a_garbled_spec_is_refused_and_nothing_runs) {
  // The helper started by hand, the way spawn_supervised does, with a bad spec.
  int status[2], sock[2];
  ASSERT_EQ(pipe(status), 0);
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sock), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(status[1], status_fd_no);
    dup2(sock[1], spec_fd_no);
    execl(AISCHED_SUPERVISOR_PATH, "aisched-supervisor", nullptr);
    _exit(99);
  }
  close(status[1]);
  close(sock[1]);
  const char bad[] = "aisched-spec-1\0" "1\0" "0\0";  // truncated
  ASSERT_EQ(write(sock[0], bad, sizeof bad - 1), static_cast<ssize_t>(sizeof bad - 1));
  close(sock[0]);
  run_status rec;
  ASSERT_EQ(read(status[0], &rec, sizeof rec), static_cast<ssize_t>(sizeof rec));
  close(status[0]);
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  EXPECT_EQ(rec.kind, run_status::setup_failed);
  EXPECT_EQ(rec.stage, stage_spec);
  EXPECT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 126);
  EXPECT_NE(describe_setup_failure(rec, nullptr).find("spec"), std::string::npos);
}

TEST(supervisor_spec, round_trips_and_rejects_what_is_not_a_whole_spec) {
  supervisor_spec s;
  s.node_pid = 4242;
  s.memory_bytes = 1u << 30;
  s.switch_user = true;
  s.uid = 65534;
  s.gid = 65534;
  s.groups = {65534, 100};
  s.namespaces = false;
  s.own_network = true;
  s.dir = "/tmp/run dir";
  s.argv = {"/bin/sh", "-c", "echo 'a b'", ""};
  s.env = {"A=1", "EMPTY="};
  supervisor_spec back;
  auto bytes = encode_spec(s);
  ASSERT_TRUE(parse_spec(bytes, back));
  EXPECT_EQ(back.node_pid, 4242);
  EXPECT_EQ(back.memory_bytes, 1u << 30);
  EXPECT_TRUE(back.switch_user);
  EXPECT_EQ(back.uid, 65534u);
  EXPECT_EQ(back.groups, s.groups);
  EXPECT_FALSE(back.namespaces);
  EXPECT_TRUE(back.own_network);
  EXPECT_EQ(back.dir, s.dir);
  EXPECT_EQ(back.argv, s.argv);
  EXPECT_EQ(back.env, s.env);
  s.switch_user = false;
  ASSERT_TRUE(parse_spec(encode_spec(s), back));
  EXPECT_FALSE(back.switch_user);
  // Every proper prefix is incomplete; so is a spec with a field too many.
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(parse_spec(std::string_view(bytes).substr(0, n), back)) << n;
  EXPECT_FALSE(parse_spec(bytes + std::string("x\0", 2), back));
  // A relative program, a count beyond the fields, a uid out of range.
  auto relative = s;
  relative.argv[0] = "sh";
  EXPECT_FALSE(parse_spec(encode_spec(relative), back));
  auto field = [](std::initializer_list<const char*> fields) {
    std::string out;
    for (auto f : fields) out.append(f).push_back('\0');
    return out;
  };
  EXPECT_TRUE(parse_spec(field({"aisched-spec-1", "7", "0", "-", "0", "0", "1", "host", "/", "1", "/bin/true",
                                "0"}),
                         back));
  EXPECT_FALSE(parse_spec(field({"aisched-spec-1", "7", "0", "-", "0", "0", "1", "host", "/", "9", "/bin/true",
                                 "0"}),
                          back));
  EXPECT_FALSE(parse_spec(field({"aisched-spec-1", "7", "0", "99999999999", "0", "0", "1", "host", "/", "1",
                                 "/bin/true", "0"}),
                          back));
  EXPECT_FALSE(parse_spec(field({"aisched-spec-2", "7", "0", "-", "0", "0", "1", "host", "/", "1", "/bin/true",
                                 "0"}),
                          back));
}

}  // namespace
}  // namespace aisched::worker
