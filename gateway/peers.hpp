// How the gateway reaches the other scheduler members: the endpoint actor a
// member publishes on its cluster address. Used to hand requests only the
// leader can serve (manual runs, events, backfills) to the leader, and to ask
// each member for its own status. CAF keeps one connection per node, so
// asking again is cheap.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "proto/interfaces.hpp"

namespace aisched::gateway {

using endpoint_fn = std::function<void(caf::expected<proto::endpoint_actor>)>;

/// Connects from `self` to the endpoint published at `address` ("host:port")
/// and calls `then` with it, or with an `unavailable` error naming the address.
void reach_endpoint(caf::event_based_actor* self, const std::string& address,
                    std::chrono::milliseconds timeout, endpoint_fn then);

}  // namespace aisched::gateway
