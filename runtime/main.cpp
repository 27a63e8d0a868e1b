// The `aisched` binary: parses the configuration, sets up logging and signal
// handling, and runs a scheduler node (roles scheduler[,worker][,gateway]) or a
// worker node (`--roles worker --join HOST:PORT`).
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <pthread.h>

#include <curl/curl.h>

#include "runtime/config.hpp"
#include "common/log.hpp"
#include "runtime/node.hpp"

using namespace aisched;

namespace {

/// Closes the node to its runs: no /proc/<node>/environ, mem or fd for processes of
/// the same user (PR_SET_DUMPABLE 0; also no core dumps), no secret left in the
/// environment, the scratch root ready, the run supervisor found. Returns false when
/// runs cannot be isolated.
bool harden(runtime::config& cfg) {
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  runtime::scrub_secret_environment();
  if (!cfg.roles.count("worker")) return true;
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
  auto parsed = runtime::parse_command_line(argc, argv);
  if (!parsed.run) return parsed.exit_code;
  log::level lvl = log::level::info;
  log::parse_level(parsed.cfg.log_level, lvl);
  log::init(parsed.cfg.node_id, lvl);
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
