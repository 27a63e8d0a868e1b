// The leader's handle on one worker. The router hands it `execute` and
// `cancel_run`; it forwards them to the worker (a typed CAF actor, local or
// remote) and turns the worker's reports into committed `report_results`
// commands, batched: reports queued behind one another share one proposal,
// a run's start folded into its result when both are queued (report_batch.hpp).
// It is the one proposer of its worker's reports: an external worker's report
// (REST, verified by the router) reaches raft through it too, on its own.
// A run a native worker refuses to take never started there: it goes back to
// the router (not_taken), which places it again as the same attempt. A run
// the worker may have taken (no answer for it, a failed request) and an
// external worker's failed post become failed attempts at once.
// Runs handed over in one burst go to a native worker in one request; a
// cancel of a run not sent yet drops it there.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.hpp"
#include "common/run_pool.hpp"
#include "proto/interfaces.hpp"

namespace aisched::worker_proxy {

struct proxy_state {
  std::string worker_id;
  proto::worker_actor worker;
  proto::not_taken_sink router;  // native workers only: where refused runs go back
  proto::raft_actor raft;
  uint64_t term = 0;
  wall_clock clock;  // its router's: the time of its reports and of held runs' instants
  std::vector<proto::run_result> pending;  // reports not yet proposed
  std::string callback_url;                // http workers only
  std::string report_base;                 // "http://host:port" of this node's gateway
  bool flush_scheduled = false;
  /// native workers only: runs handed over since the last send, sent to the
  /// worker together at the (execute, flush) queued behind the first.
  std::vector<proto::execute_request> to_send;
  /// http workers only: runs placed ahead of their instant (not_before),
  /// posted to the worker at it (an external worker is not told to wait), by
  /// instance id; a newer delivery replaces the request.
  std::unordered_map<std::string, proto::execute_request> holding;
  static inline const char* name = "worker_proxy";
};

/// A proxy for an external HTTP worker: `execute` becomes `POST {callback_url}
/// /internal/tasks/execute` (expects 202) on `dispatch_pool`'s threads; the
/// worker reports over REST (POST /api/v1/instances/{id}/report), which the
/// router verifies and hands here with `settle`. A run placed ahead of its
/// instant is posted at the instant; a cancel before then drops it here.
/// `clock` is the router's wall clock (common/clock.hpp).
proto::worker_proxy_actor::behavior_type http_worker_proxy_impl(
    proto::worker_proxy_actor::stateful_pointer<proxy_state> self, std::string worker_id,
    std::string callback_url, std::string report_base, std::shared_ptr<worker::run_pool> pool,
    proto::raft_actor raft, uint64_t term, wall_clock clock);

/// A proxy for a native worker (a CAF actor); the runs it refuses go back to
/// `router`; `clock` as above.
proto::worker_proxy_actor::behavior_type worker_proxy_impl(
    proto::worker_proxy_actor::stateful_pointer<proxy_state> self, std::string worker_id,
    proto::worker_actor worker, proto::not_taken_sink router, proto::raft_actor raft,
    uint64_t term, wall_clock clock);

}  // namespace aisched::worker_proxy
