// aisched-chaos, process control: starts the real `aisched` processes of the
// chaos group (three Raft members on fixed loopback cluster ports and one
// worker-only node) in one temporary directory, kills, stops, continues and
// restarts them by pid, replaces a member by a new one started empty, and
// guarantees that none outlives the harness (a pid registry that exit paths and
// signal handlers SIGKILL; PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.hpp"

namespace aisched::chaos {

class network;

using clock = std::chrono::steady_clock;  // read through steady_now() (common/clock.hpp)

/// SIGKILLs every process the harness started and has not reaped yet. Only
/// async-signal-safe calls: the SIGINT/SIGTERM handler and std::atexit use it.
void kill_registered_processes() noexcept;

/// Installs the cleanup path: SIGINT, SIGTERM and SIGHUP kill every registered
/// process and end the harness with status 2; so does std::atexit.
void install_cleanup_handlers();

/// The last resort of the hard deadline (on another thread): kills every
/// registered process and removes the group's directory (unless
/// AISCHED_CHAOS_KEEP is set).
void kill_everything_and_clean_up();

/// Whether a SIGINT/SIGTERM asked the harness to stop.
bool stop_requested();

/// A loopback TCP port nobody listens on right now (0 if none could be found).
uint16_t free_loopback_port();

/// One `aisched` process slot: its arguments, its log (appended across
/// restarts), its current pid. Not thread-safe: the main thread owns it.
class node {
 public:
  enum class kind { member, worker };

  /// `slot` is the node's number on `net` (its address and link), 1-based.
  node(kind k, std::string id, std::string binary, std::vector<std::string> args,
       std::string log_path, network& net, int slot);
  ~node();  // SIGKILLs the process if it still runs
  node(const node&) = delete;
  node& operator=(const node&) = delete;

  /// Starts (or restarts) the process and waits, until `deadline`, for it to serve:
  /// a member until its API answers /healthz, a worker node until it logs
  /// `worker node started`. Returns "" on success, else what went wrong (the
  /// process is then killed). The pid is registered for cleanup before exec.
  std::string start(clock::time_point deadline);

  /// Sends `sig` (SIGKILL, SIGSTOP, SIGCONT ...) to the process; after SIGKILL waits
  /// for it and reaps it. A stopped process is continued before it is killed.
  void signal(int sig);

  /// SIGTERM, then SIGKILL after `grace`; reaps it.
  void stop(std::chrono::milliseconds grace);

  /// Whether the process runs (reaps it when it has exited by itself).
  bool running();
  bool stopped() const { return stopped_; }
  const std::string& id() const { return id_; }
  kind role() const { return kind_; }
  /// "HOST:PORT" of its API while it serves, else "".
  std::string http_endpoint() const;
  int slot() const { return slot_; }
  pid_t pid() const { return pid_; }
  /// Replaces the arguments used by the next start() (a worker node re-joins
  /// through a member that is up).
  void set_args(std::vector<std::string> args) { args_ = std::move(args); }
  /// How often this slot was started, and how its current incarnation exited by
  /// itself (a wait status; -1 while it runs, or if the harness ended it).
  int starts() const { return starts_; }
  int last_unexpected_exit() const { return unexpected_exit_; }
  /// The log written by the current incarnation.
  std::string current_log() const;
  std::string log_path() const { return log_path_; }

 private:
  void reap(int status);

  kind kind_;
  std::string id_, binary_;
  std::vector<std::string> args_;
  std::string log_path_;
  network& net_;
  int slot_;
  pid_t pid_ = -1;
  bool stopped_ = false;
  uint16_t http_port_ = 0;
  size_t log_offset_ = 0;  // log size when the current incarnation started
  int starts_ = 0;
  int unexpected_exit_ = -1;
};

/// The chaos group: members n1..n3 (`--peers`, fixed cluster ports, HTTP on a
/// free port) and worker node w1 (`--roles worker --join`), each on its address
/// of the network (its own namespace, or the host's loopback), with a data dir
/// under one temporary root whose unique name (the marker) is in every
/// command line the group's processes and their runs carry. Default flags
/// otherwise, as `make run` starts a node. The destructor kills every process
/// and removes the root.
class group {
 public:
  /// Creates the root (under /dev/shm when TMPDIR is unset, else the temp dir);
  /// throws std::runtime_error if it cannot.
  explicit group(std::string binary, network& net);
  ~group();
  group(const group&) = delete;
  group& operator=(const group&) = delete;

  /// Starts the members, then the worker node; "" on success, else the error.
  std::string start(clock::time_point deadline);
  /// Restarts member or worker `n` (a worker node joins member `join_via`).
  std::string restart(node& n, clock::time_point deadline, size_t join_via = 0);
  /// Stops every process (SIGTERM, SIGKILL after `grace`), continuing stopped ones.
  void stop_all(std::chrono::milliseconds grace);

  std::vector<node*> members();
  node& worker() { return *worker_; }
  node* member(const std::string& id);
  /// Every member's log path by id.
  std::map<std::string, std::string> member_logs() const;
  /// The data dir of node `n`, and the address its raft listens on ("HOST:PORT").
  std::string data_dir(const node& n) const { return root_ + "/" + n.id(); }
  std::string cluster_addr(const node& n) const;
  const std::string& root() const { return root_; }
  const std::string& marker() const { return marker_; }
  /// The file every run appends "<instance id> <attempt>" to (mode 0666: runs may
  /// execute as another user).
  const std::string& effects_path() const { return effects_; }

 private:
  std::vector<std::string> worker_args(size_t join_via) const;

  network& net_;
  std::string binary_, marker_, root_, effects_, peers_;
  std::vector<uint16_t> cluster_ports_;  // by slot - 1
  std::vector<std::unique_ptr<node>> members_;
  std::unique_ptr<node> worker_;
};

/// Pids of every process whose command line contains `marker` (the harness
/// itself excluded), for the orphan check.
std::vector<pid_t> processes_with_marker(const std::string& marker);

/// The command line of `pid`, arguments separated by spaces ("" if it is gone).
std::string command_line(pid_t pid);

}  // namespace aisched::chaos
