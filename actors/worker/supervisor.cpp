// The supervisor of one run, run by `aisched-supervisor`; see supervisor.hpp.
//
// Process tree of one run (namespaced case):
//   node thread --posix_spawn--> aisched-supervisor (node's pid namespace)
//                                  |-- init  (pid 1 of a new pid+mount namespace, mounts /proc)
//                                  `-- run   (the command, as the run user, in that namespace)
// Killing init makes the kernel kill everything in the namespace. Without namespaces
// the supervisor is a child subreaper and kills what it adopts. The helper is small
// and single-threaded, so its forks are cheap whatever the size of the node.
#include "actors/worker/supervisor.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

namespace aisched::worker {

namespace {

struct linux_dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

/// Calls `fn(number, name)` for each entry of the open directory `dir` whose name is
/// a decimal number (pids in /proc, descriptors in /proc/self/fd): raw getdents64,
/// no allocation, async-signal-safe.
template <class Fn>
void for_each_numbered(int dir, Fn fn) {
  alignas(8) char buf[4096];
  for (;;) {
    long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) return;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<linux_dirent64*>(buf + off);
      off += d->d_reclen;
      long number = 0;
      bool digits = d->d_name[0] != '\0';
      for (const char* c = d->d_name; *c; ++c) {
        if (*c < '0' || *c > '9') digits = false;
        else number = number * 10 + (*c - '0');
      }
      if (digits) fn(number, d->d_name);
    }
  }
}

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

/// The run itself: default signals, own process group, limits, credentials, exec.
[[noreturn]] void exec_run(const supervisor_spec& s, char* const* argv, char* const* envp) {
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  setpgid(0, 0);
  umask(022);  // the node's own is 077: its files are its alone, not the run's
  if (s.memory_bytes != 0) {
    // The run's memory cap: its address space, inherited by what it starts.
    rlimit limit{s.memory_bytes, s.memory_bytes};
    if (setrlimit(RLIMIT_AS, &limit) != 0) fail_setup(stage_rlimit, errno, 126);
  }
  if (s.switch_user) {
    // Groups first, uid last: once the uid is dropped nothing else may change.
    if (setgroups(s.groups.size(), s.groups.data()) != 0) fail_setup(stage_setgroups, errno, 126);
    if (setresgid(s.gid, s.gid, s.gid) != 0) fail_setup(stage_setgid, errno, 126);
    if (setresuid(s.uid, s.uid, s.uid) != 0) fail_setup(stage_setuid, errno, 126);
    if (getuid() != s.uid || geteuid() != s.uid) fail_setup(stage_setuid, EPERM, 126);
  }
  if (chdir(s.dir.c_str()) != 0) fail_setup(stage_chdir, errno, 126);
  close_from(status_fd_no + 1);
  fcntl(status_fd_no, F_SETFD, FD_CLOEXEC);  // gone at exec: the run sees 0, 1, 2 only
  execve(argv[0], argv, envp);
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
  for_each_numbered(dir, [me](long pid, const char* name) {
    char path[64] = "/proc/";
    size_t len = 6;
    for (const char* c = name; *c && len < 40; ++c) path[len++] = *c;
    memcpy(path + len, "/stat", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char stat[512];
    ssize_t got = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (got <= 0) return;
    stat[got] = '\0';
    // "pid (comm) state ppid ...": comm may hold anything, so scan from the last ')'.
    char* paren = strrchr(stat, ')');
    if (!paren || paren[1] != ' ' || paren[2] == '\0' || paren[3] != ' ') return;
    pid_t ppid = 0;
    for (const char* c = paren + 4; *c >= '0' && *c <= '9'; ++c) ppid = ppid * 10 + (*c - '0');
    if (ppid == me) kill(static_cast<pid_t>(pid), SIGKILL);
  });
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

}  // namespace

/// Closes every descriptor >= `lowest`: close_range(2), else the list in
/// /proc/self/fd (raw getdents64, no allocation), else up to RLIMIT_NOFILE.
void close_from(int lowest) {
  if (syscall(SYS_close_range, static_cast<unsigned>(lowest), ~0U, 0U) == 0) return;
  int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    for_each_numbered(dir, [lowest, dir](long fd, const char*) {
      if (fd >= lowest && fd != dir) close(static_cast<int>(fd));
    });
    close(dir);
    return;
  }
  rlimit lim{};
  long top = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
                 ? static_cast<long>(lim.rlim_cur)
                 : 65536;
  for (long fd = lowest; fd < top; ++fd) close(static_cast<int>(fd));
}

/// Moves the helper (and so the run) into a network namespace of its own with its
/// loopback up: the run reaches its own 127.0.0.1, never the node's ports or the
/// host's interfaces. Returns 0 or the errno of the step that failed.
int enter_own_network() {
  if (unshare(CLONE_NEWNET) != 0) return errno;
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  ifreq req{};
  std::strncpy(req.ifr_name, "lo", IFNAMSIZ - 1);
  int err = 0;
  if (ioctl(fd, SIOCGIFFLAGS, &req) != 0) err = errno;
  req.ifr_flags |= IFF_UP;
  if (err == 0 && ioctl(fd, SIOCSIFFLAGS, &req) != 0) err = errno;
  close(fd);
  return err;
}

[[noreturn]] void supervise(const supervisor_spec& p) {
  std::vector<char*> argv, envp;
  for (auto& a : p.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : p.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);  // waited for synchronously below
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &dfl, nullptr);  // SIG_IGN would reap the run before we see it
  // Never the host's network when the node asked for none: the run fails instead.
  if (p.own_network)
    if (int err = enter_own_network(); err != 0) fail_setup(stage_network, err, 126);
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
  if (run == 0) exec_run(p, argv.data(), envp.data());
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

namespace {

void put_field(std::string& out, std::string_view field) {
  out.append(field);
  out.push_back('\0');
}

/// Splits `bytes` at NULs; every field must end in one.
bool split_fields(std::string_view bytes, std::vector<std::string_view>& out) {
  while (!bytes.empty()) {
    auto nul = bytes.find('\0');
    if (nul == std::string_view::npos) return false;
    out.push_back(bytes.substr(0, nul));
    bytes.remove_prefix(nul + 1);
  }
  return true;
}

bool parse_number(std::string_view text, uint64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    uint64_t next = v * 10 + static_cast<uint64_t>(c - '0');
    if (next / 10 != v) return false;  // overflow
    v = next;
  }
  out = v;
  return true;
}

template <class T>
bool parse_id(std::string_view text, T& out) {
  uint64_t v = 0;
  if (!parse_number(text, v) || v > static_cast<uint64_t>(std::numeric_limits<T>::max()))
    return false;
  out = static_cast<T>(v);
  return true;
}

}  // namespace

std::string encode_spec(const supervisor_spec& s) {
  std::string out;
  put_field(out, "aisched-spec-1");
  put_field(out, std::to_string(s.node_pid));
  put_field(out, std::to_string(s.memory_bytes));
  put_field(out, s.switch_user ? std::to_string(s.uid) : "-");
  put_field(out, std::to_string(s.gid));
  put_field(out, std::to_string(s.groups.size()));
  for (auto g : s.groups) put_field(out, std::to_string(g));
  put_field(out, s.namespaces ? "1" : "0");
  put_field(out, s.own_network ? "net" : "host");
  put_field(out, s.dir);
  put_field(out, std::to_string(s.argv.size()));
  for (auto& a : s.argv) put_field(out, a);
  put_field(out, std::to_string(s.env.size()));
  for (auto& e : s.env) put_field(out, e);
  return out;
}

bool parse_spec(std::string_view bytes, supervisor_spec& out) {
  std::vector<std::string_view> f;
  if (!split_fields(bytes, f)) return false;
  size_t i = 0;
  auto next = [&](std::string_view& v) {
    if (i >= f.size()) return false;
    v = f[i++];
    return true;
  };
  auto count_of = [&](uint64_t& n) {  // a count may not exceed the fields left
    std::string_view v;
    return next(v) && parse_number(v, n) && n <= f.size() - i;
  };
  auto list = [&](std::vector<std::string>& v) {
    uint64_t n = 0;
    if (!count_of(n)) return false;
    for (uint64_t k = 0; k < n; ++k) v.emplace_back(f[i++]);
    return true;
  };
  supervisor_spec s;
  std::string_view v;
  pid_t pid = 0;
  uint64_t groups = 0;
  if (!next(v) || v != "aisched-spec-1") return false;
  if (!next(v) || !parse_id(v, pid) || pid <= 0) return false;
  s.node_pid = pid;
  if (!next(v) || !parse_number(v, s.memory_bytes)) return false;
  if (!next(v)) return false;
  s.switch_user = v != "-";
  if (s.switch_user && !parse_id(v, s.uid)) return false;
  if (!next(v) || !parse_id(v, s.gid)) return false;
  if (!count_of(groups)) return false;
  for (uint64_t k = 0; k < groups; ++k) {
    gid_t g = 0;
    if (!next(v) || !parse_id(v, g)) return false;
    s.groups.push_back(g);
  }
  if (!next(v) || (v != "0" && v != "1")) return false;
  s.namespaces = v == "1";
  if (!next(v) || (v != "net" && v != "host")) return false;
  s.own_network = v == "net";
  if (!next(v)) return false;
  s.dir = std::string(v);
  if (!list(s.argv) || s.argv.empty() || s.argv[0].empty() || s.argv[0][0] != '/') return false;
  if (!list(s.env) || i != f.size()) return false;
  out = std::move(s);
  return true;
}

}  // namespace aisched::worker
