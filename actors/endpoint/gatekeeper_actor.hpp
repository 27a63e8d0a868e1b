// The gatekeeper is what a node publishes on its cluster port: it answers the
// admission protocol of common/cluster_link.hpp (gatekeeper_actor) and hands the
// node's endpoint actor, the way to every other actor of the node, only to a
// peer that proved it holds the cluster secret (or to anyone when the node has
// none). It keeps the pending challenges; it sends nothing on its own.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "common/cluster_link.hpp"
#include "proto/cluster_link_auth.hpp"
#include "proto/interfaces.hpp"

namespace aisched::endpoint {

struct gatekeeper_state {
  std::optional<proto::cluster_auth::gate> gate;  // empty: no secret, everyone enters
  proto::endpoint_actor endpoint;
  std::set<std::string> refusals_logged;  // node ids; one log line per refused node
  static inline const char* name = "gatekeeper";
};

/// Guards `endpoint`; `secret` "" admits every peer (`enter`).
proto::gatekeeper_actor::behavior_type gatekeeper_actor_impl(
    proto::gatekeeper_actor::stateful_pointer<gatekeeper_state> self,
    proto::endpoint_actor endpoint, std::string secret);

}  // namespace aisched::endpoint
