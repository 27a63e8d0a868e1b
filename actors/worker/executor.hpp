// Runs one task attempt to completion, blocking the calling thread: shell
// commands as child processes under a supervisor (actors/worker/sandbox: run
// user, own namespaces, nothing outlives the run) in a scratch directory with a
// minimal environment, HTTP calls with libcurl, containers through
// docker/podman, noop at once. Never called on a CAF scheduler thread: the
// worker actor's process_executor (run_executor.hpp) runs it on a thread of a
// run_pool and tells the worker the result.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "actors/worker/sandbox.hpp"
#include "proto/commands.hpp"
#include "proto/interfaces.hpp"

namespace aisched::worker {

struct exec_options {
  std::string scratch_root;           // per-run directories are created below it
  std::string supervisor;             // aisched-supervisor (find_supervisor)
  size_t output_cap = 16 * 1024;      // bytes of output tail kept (stdout+stderr)
  run_user user;                      // who shell commands run as (default: the node's user)
  std::map<std::string, run_user> tenant_users;  // per tenant, instead of `user` (--tenant-run-as)
  bool namespaces = true;             // false: never pid/mount namespaces (tests of the fallback)
  bool own_network = false;           // shell runs in a network of their own (--run-network none)
};

/// Called with chunks of output as the run writes them (from the running thread).
using output_fn = std::function<void(std::string_view chunk)>;

/// Runs `req` and returns its outcome: state success / failed / timed_out with
/// exit code (HTTP status for http tasks; 128+signal when killed), error text,
/// output tail and start/finish times. When `cancelled()` turns true (polled
/// every 50 ms) the run is killed (every process it started) and ends failed with
/// error "cancelled". The calling thread must not exit before this returns (it is
/// the parent of the run's supervisor). Thread-safe.
using cancel_fn = std::function<bool()>;
proto::run_result execute_task(const proto::execute_request& req, const exec_options& opts,
                               const cancel_fn& cancelled, const output_fn& on_output);

/// The environment every run gets: a fixed PATH and the run's identity, then the
/// event values of `req.env`.
std::vector<std::string> run_environment(const proto::execute_request& req,
                                         const std::string& home);

}  // namespace aisched::worker
