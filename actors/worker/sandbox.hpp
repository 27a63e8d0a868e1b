// Process isolation of one run (used by actors/worker/executor): the user a run
// executes as, its scratch root, and the supervisor process (`aisched-supervisor`,
// actors/worker/supervisor.hpp) that starts the run's command and guarantees that
// no process of the run outlives it. Talks to the kernel only (posix_spawn,
// credentials, /proc); knows nothing of tasks.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "actors/worker/supervisor.hpp"

namespace aisched::worker {

/// Who a run executes as. `keep` runs it as the node's own user (no switch).
struct run_user {
  bool keep = true;
  std::string name;  // for messages
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups (incl. gid)
};

/// Looks `name` up (user name or numeric uid) with its groups. Not async-signal-safe:
/// call at startup. Returns "" and fills `out`, or a message naming the problem.
std::string resolve_run_user(const std::string& name, run_user& out);

/// Creates (or checks) the directory below which per-run directories live: owned by
/// the node's user, not a symlink, mode 0711 (runs can reach their own directory, not
/// list the others). Returns "" or what is wrong.
std::string prepare_scratch_root(const std::string& path);

/// Creates a fresh per-run directory below `root` named after `name` (unique suffix
/// added), mode 0700, owned by `user`. Returns its path, or "" with `error` set.
std::string make_run_dir(const std::string& root, const std::string& name, const run_user& user,
                         std::string& error);

/// The `aisched-supervisor` next to `exe` (a build tree) or in
/// `<exe dir>/../libexec/aisched/` (an install); "" when there is none.
std::string find_supervisor(const std::string& exe);

/// What the run's command needs; everything is sent to the supervisor.
struct spawn_spec {
  std::string supervisor;  // path of aisched-supervisor (find_supervisor)
  std::vector<std::string> argv;  // argv[0] is an absolute path
  std::vector<std::string> env;
  std::string dir;              // working directory
  uint64_t memory_bytes = 0;    // RLIMIT_AS of the run; 0: none
  const run_user* user = nullptr;  // nullptr: the node's user
  bool namespaces = true;          // false: the subreaper fallback even where permitted
  bool own_network = false;        // a network namespace with only its own loopback
};

/// A started run: its supervisor and the descriptors the executor reads.
///
/// The supervisor is a child of the calling thread (so the calling thread must live
/// as long as the run: PR_SET_PDEATHSIG fires when that thread exits), started with
/// posix_spawn: its cost does not grow with the node's memory. Where the
/// kernel permits, it puts the run in new PID and mount namespaces (with its own
/// /proc) whose init it holds, so killing that init kills every process of the run,
/// however it forked or setsid'd; otherwise it is a child subreaper that kills every
/// process it adopted. When the node dies the supervisor gets SIGTERM and does the
/// same. The run sees only stdin (/dev/null), stdout and stderr (the output pipe).
struct supervised_run {
  pid_t supervisor = -1;
  int output_fd = -1;  // read end of the run's stdout+stderr
  int status_fd = -1;  // read end of the supervisor's status records (see read_status)
  bool namespaced = false;
};

/// Starts `spec` under a supervisor. Returns false with `error` set when nothing started.
bool spawn_supervised(const spawn_spec& spec, supervised_run& out, std::string& error);

/// Reads whole records available on `fd` (non-blocking); false at end of file.
bool read_status(int fd, std::vector<run_status>& out);

/// "cannot switch to user nobody (setuid): Operation not permitted", ...
std::string describe_setup_failure(const run_status& s, const run_user* user);

/// Asks the supervisor to kill every process of the run and waits for it to exit
/// (SIGKILLs it after `grace_ms`). Returns the supervisor's wait status. Closes nothing.
int terminate_supervised(const supervised_run& run, int grace_ms = 3000);

}  // namespace aisched::worker
