// The endpoint actor is what a scheduler node publishes on its cluster port:
// other nodes (worker nodes, tools) ask it for the node's actors. It owns
// nothing but the handles it hands out.
#pragma once

#include <string>

#include "proto/interfaces.hpp"

namespace aisched::endpoint {

struct endpoint_state {
  proto::router_actor router;
  caf::actor raft;
  proto::trigger_actor trigger;
  std::string http_addr;  // "host:port" of this node's gateway, "" without one
  static inline const char* name = "endpoint";
};

proto::endpoint_actor::behavior_type endpoint_actor_impl(
    proto::endpoint_actor::stateful_pointer<endpoint_state> self, proto::router_actor router,
    caf::actor raft, proto::trigger_actor trigger, std::string http_addr);

}  // namespace aisched::endpoint
