// The `aisched` binary: parses the configuration, sets up logging and signal
// handling, and runs a scheduler node (roles scheduler[,worker][,gateway]) or a
// worker node (`--roles worker --join HOST:PORT`).
#include <csignal>
#include <pthread.h>

#include <curl/curl.h>

#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/node.hpp"

using namespace aisched;

int main(int argc, char** argv) {
  auto parsed = runtime::parse_command_line(argc, argv);
  if (!parsed.run) return parsed.exit_code;
  log::level lvl = log::level::info;
  log::parse_level(parsed.cfg.log_level, lvl);
  log::init(parsed.cfg.node_id, lvl);
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
