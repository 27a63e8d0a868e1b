// The endpoint actor is how other nodes (worker nodes, members, tools) get the
// node's actors; they reach it through the gatekeeper the cluster port
// publishes (gatekeeper_actor.hpp), which admits them first. It owns nothing
// but the handles it hands out. A worker node's endpoint has no router or raft (its
// `handles` answers an error) and serves aisched-inspect only.
#pragma once

#include <string>

#include "common/activity.hpp"
#include "proto/interfaces.hpp"

namespace aisched::endpoint {

struct endpoint_state {
  proto::router_actor router;
  caf::actor raft;
  proto::trigger_actor trigger;
  std::string http_addr;  // "host:port" of this node's gateway, "" without one
  proto::inspector_actor inspector;
  inspector::activity activity;
  static inline const char* name = "endpoint";
};

/// `router`, `raft` and `trigger` are null on a worker node.
proto::endpoint_actor::behavior_type endpoint_actor_impl(
    proto::endpoint_actor::stateful_pointer<endpoint_state> self, proto::router_actor router,
    caf::actor raft, proto::trigger_actor trigger, std::string http_addr,
    proto::inspector_actor inspector);

}  // namespace aisched::endpoint
