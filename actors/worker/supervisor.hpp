// What the node and `aisched-supervisor` (actors/worker/supervisor_main.cpp) say
// to each other. The node starts the helper with posix_spawn (no copy of the node's
// page tables, however large the node) and hands it the run's spec over a socket:
// never argv or the environment, which /proc shows to every user. The helper
// starts the run and reports on the status pipe. Plain C++, no project library:
// the helper links nothing else.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aisched::worker {

/// Descriptors of the helper: 0 /dev/null, 1 and 2 the run's output pipe,
/// 3 the status pipe (also in the run until its exec), 4 the spec socket.
constexpr int status_fd_no = 3;
constexpr int spec_fd_no = 4;

/// The run as the helper needs it: everything is copied into the spec.
struct supervisor_spec {
  pid_t node_pid = 0;         // the helper's expected parent
  uint64_t memory_bytes = 0;  // RLIMIT_AS of the run; 0: none
  bool switch_user = false;   // false: the node's user
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups (incl. gid)
  bool namespaces = true;     // false: the subreaper fallback even where permitted
  bool own_network = false;   // a network namespace of its own: a loopback, no route out
  std::string dir;            // working directory
  std::vector<std::string> argv;  // argv[0] is an absolute path
  std::vector<std::string> env;
};

/// NUL-separated fields, counts before lists; `parse_spec` is its inverse and
/// rejects anything else (a truncated spec, a NUL inside a field).
std::string encode_spec(const supervisor_spec& s);
bool parse_spec(std::string_view bytes, supervisor_spec& out);

/// One record from the status pipe.
struct run_status {
  enum kind_t : int32_t { started = 0, exited = 1, setup_failed = 2 } kind = exited;
  int32_t code = 0;   // exited: exit status, or 128+signal; started: 2 pid+mount
                      // namespace, 1 pid namespace, 0 subreaper only
  int32_t stage = 0;  // setup_failed: which step (see describe_setup_failure)
  int32_t err = 0;    // setup_failed: errno
};

enum setup_stage : int32_t {
  stage_rlimit = 1,
  stage_setgroups,
  stage_setgid,
  stage_setuid,
  stage_chdir,
  stage_exec,
  stage_fork,
  stage_namespace,
  stage_spec,  // the helper got no valid spec from the node
  stage_network,  // no network namespace of its own (--run-network none)
};

/// The helper's life once its spec is read: namespaces (or subreaper), the run, its
/// exit on the status pipe, then on SIGTERM (end of run, timeout, cancel, the node's
/// death) every process of the run killed and reaped. Never returns.
[[noreturn]] void supervise(const supervisor_spec& spec);

/// Closes every descriptor >= `lowest`; async-signal-safe.
void close_from(int lowest);

}  // namespace aisched::worker
