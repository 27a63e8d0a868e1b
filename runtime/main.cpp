// The `aisched` binary: parses the configuration, sets up logging and signal
// handling, and runs a scheduler node (roles scheduler[,worker][,gateway]) or a
// worker node (`--roles worker --join HOST:PORT`).
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <csignal>
#include <filesystem>
#include <pthread.h>
#include <vector>

#include <curl/curl.h>

#include "runtime/config.hpp"
#include "common/log.hpp"
#include "runtime/node.hpp"

using namespace aisched;

namespace {

/// The node's data directory, created 0700 (the umask makes every file in it 0600);
/// one that exists must be a directory only its owner can enter, unless
/// --allow-shared-data-dir: it holds every tenant's definitions, password and token
/// hashes and the audit log. Returns "" or what is wrong.
std::string prepare_data_dir(const runtime::config& cfg) {
  std::error_code ec;
  std::filesystem::create_directories(cfg.data_dir, ec);
  if (ec) return "cannot create data dir " + cfg.data_dir + ": " + ec.message();
  struct stat st{};
  if (::stat(cfg.data_dir.c_str(), &st) != 0)
    return "cannot read data dir " + cfg.data_dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "data dir " + cfg.data_dir + " is not a directory";
  if ((st.st_mode & 077) == 0 || cfg.allow_shared_data_dir) return "";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return "data dir " + cfg.data_dir + " has mode " + mode +
         ": users other than the node's can reach its files (every tenant's tasks, password "
         "and token hashes, the audit log). Run `chmod -R go-rwx " + cfg.data_dir +
         "`, or start with --allow-shared-data-dir to accept it";
}

/// Whether this process may give a child a network namespace of its own (root, or
/// CAP_SYS_ADMIN): tried in a short-lived child, before any thread starts.
bool can_isolate_network() {
  pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) _exit(::unshare(CLONE_NEWNET) == 0 ? 0 : 1);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// Settles --run-network: "none" where the kernel lets us; a default "none" the node
/// cannot provide falls back to "host" with a warning, an explicit one is refused.
std::string choose_run_network(runtime::config& cfg) {
  if (cfg.run_network != "none" || can_isolate_network()) {
    if (cfg.run_network == "host")
      log::warn("runs share the host's network (--run-network host): they can connect to "
                "this node's ports on loopback");
    return "";
  }
  if (cfg.run_network_given)
    return "--run-network none needs network namespaces (root or CAP_SYS_ADMIN), which this "
           "node cannot create";
  log::warn("runs share the host's network: this node cannot create network namespaces "
            "(root or CAP_SYS_ADMIN), so they can connect to its ports on loopback");
  cfg.run_network = "host";
  return "";
}

/// Closes the node to its runs: no /proc/<node>/environ, mem or fd for processes of
/// the same user (PR_SET_DUMPABLE 0; also no core dumps), no secret left in the
/// environment, the scratch root ready, the run supervisor found. Returns false when
/// runs cannot be isolated.
bool harden(runtime::config& cfg) {
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  runtime::scrub_secret_environment();
  if (auto why = prepare_data_dir(cfg); !why.empty()) {
    log::error(why, {{"data_dir", cfg.data_dir}});
    return false;
  }
  if (!cfg.roles.count("worker")) return true;
  if (auto why = choose_run_network(cfg); !why.empty()) {
    log::error(why);
    return false;
  }
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  cfg.supervisor = worker::find_supervisor(exe);
  if (cfg.supervisor.empty()) {
    log::error("no aisched-supervisor next to " + exe + " or in ../libexec/aisched/: a worker "
               "cannot start runs without it (it is installed and built with aisched)");
    return false;
  }
  if (auto why = worker::prepare_scratch_root(cfg.scratch_dir); !why.empty()) {
    log::error(why);
    return false;
  }
  const auto& u = cfg.run_user;
  log::info(u.keep ? std::string("runs execute as the node's user") : "runs execute as user " + u.name,
            {{"uid", std::to_string(u.keep ? geteuid() : u.uid)},
             {"scratch_dir", cfg.scratch_dir}});
  if (u.keep && geteuid() == 0)
    log::warn("runs execute as root (--run-as-node-user): any task owns this node");
  for (auto& [tenant, tu] : cfg.tenant_users)
    log::info("runs of tenant " + tenant + " execute as user " + (tu.keep ? "of the node" : tu.name),
              {{"tenant", tenant}, {"uid", std::to_string(tu.keep ? geteuid() : tu.uid)}});
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // Whatever the node creates (its database, the worker's outbox, logs it writes)
  // is its own alone: runs execute as other users on this machine.
  ::umask(077);
  // A one-shot subcommand with flags of its own (runtime/restore.cpp).
  if (argc > 1 && std::strcmp(argv[1], "restore") == 0) return runtime::restore_main(argc - 1, argv + 1);
  // `aisched recover --force-new-cluster ...`: the node's flags, then the recovery
  // instead of a start (runtime/recover_quorum.cpp).
  std::vector<char*> args(argv, argv + argc);
  bool recover = argc > 1 && std::strcmp(argv[1], "recover") == 0;
  if (recover) {
    args.erase(args.begin() + 1);
    auto force = std::find_if(args.begin(), args.end(),
                              [](char* a) { return std::strcmp(a, "--force-new-cluster") == 0; });
    if (force == args.end()) {
      std::fprintf(stderr,
                   "aisched recover: --force-new-cluster is required: it makes this member the "
                   "only member of a new group on its data (README \"Recovering from a lost "
                   "quorum\")\n");
      return 2;
    }
    args.erase(force);
  }
  auto parsed = runtime::parse_command_line(static_cast<int>(args.size()), args.data());
  if (!parsed.run) return parsed.exit_code;
  log::level lvl = log::level::info;
  log::parse_level(parsed.cfg.log_level, lvl);
  log::init(parsed.cfg.node_id, lvl);
  if (recover) return runtime::recover_quorum(parsed.cfg);
  if (!harden(parsed.cfg)) return 2;
  // Block the signals before any thread starts (CAF's and Asio's threads
  // inherit the mask); the main thread waits for them with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  auto rc = parsed.cfg.roles.count("scheduler") ? runtime::run_scheduler_node(parsed.cfg, signals)
                                                 : runtime::run_worker_node(parsed.cfg, signals);
  curl_global_cleanup();
  return rc;
}
