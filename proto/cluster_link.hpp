// How a node talks to the other cluster members over CAF: plain TCP, or TLS with
// mutual authentication when the node was started with --tls-cert/--tls-key/
// --tls-ca (runtime/tls.cpp then loads CAF's openssl module). Every outgoing
// cluster connection (raft peers, worker nodes registering, gateways reaching
// other members) and the cluster port go through these two functions, so no
// call site decides on its own whether to use TLS: a TLS node that made one
// plain connection would let it be the gap the cluster secret is meant to close.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>
#include <caf/io/middleman_actor.hpp>

#include "proto/interfaces.hpp"

namespace aisched::proto {

/// The middleman actor to send `caf::connect_atom` to for reaching another
/// node: the openssl module's (TLS, verifies the peer's certificate against the
/// cluster CA and presents ours) when it is loaded, else the plain one.
caf::io::middleman_actor cluster_connector(caf::actor_system& sys);

/// Publishes `endpoint` on the cluster port at `host`:`port` (0 picks a free
/// one), with TLS when the openssl module is loaded; returns the bound port.
/// Unpublishing works through `sys.middleman()` either way (both middleman
/// actors hand it to the same BASP broker).
caf::expected<uint16_t> publish_cluster_endpoint(const endpoint_actor& endpoint, uint16_t port,
                                                 const std::string& host);

/// The endpoint publish_cluster_endpoint published in `sys`; invalid before.
endpoint_actor local_endpoint(caf::actor_system& sys);

// -- members already connected ------------------------------------------------
// Between two members there must be one connection only. A second one, dialed
// while the first is up (a gateway reaching a member its raft is connected
// to), made CAF 0.17.6 drop the route between the two nodes and every proxy on
// it, the raft links included: over TLS every cluster view cost the group its
// connections. So the raft actor, which owns the one connection per pair,
// records the other member's endpoint here by cluster address ("host:port"),
// and whoever needs that member's endpoint takes it from here before dialing.

void remember_member(caf::actor_system& sys, const std::string& address, endpoint_actor ep);
void forget_member(caf::actor_system& sys, const std::string& address);
/// The endpoint of the member at `address` over the existing connection;
/// invalid if there is none.
endpoint_actor known_member(caf::actor_system& sys, const std::string& address);

// -- reaching another node's endpoint -----------------------------------------

using endpoint_fn = std::function<void(caf::expected<endpoint_actor>)>;

/// Calls `then` from `self` with the endpoint published at `address`
/// ("host:port"): the known member's over its existing connection, else a new
/// connection (TLS when configured); or with an `unavailable` error naming the
/// address. CAF keeps one connection per node, so asking again is cheap.
void reach_endpoint(caf::event_based_actor* self, const std::string& address,
                    std::chrono::milliseconds timeout, endpoint_fn then);

}  // namespace aisched::proto
