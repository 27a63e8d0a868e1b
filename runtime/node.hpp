// The two kinds of node the `aisched` binary runs. Each returns the process
// exit code after a clean shutdown on SIGINT/SIGTERM (`signals` is blocked in
// every thread and waited for with sigwait).
#pragma once

#include <memory>

#include <signal.h>

#include <caf/actor_system_config.hpp>

#include "actors/inspector/inspector_actor.hpp"
#include "runtime/config.hpp"

namespace aisched::runtime {

/// A scheduler node: raft, state machine, trigger, retry, router, backpressure,
/// the HTTP gateway (role gateway) and a built-in worker (role worker).
int run_scheduler_node(const config& cfg, sigset_t& signals);

/// `aisched recover --force-new-cluster`: makes this member (--node-id, --cluster-addr)
/// the only member of a new group on its stopped data directory and exits:
/// 0 done, 2 nothing to recover or bad flags, 1 a storage error.
int recover_quorum(const config& cfg);

/// `aisched restore ...` (argv[0] is "restore"): seeds a new cluster's data
/// directory from a backup file and exits: 0 done, 2 refused (a used data
/// directory, a damaged or newer file, a wrong secrets key, bad flags), 1 a
/// storage error.
int restore_main(int argc, char** argv);

/// A worker node: executes runs for the cluster it joins (`cfg.join`).
int run_worker_node(const config& cfg, sigset_t& signals);

/// CAF settings every node uses: thread count, scheduler policy (`sharing`,
/// for latency across nodes), middleman with heartbeats, our message types.
std::unique_ptr<caf::actor_system_config> make_caf_config(const config& cfg);

/// The node's inspector (aisched-inspect), listing `targets` in that order;
/// null handles (roles this node does not run) are left out.
proto::inspector_actor spawn_inspector(caf::actor_system& sys, const config& cfg,
                                       std::vector<inspector::target> targets);

}  // namespace aisched::runtime
