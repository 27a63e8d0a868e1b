// Run isolation: run user, scratch directories, starting the supervisor; see
// sandbox.hpp. What the supervisor does is in supervisor.cpp.
#include "actors/worker/sandbox.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>

namespace aisched::worker {

namespace {

/// Moves `fd` to a number >= 10 (close-on-exec), so that the helper's dup2s onto
/// 0-4 never overwrite one another's source; -1 stays -1.
int dup_high(int fd) {
  if (fd < 0 || fd >= 10) return fd;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  return high;
}

}  // namespace

std::string resolve_run_user(const std::string& name, run_user& out) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
  if (!found && !name.empty() && name.find_first_not_of("0123456789") == std::string::npos)
    getpwuid_r(static_cast<uid_t>(std::stoul(name)), &pw, buf.data(), buf.size(), &found);
  if (!found) return "--run-as: no user '" + name + "' on this host";
  out.keep = false;
  out.name = found->pw_name;
  out.uid = found->pw_uid;
  out.gid = found->pw_gid;
  int n = 64;
  out.groups.assign(static_cast<size_t>(n), 0);
  if (getgrouplist(found->pw_name, found->pw_gid, out.groups.data(), &n) < 0) {
    out.groups.assign(static_cast<size_t>(n), 0);
    getgrouplist(found->pw_name, found->pw_gid, out.groups.data(), &n);
  }
  out.groups.resize(static_cast<size_t>(std::max(n, 0)));
  if (out.groups.empty()) out.groups.push_back(out.gid);
  return "";
}

std::string prepare_scratch_root(const std::string& path) {
  if (mkdir(path.c_str(), 0711) != 0 && errno != EEXIST)
    return "scratch dir " + path + ": " + strerror(errno);
  struct stat st{};
  if (lstat(path.c_str(), &st) != 0) return "scratch dir " + path + ": " + strerror(errno);
  // Someone else's directory (or a symlink planted in /tmp) would let them into every run.
  if (!S_ISDIR(st.st_mode)) return "scratch dir " + path + ": not a directory";
  if (st.st_uid != geteuid())
    return "scratch dir " + path + ": owned by uid " + std::to_string(st.st_uid) +
           ", not by this node's user";
  if (chmod(path.c_str(), 0711) != 0) return "scratch dir " + path + ": " + strerror(errno);
  return "";
}

std::string make_run_dir(const std::string& root, const std::string& name, const run_user& user,
                         std::string& error) {
  std::error_code ec;
  std::filesystem::create_directories(root, ec);  // normally prepare_scratch_root made it
  std::string tmpl = root + "/" + name + "-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {  // mode 0700
    error = "cannot create scratch dir: " + std::string(strerror(errno));
    return "";
  }
  if (!user.keep && chown(tmpl.c_str(), user.uid, user.gid) != 0) {
    error = "cannot hand the scratch dir to user " + user.name + ": " + strerror(errno);
    rmdir(tmpl.c_str());
    return "";
  }
  return tmpl;
}

std::string find_supervisor(const std::string& exe) {
  auto dir = std::filesystem::path(exe).parent_path();
  for (auto candidate : {dir / "aisched-supervisor", dir / "../libexec/aisched/aisched-supervisor"}) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0)
      return std::filesystem::weakly_canonical(candidate, ec).string();
  }
  return "";
}

bool spawn_supervised(const spawn_spec& spec, supervised_run& out, std::string& error) {
  if (spec.supervisor.empty()) {
    error = "no aisched-supervisor to start the run with";
    return false;
  }
  supervisor_spec s;
  s.node_pid = getpid();
  s.memory_bytes = spec.memory_bytes;
  s.switch_user = spec.user && !spec.user->keep;
  if (s.switch_user) {
    s.uid = spec.user->uid;
    s.gid = spec.user->gid;
    s.groups = spec.user->groups;
  }
  s.namespaces = spec.namespaces;
  s.own_network = spec.own_network;
  s.dir = spec.dir;
  s.argv = spec.argv;
  s.env = spec.env;
  const std::string bytes = encode_spec(s);
  // Every descriptor is created close-on-exec: a run started by another thread at the
  // same moment inherits none of them. posix_spawn's dup2s clear the flag on 0-4.
  int out_pipe[2] = {-1, -1}, status_pipe[2] = {-1, -1}, spec_sock[2] = {-1, -1};
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  auto close_all = [&] {
    for (int fd : {out_pipe[0], out_pipe[1], status_pipe[0], status_pipe[1], spec_sock[0],
                   spec_sock[1], devnull})
      if (fd >= 0) close(fd);
  };
  bool made = devnull >= 0 && pipe2(out_pipe, O_CLOEXEC) == 0 &&
              pipe2(status_pipe, O_CLOEXEC) == 0 &&
              socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, spec_sock) == 0;
  for (int* fd : {&devnull, &out_pipe[1], &status_pipe[1], &spec_sock[1]}) *fd = dup_high(*fd);
  if (!made || devnull < 0 || out_pipe[1] < 0 || status_pipe[1] < 0 || spec_sock[1] < 0) {
    error = std::string("descriptors: ") + strerror(errno);
    close_all();
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, devnull, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 2);
  posix_spawn_file_actions_adddup2(&actions, status_pipe[1], status_fd_no);
  posix_spawn_file_actions_adddup2(&actions, spec_sock[1], spec_fd_no);
  posix_spawn_file_actions_addclosefrom_np(&actions, spec_fd_no + 1);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);  // the node ignores SIGPIPE, blocks SIGTERM
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  // Its command line names the run's directory, so `ps` tells whose supervisor it is;
  // the run's arguments and environment are in the spec alone.
  char* argv[] = {const_cast<char*>("aisched-supervisor"), const_cast<char*>(spec.dir.c_str()),
                  nullptr};
  char* envp[] = {nullptr};  // the run's environment travels in the spec
  pid_t pid = -1;
  int rc = posix_spawn(&pid, spec.supervisor.c_str(), &actions, &attr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    error = "cannot start " + spec.supervisor + ": " + strerror(rc);
    close_all();
    return false;
  }
  for (int* fd : {&devnull, &out_pipe[1], &status_pipe[1], &spec_sock[1]}) {
    close(*fd);
    *fd = -1;
  }
  // The helper reads while we write, so a spec larger than the socket buffer passes.
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(spec_sock[0], bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) sent += static_cast<size_t>(n);
    else if (n < 0 && errno != EINTR) break;
  }
  if (sent < bytes.size()) {
    error = std::string("cannot hand the run to its supervisor: ") + strerror(errno);
    kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    close_all();
    return false;
  }
  close(spec_sock[0]);  // end of the spec
  fcntl(status_pipe[0], F_SETFL, O_NONBLOCK);
  out.supervisor = pid;
  out.output_fd = out_pipe[0];
  out.status_fd = status_pipe[0];
  return true;
}

bool read_status(int fd, std::vector<run_status>& out) {
  run_status buf[16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      for (size_t i = 0; i < static_cast<size_t>(n) / sizeof(run_status); ++i) out.push_back(buf[i]);
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN: nothing more for now
  }
}

std::string describe_setup_failure(const run_status& s, const run_user* user) {
  std::string who = user && !user->keep ? user->name : "the node's user";
  std::string why = strerror(s.err);
  switch (s.stage) {
    case stage_rlimit: return "cannot set the memory limit: " + why;
    case stage_setgroups: return "cannot switch to user " + who + " (setgroups): " + why;
    case stage_setgid: return "cannot switch to user " + who + " (setgid): " + why;
    case stage_setuid: return "cannot switch to user " + who + " (setuid): " + why;
    case stage_chdir: return "cannot enter the scratch dir as " + who + ": " + why;
    case stage_exec: return "cannot execute the command: " + why;
    case stage_fork: return "cannot start the run: " + why;
    case stage_namespace: return "cannot set up the run's namespace: " + why;
    case stage_spec: return "the supervisor got no valid run spec: " + why;
    case stage_network:
      return "cannot give the run a network of its own (--run-network none): " + why;
  }
  return "run setup failed: " + why;
}

int terminate_supervised(const supervised_run& run, int grace_ms) {
  int status = 0;
  kill(run.supervisor, SIGTERM);
  // It normally exits within a fraction of a millisecond: look again soon at first,
  // then every 5 ms, so the end of a short run is not delayed by the poll itself.
  long waited_us = 0, step_us = 50;
  while (waited_us < grace_ms * 1000L) {
    if (waitpid(run.supervisor, &status, WNOHANG) == run.supervisor) return status;
    timespec ts{0, step_us * 1000};
    nanosleep(&ts, nullptr);
    waited_us += step_us;
    step_us = std::min(step_us * 2, 5'000L);
  }
  kill(run.supervisor, SIGKILL);
  while (waitpid(run.supervisor, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace aisched::worker
