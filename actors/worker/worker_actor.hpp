// The worker actor runs task attempts handed to it by a worker_proxy. It owns
// the dedup cache (instance id + attempt -> outcome, with a TTL) so a run
// delivered twice executes once, the cancel flags of running attempts, and a
// run_pool that executes off CAF's threads. Reports (running, then the final
// result) go to the proxy that sent the execute. It tells its registrar which
// runs it holds (`held`), so a leader can tell runs lost with a restarted
// worker from runs still going. A worker whose outbox will not open, write or
// delete takes no new runs from then on: its reports would not survive a
// restart, which is what the outbox is for.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>

#include "common/activity.hpp"
#include "actors/worker/executor.hpp"
#include "actors/worker/outbox.hpp"
#include "common/run_pool.hpp"
#include "proto/interfaces.hpp"

namespace aisched::worker {

struct worker_config {
  std::string id = "local";
  exec_options exec;
  duration_ms dedup_ttl = 5 * 60'000;
  std::string outbox_dir;           // "" keeps unacknowledged reports in memory only
  size_t live_cap = 64 * 1024;      // bytes of live output a new follower is sent first
  duration_ms resend_after = 3'000;  // an unacknowledged report is sent again after this
};

struct worker_state {
  struct run {
    proto::worker_proxy_actor reply_to;
    std::shared_ptr<std::atomic<bool>> cancelled;
    bool done = false;
    proto::run_result result;  // when done
    unix_ms last_seen = 0;     // for the dedup TTL
    std::string live;          // output so far (the last live_cap bytes) while it runs
    std::vector<caf::actor> followers;  // told each chunk, then (done, instance id)
  };
  struct pending_report {
    proto::run_result result;
    unix_ms last_sent = 0;
  };
  worker_config cfg;
  std::shared_ptr<run_pool> pool;
  std::unique_ptr<outbox> box;                            // durable copy of `unacked`
  std::string outbox_fault;  // why reports cannot be kept durably; "" while they can
  std::unordered_map<std::string, pending_report> unacked;  // key: "{instance}#{attempt}"
  caf::actor report_sink;                                 // the router, for re-sends
  std::unordered_map<std::string, run> runs;  // key: "{instance}#{attempt}"
  unix_ms last_purge = 0;
  inspector::activity activity;
  static inline const char* name = "worker";
};

/// `pool` must outlive the actor's runs; the runtime stops it at shutdown.
proto::worker_actor::behavior_type worker_actor_impl(
    proto::worker_actor::stateful_pointer<worker_state> self, worker_config cfg,
    std::shared_ptr<run_pool> pool);

}  // namespace aisched::worker
