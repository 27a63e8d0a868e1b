// How a node talks to the other cluster members over CAF: plain TCP, or TLS with
// mutual authentication when the node was started with --tls-cert/--tls-key/
// --tls-ca (runtime/tls.cpp then loads CAF's openssl module). Every outgoing
// cluster connection (raft peers, worker nodes registering, gateways reaching
// other members) and the cluster port go through these two functions, so no
// call site decides on its own whether to use TLS: a TLS node that made one
// plain connection would let it be the gap the cluster secret is meant to close.
// Admission: the port publishes a gatekeeper, not the endpoint. With a cluster
// secret (--cluster-secret-file) both sides prove they hold it before the
// gatekeeper hands out the endpoint (proto/cluster_link_auth.hpp has the
// proofs); the dialer here is the one client of that protocol.
// It sits in common/, below the actors and the gateway that dial through it and
// within reach of aisched-inspect, which dials a node too.
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

// -- admission ----------------------------------------------------------------

using cluster_enter_atom = caf::atom_constant<caf::atom("clenter")>;
using cluster_challenge_atom = caf::atom_constant<caf::atom("clchal")>;
using cluster_prove_atom = caf::atom_constant<caf::atom("clprove")>;
using cluster_dial_atom = caf::atom_constant<caf::atom("cldial")>;

/// What a node publishes on its cluster port (actors/endpoint/gatekeeper_actor):
/// it hands the node's endpoint to peers it admits, and nothing else.
/// Without a cluster secret, `enter` answers the endpoint at once. With one,
/// `enter` is refused (`unauthenticated`); a peer sends `challenge` (its nonce,
/// its role) and gets (server nonce, server proof), checks the proof, then
/// sends `prove` (its own proof) and gets the endpoint. See cluster_auth.
using gatekeeper_actor = caf::typed_actor<
    caf::replies_to<cluster_enter_atom>::with<endpoint_actor>,
    caf::replies_to<cluster_challenge_atom, std::string, std::string>::with<std::string,
                                                                           std::string>,
    caf::replies_to<cluster_prove_atom, std::string>::with<endpoint_actor>>;

/// This node's cluster secret ("" = none: the node admits anyone, as a node
/// with only TLS, whose handshake already authenticated the peer) and the role
/// it claims when it dials ("member:n1", "worker:w1", "inspect"). Set once,
/// before the first connection and before publishing.
void set_cluster_identity(caf::actor_system& sys, std::string secret, std::string role);

/// The secret set_cluster_identity gave `sys` ("" if none).
std::string cluster_secret(caf::actor_system& sys);

/// One-shot actor that dials HOST:PORT (TLS when configured), passes the
/// node's gatekeeper (proving the secret and checking the other side's proof
/// when `sys` has one) and answers the endpoint; then quits. Errors name the
/// address: `unavailable` (cannot connect, not an aisched port) or
/// `unauthenticated` (a secret is missing on one side or they differ).
/// Each step waits at most `step_timeout`.
using dialer_actor = caf::typed_actor<
    caf::replies_to<cluster_dial_atom, std::string, uint16_t>::with<endpoint_actor>>;
dialer_actor spawn_dialer(caf::actor_system& sys, std::chrono::milliseconds step_timeout);

// -- connections --------------------------------------------------------------

/// The middleman actor to send `caf::connect_atom` to for reaching another
/// node: the openssl module's (TLS, verifies the peer's certificate against the
/// cluster CA and presents ours) when it is loaded, else the plain one.
caf::io::middleman_actor cluster_connector(caf::actor_system& sys);

/// Publishes `gatekeeper`, which guards `endpoint`, on the cluster port at
/// `host`:`port` (0 picks a free one), with TLS when the openssl module is
/// loaded; returns the bound port. Unpublish the gatekeeper through
/// `sys.middleman()` either way (both middleman actors hand it to the same
/// BASP broker).
caf::expected<uint16_t> publish_cluster_endpoint(const gatekeeper_actor& gatekeeper,
                                                 const endpoint_actor& endpoint, uint16_t port,
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
/// address, or `unauthenticated` when admission failed. CAF keeps one
/// connection per node, so asking again is cheap (admission runs again).
void reach_endpoint(caf::event_based_actor* self, const std::string& address,
                    std::chrono::milliseconds timeout, endpoint_fn then);

}  // namespace aisched::proto
