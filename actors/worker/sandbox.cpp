// Run isolation: run user, scratch directories, the supervisor; see sandbox.hpp.
//
// Process tree of one run (namespaced case):
//   node thread --fork--> supervisor (node's pid namespace, root)
//                           |-- init  (pid 1 of a new pid+mount namespace, mounts /proc)
//                           `-- run   (the command, as the run user, in that namespace)
// Killing init makes the kernel kill everything in the namespace. Without namespaces
// the supervisor is a child subreaper and kills what it adopts. Between fork and exec
// only async-signal-safe calls are made: everything is prepared beforehand.
#include "actors/worker/sandbox.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

namespace aisched::worker {

namespace {

constexpr int status_fd_no = 3;  // the status pipe in the supervisor and the run

enum stage : int32_t {
  stage_rlimit = 1,
  stage_setgroups,
  stage_setgid,
  stage_setuid,
  stage_chdir,
  stage_exec,
  stage_fork,
  stage_namespace,
};

/// Everything the forked processes use, as plain pointers into memory of the caller.
struct prepared {
  char* const* argv;
  char* const* envp;
  const char* dir;
  uint64_t memory_bytes;
  const run_user* user;  // nullptr or keep: no switch
  pid_t node_pid;
  int devnull, out_w, status_w;  // all >= 10
  bool namespaces;
};

void put_status(int fd, const run_status& s) {
  // One record is far below PIPE_BUF: written atomically, never interleaved.
  ssize_t n;
  do n = write(fd, &s, sizeof s);
  while (n < 0 && errno == EINTR);
}

[[noreturn]] void fail_setup(int32_t stage, int err, int exit_code) {
  run_status s;
  s.kind = run_status::setup_failed;
  s.stage = stage;
  s.err = err;
  put_status(status_fd_no, s);
  _exit(exit_code);
}

struct linux_dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

/// Closes every descriptor >= `lowest`: close_range(2), else the list in
/// /proc/self/fd (raw getdents64, no allocation), else up to RLIMIT_NOFILE.
void close_from(int lowest) {
  if (syscall(SYS_close_range, static_cast<unsigned>(lowest), ~0U, 0U) == 0) return;
  int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    alignas(8) char buf[4096];
    for (;;) {
      long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<linux_dirent64*>(buf + off);
        off += d->d_reclen;
        int fd = 0;
        bool digits = d->d_name[0] != '\0';
        for (const char* c = d->d_name; *c; ++c) {
          if (*c < '0' || *c > '9') digits = false;
          else fd = fd * 10 + (*c - '0');
        }
        if (digits && fd >= lowest && fd != dir) close(fd);
      }
    }
    close(dir);
    return;
  }
  rlimit lim{};
  long top = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
                 ? static_cast<long>(lim.rlim_cur)
                 : 65536;
  for (long fd = lowest; fd < top; ++fd) close(static_cast<int>(fd));
}

/// The run itself: default signals, own process group, limits, credentials, exec.
[[noreturn]] void exec_run(const prepared& p) {
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);  // the node ignores some
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  setpgid(0, 0);
  if (p.memory_bytes != 0) {
    // The run's memory cap: its address space, inherited by what it starts.
    rlimit limit{p.memory_bytes, p.memory_bytes};
    if (setrlimit(RLIMIT_AS, &limit) != 0) fail_setup(stage_rlimit, errno, 126);
  }
  if (p.user && !p.user->keep) {
    // Groups first, uid last: once the uid is dropped nothing else may change.
    if (setgroups(p.user->groups.size(), p.user->groups.data()) != 0)
      fail_setup(stage_setgroups, errno, 126);
    if (setresgid(p.user->gid, p.user->gid, p.user->gid) != 0) fail_setup(stage_setgid, errno, 126);
    if (setresuid(p.user->uid, p.user->uid, p.user->uid) != 0) fail_setup(stage_setuid, errno, 126);
    if (getuid() != p.user->uid || geteuid() != p.user->uid) fail_setup(stage_setuid, EPERM, 126);
  }
  if (chdir(p.dir) != 0) fail_setup(stage_chdir, errno, 126);
  close_from(status_fd_no + 1);
  fcntl(status_fd_no, F_SETFD, FD_CLOEXEC);  // gone at exec: the run sees 0, 1, 2 only
  execve(p.argv[0], p.argv, p.envp);
  fail_setup(stage_exec, errno, errno == ENOENT ? 127 : 126);
}

/// Pid 1 of the run's namespace: mounts its /proc, then reaps orphans until killed.
[[noreturn]] void run_init(int alive_r, int alive_w, int ready_r, int ready_w, bool mount_ns) {
  close(alive_w);
  close(ready_r);
  // The supervisor's death (it is killed, or the node is) kills the namespace.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  pollfd alive{alive_r, POLLIN, 0};
  if (poll(&alive, 1, 0) > 0 && (alive.revents & (POLLHUP | POLLERR))) _exit(0);
  if (mount_ns) {
    // Private propagation first, or the new /proc would be mounted on the host too.
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0)
      mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
  }
  dup2(0, 1);
  dup2(0, 2);
  close(status_fd_no);
  char c = 'r';
  (void)!write(ready_w, &c, 1);
  close(ready_w);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  for (;;) {
    sigwaitinfo(&chld, nullptr);
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
}

/// Without a namespace: SIGKILLs the children of this (subreaper) process as /proc
/// lists them. Orphans of the killed ones are reparented here and caught next round.
void kill_children_by_proc() {
  int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  pid_t me = getpid();
  alignas(8) char buf[4096];
  for (;;) {
    long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<linux_dirent64*>(buf + off);
      off += d->d_reclen;
      pid_t pid = 0;
      bool digits = d->d_name[0] != '\0';
      for (const char* c = d->d_name; *c; ++c) {
        if (*c < '0' || *c > '9') digits = false;
        else pid = pid * 10 + (*c - '0');
      }
      if (!digits) continue;
      char path[64] = "/proc/";
      size_t len = 6;
      for (const char* c = d->d_name; *c && len < 40; ++c) path[len++] = *c;
      memcpy(path + len, "/stat", 6);
      int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char stat[512];
      ssize_t got = read(fd, stat, sizeof stat - 1);
      close(fd);
      if (got <= 0) continue;
      stat[got] = '\0';
      // "pid (comm) state ppid ...": comm may hold anything, so scan from the last ')'.
      char* paren = strrchr(stat, ')');
      if (!paren || paren[1] != ' ' || paren[2] == '\0' || paren[3] != ' ') continue;
      pid_t ppid = 0;
      for (const char* c = paren + 4; *c >= '0' && *c <= '9'; ++c) ppid = ppid * 10 + (*c - '0');
      if (ppid == me) kill(pid, SIGKILL);
    }
  }
  close(dir);
}

/// Kills every process of the run and reaps them all; returns when none is left.
void kill_everything(pid_t init, pid_t run) {
  if (init > 0) kill(init, SIGKILL);  // the kernel kills the whole namespace
  for (;;) {
    if (init <= 0 && run > 0) {
      kill(-run, SIGKILL);
      kill_children_by_proc();
    }
    int st;
    if (waitpid(-1, &st, 0) < 0 && errno == ECHILD) return;
  }
}

/// The supervisor: descriptors, namespaces (or subreaper), the run, then it waits
/// for the run's exit (reported on the status pipe) and for SIGTERM (end of run,
/// timeout, cancel, or the node's death) to kill everything that is left.
[[noreturn]] void supervise(const prepared& p) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != p.node_pid) _exit(1);  // the node died before the line above
  dup2(p.devnull, 0);
  dup2(p.out_w, 1);
  dup2(p.out_w, 2);
  dup2(p.status_w, status_fd_no);
  close_from(status_fd_no + 1);  // the node's sockets, files, other runs' pipes
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);  // waited for synchronously below
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &dfl, nullptr);  // SIG_IGN would reap the run before we see it
  int mode = 2;                        // 2: pid + mount namespace, 1: pid only, 0: none
  if (!p.namespaces) mode = 0;
  else if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) mode = unshare(CLONE_NEWPID) == 0 ? 1 : 0;
  pid_t init = -1;
  int alive[2] = {-1, -1};
  if (mode > 0) {
    int ready[2];
    if (pipe2(alive, O_CLOEXEC) != 0 || pipe2(ready, O_CLOEXEC) != 0)
      fail_setup(stage_namespace, errno, 126);
    init = fork();
    if (init < 0) fail_setup(stage_namespace, errno, 126);
    if (init == 0) run_init(alive[0], alive[1], ready[0], ready[1], mode == 2);
    close(alive[0]);
    close(ready[1]);
    char c;
    ssize_t n;
    do n = read(ready[0], &c, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) fail_setup(stage_namespace, ECHILD, 126);
    close(ready[0]);
  } else {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
  run_status started;
  started.kind = run_status::started;
  started.code = mode;
  put_status(status_fd_no, started);
  pid_t run = fork();
  if (run < 0) {
    if (init > 0) kill_everything(init, -1);
    fail_setup(stage_fork, errno, 126);
  }
  if (run == 0) exec_run(p);
  dup2(0, 1);  // only the run holds the output pipe now: its end is the run's end
  dup2(0, 2);
  sigset_t wake;
  sigemptyset(&wake);
  sigaddset(&wake, SIGCHLD);
  sigaddset(&wake, SIGTERM);
  sigaddset(&wake, SIGINT);
  sigaddset(&wake, SIGHUP);
  bool run_done = false;
  for (;;) {
    timespec tick{0, 100'000'000};
    int sig = sigtimedwait(&wake, nullptr, &tick);
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) break;
    int st;
    pid_t w;
    while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
      if (w != run || run_done) continue;
      run_done = true;
      run_status exited;
      exited.kind = run_status::exited;
      exited.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      put_status(status_fd_no, exited);
    }
  }
  kill_everything(init, run);
  _exit(0);
}

int dup_high(int fd) {
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

bool spawn_supervised(const spawn_spec& spec, supervised_run& out, std::string& error) {
  std::vector<char*> argv, envp;
  for (auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int out_pipe[2], status_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + strerror(errno);
    return false;
  }
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return false;
  }
  prepared p{argv.data(), envp.data(), spec.dir.c_str(), spec.memory_bytes, spec.user, getpid(),
             dup_high(open("/dev/null", O_RDWR | O_CLOEXEC)), dup_high(out_pipe[1]),
             dup_high(status_pipe[1]), spec.namespaces};
  auto close_child_ends = [&] {
    for (int fd : {p.devnull, p.out_w, p.status_w})
      if (fd >= 0) close(fd);
  };
  if (p.devnull < 0 || p.out_w < 0 || p.status_w < 0) {
    error = std::string("descriptors: ") + strerror(errno);
    close_child_ends();
    close(out_pipe[0]);
    close(status_pipe[0]);
    return false;
  }
  pid_t pid = fork();
  if (pid < 0) {
    error = std::string("fork: ") + strerror(errno);
    close_child_ends();
    close(out_pipe[0]);
    close(status_pipe[0]);
    return false;
  }
  if (pid == 0) supervise(p);
  close_child_ends();
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
  }
  return "run setup failed: " + why;
}

int terminate_supervised(const supervised_run& run, int grace_ms) {
  int status = 0;
  kill(run.supervisor, SIGTERM);
  for (int waited = 0; waited < grace_ms; waited += 5) {
    if (waitpid(run.supervisor, &status, WNOHANG) == run.supervisor) return status;
    timespec ts{0, 5'000'000};
    nanosleep(&ts, nullptr);
  }
  kill(run.supervisor, SIGKILL);
  while (waitpid(run.supervisor, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace aisched::worker
