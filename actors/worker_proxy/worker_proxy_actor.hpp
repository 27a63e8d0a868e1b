// The leader's handle on one worker. The router hands it `execute` and
// `cancel_run`; it forwards them to the worker (a typed CAF actor, local or
// remote) and turns the worker's reports into committed `report_results`
// commands, batched: reports queued behind one another share one proposal.
// A delivery the worker does not accept becomes a failed attempt at once.
#pragma once

#include <string>
#include <vector>

#include "proto/interfaces.hpp"

namespace aisched::worker_proxy {

struct proxy_state {
  std::string worker_id;
  proto::worker_actor worker;
  proto::raft_actor raft;
  uint64_t term = 0;
  std::vector<proto::run_result> pending;  // reports not yet proposed
  bool flush_scheduled = false;
  static inline const char* name = "worker_proxy";
};

proto::worker_proxy_actor::behavior_type worker_proxy_impl(
    proto::worker_proxy_actor::stateful_pointer<proxy_state> self, std::string worker_id,
    proto::worker_actor worker, proto::raft_actor raft, uint64_t term);

}  // namespace aisched::worker_proxy
