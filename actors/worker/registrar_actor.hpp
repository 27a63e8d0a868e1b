// The registrar connects a worker node to the cluster: it reaches a scheduler
// node's endpoint over CAF (non-blocking connect with a deadline), registers
// the local worker actor with that node's router, repeats the registration as
// a heartbeat (with the machine's CPU and memory use), and reconnects with
// backoff when the node goes away. `drain` makes it say the worker is
// draining (shutting down: finishing its runs, taking no new ones). The
// built-in worker of a scheduler node uses the local variant: same heartbeat,
// the router handle given instead of found.
#pragma once

#include <cstdint>
#include <string>

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/worker/host_stats.hpp"
#include "proto/interfaces.hpp"

namespace aisched::worker {

struct registrar_state {
  std::string host;
  uint16_t port = 0;
  proto::worker info;
  proto::worker_actor worker;
  proto::router_actor router;
  uint64_t generation = 0;  // bumped per connection attempt; stale replies are ignored
  std::string last_error;   // why the last attempt failed, reported once ("" once registered)
  host_stats stats;
  static inline const char* name = "registrar";
};

caf::behavior registrar_actor_impl(caf::stateful_actor<registrar_state>* self, std::string host,
                                   uint16_t port, proto::worker info, proto::worker_actor worker);

/// Heartbeats of a worker in the same process as `router`.
caf::behavior local_registrar_impl(caf::stateful_actor<registrar_state>* self,
                                   proto::router_actor router, proto::worker info,
                                   proto::worker_actor worker);

}  // namespace aisched::worker
