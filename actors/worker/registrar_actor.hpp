// The registrar connects a worker node to the cluster: it reaches a scheduler
// node's endpoint over CAF (non-blocking connect with a deadline), registers
// the local worker actor with that node's router, repeats the registration as
// a heartbeat, and reconnects with backoff when the node goes away. Nobody
// sends it anything but its own timers and down messages.
#pragma once

#include <cstdint>
#include <string>

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "proto/interfaces.hpp"

namespace aisched::worker {

struct registrar_state {
  std::string host;
  uint16_t port = 0;
  proto::worker info;
  proto::worker_actor worker;
  proto::router_actor router;
  uint64_t generation = 0;  // bumped per connection attempt; stale replies are ignored
  static inline const char* name = "registrar";
};

caf::behavior registrar_actor_impl(caf::stateful_actor<registrar_state>* self, std::string host,
                                   uint16_t port, proto::worker info, proto::worker_actor worker);

}  // namespace aisched::worker
