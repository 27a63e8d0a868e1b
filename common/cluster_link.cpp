// Plain or TLS cluster connections; see cluster_link.hpp.
#include "common/cluster_link.hpp"

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/node_id.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "proto/cluster_link_auth.hpp"
#include "proto/errors.hpp"

namespace aisched::proto {

namespace {

// Per actor system (keyed by its node id): tests may run several in a process.
struct identity {
  std::string secret;
  std::string role;
};

struct links {
  std::mutex mtx;
  std::map<caf::node_id, identity> identities;
  std::map<caf::node_id, endpoint_actor> local;
  std::map<std::pair<caf::node_id, std::string>, endpoint_actor> members;
};

links& shared_links() {
  static links instance;
  return instance;
}

identity identity_of(caf::actor_system& sys) {
  auto& l = shared_links();
  std::lock_guard<std::mutex> guard(l.mtx);
  auto it = l.identities.find(sys.node());
  return it == l.identities.end() ? identity{} : it->second;
}

caf::error unreachable(const std::string& address, const std::string& why) {
  return make_error(errc::unavailable, "leader", "cannot reach member at " + address + ": " + why);
}

/// A refusal from the other side's gatekeeper, or a failed request to it.
caf::error not_admitted(caf::actor_system& sys, const std::string& address, const caf::error& e) {
  auto v = view(e);
  if (v.code == errc::unauthenticated || v.code == errc::invalid_argument)
    return make_error(errc::unauthenticated, "cluster-secret-file",
                      "not admitted by the node at " + address + ": " + v.message);
  return unreachable(address, sys.render(e));
}

struct dialer_state {
  std::chrono::milliseconds step{0};  // the longest wait for each answer
  std::string address;                // "host:port", for messages
  static inline const char* name = "cluster_dialer";
};

using dialer_ptr = dialer_actor::stateful_pointer<dialer_state>;
using finish_fn = std::function<void(caf::expected<endpoint_actor>)>;

/// Gets the endpoint from the gatekeeper `gk`: at once without a secret; with
/// one, by challenge and proof, checking the gatekeeper's proof before
/// sending ours (a node that cannot prove is told nothing, not even our proof).
void pass_gate(dialer_ptr self, gatekeeper_actor gk, finish_fn finish) {
  auto me = identity_of(self->system());
  auto step = self->state.step;
  auto refused = [=](caf::error& e) {
    finish(not_admitted(self->system(), self->state.address, e));
  };
  auto admitted = [=](endpoint_actor& ep) { finish(std::move(ep)); };
  if (me.secret.empty()) {
    self->request(gk, step, cluster_enter_atom::value).then(admitted, refused);
    return;
  }
  auto nonce = cluster_auth::fresh_nonce();
  self->request(gk, step, cluster_challenge_atom::value, nonce, me.role)
      .then(
          [=](std::string& server_nonce, std::string& server_proof) {
            cluster_auth::transcript t{me.role, nonce, server_nonce,
                                       caf::to_string(self->system().node()),
                                       caf::to_string(gk.node())};
            if (!cluster_auth::verify(me.secret, cluster_auth::side::server, t, server_proof))
              return finish(make_error(errc::unauthenticated, "cluster-secret-file",
                                       "the node at " + self->state.address +
                                           " does not prove the cluster secret (it has another "
                                           "--cluster-secret-file)"));
            auto mine = cluster_auth::proof(me.secret, cluster_auth::side::client, t);
            self->request(gk, step, cluster_prove_atom::value, mine).then(admitted, refused);
          },
          refused);
}

dialer_actor::behavior_type dialer_impl(dialer_ptr self, std::chrono::milliseconds step) {
  self->state.step = step;
  return {
      [=](cluster_dial_atom, const std::string& host, uint16_t port) {
        auto rp = self->make_response_promise<endpoint_actor>();
        self->state.address = host + ":" + std::to_string(port);
        finish_fn finish = [=](caf::expected<endpoint_actor> x) mutable {
          if (x)
            rp.deliver(std::move(*x));
          else
            rp.deliver(std::move(x.error()));
          self->quit();
        };
        auto& sys = self->system();
        self->request(cluster_connector(sys), step, caf::connect_atom::value, host, port)
            .then(
                [=](const caf::node_id&, caf::strong_actor_ptr& ptr,
                    const std::set<std::string>& ifs) {
                  if (!ptr || !self->system().assignable<gatekeeper_actor>(ifs))
                    return finish(unreachable(self->state.address,
                                              "no aisched cluster port there (or one of "
                                              "another version)"));
                  pass_gate(self, caf::actor_cast<gatekeeper_actor>(std::move(ptr)), finish);
                },
                [=](caf::error& e) {
                  finish(unreachable(self->state.address, self->system().render(e)));
                });
        return rp;
      },
  };
}

}  // namespace

void set_cluster_identity(caf::actor_system& sys, std::string secret, std::string role) {
  auto& l = shared_links();
  std::lock_guard<std::mutex> guard(l.mtx);
  l.identities[sys.node()] = {std::move(secret), std::move(role)};
}

std::string cluster_secret(caf::actor_system& sys) { return identity_of(sys).secret; }

dialer_actor spawn_dialer(caf::actor_system& sys, std::chrono::milliseconds step_timeout) {
  return sys.spawn(dialer_impl, step_timeout);
}

caf::io::middleman_actor cluster_connector(caf::actor_system& sys) {
  // The openssl manager's actor implements the same interface as the plain
  // middleman actor (connect, publish, ...) on SSL sockets, feeding the same
  // BASP broker; the module is loaded only when TLS is configured.
  if (sys.has_openssl_manager()) return sys.openssl_manager().actor_handle();
  return sys.middleman().actor_handle();
}

caf::expected<uint16_t> publish_cluster_endpoint(const gatekeeper_actor& gatekeeper,
                                                 const endpoint_actor& endpoint, uint16_t port,
                                                 const std::string& host) {
  auto& sys = endpoint.home_system();
  {
    auto& l = shared_links();
    std::lock_guard<std::mutex> guard(l.mtx);
    l.local[sys.node()] = endpoint;
  }
  // reuse_addr: a restarted member rebinds its port while old sockets linger.
  if (sys.has_openssl_manager()) return caf::openssl::publish(gatekeeper, port, host.c_str(), true);
  return sys.middleman().publish(gatekeeper, port, host.c_str(), true);
}

endpoint_actor local_endpoint(caf::actor_system& sys) {
  auto& l = shared_links();
  std::lock_guard<std::mutex> guard(l.mtx);
  auto it = l.local.find(sys.node());
  return it == l.local.end() ? endpoint_actor{} : it->second;
}

void remember_member(caf::actor_system& sys, const std::string& address, endpoint_actor ep) {
  auto& l = shared_links();
  std::lock_guard<std::mutex> guard(l.mtx);
  l.members[{sys.node(), address}] = std::move(ep);
}

void forget_member(caf::actor_system& sys, const std::string& address) {
  auto& l = shared_links();
  std::lock_guard<std::mutex> guard(l.mtx);
  l.members.erase({sys.node(), address});
}

endpoint_actor known_member(caf::actor_system& sys, const std::string& address) {
  auto& l = shared_links();
  std::lock_guard<std::mutex> guard(l.mtx);
  auto it = l.members.find({sys.node(), address});
  return it == l.members.end() ? endpoint_actor{} : it->second;
}

void reach_endpoint(caf::event_based_actor* self, const std::string& address,
                    std::chrono::milliseconds timeout, endpoint_fn then) {
  auto colon = address.rfind(':');
  uint16_t port = 0;
  try {
    if (colon != std::string::npos) port = static_cast<uint16_t>(std::stoul(address.substr(colon + 1)));
  } catch (const std::exception&) {
    port = 0;
  }
  if (port == 0)
    return then(make_error(errc::unavailable, "leader",
                           "member address '" + address + "' is not HOST:PORT"));
  // A member this node's raft is connected to is reached over that connection:
  // dialing it a second time makes CAF 0.17 drop both (common/cluster_link.hpp).
  if (auto known = known_member(self->system(), address)) return then(known);
  auto dialer = spawn_dialer(self->system(), timeout);  // TLS and admission when configured
  self->request(dialer, timeout, cluster_dial_atom::value, address.substr(0, colon), port)
      .then([=](endpoint_actor& ep) { then(std::move(ep)); },
            [=](caf::error& e) {
              // Callers (gateways, registrars) see an unreachable member either
              // way; a refused admission is not the HTTP client's 401.
              auto v = view(e);
              if (e.category() == caf::atom("aisched") && v.code == errc::unavailable)
                return then(std::move(e));
              auto why = v.code == errc::unauthenticated ? v.message : self->system().render(e);
              then(unreachable(address, why));
            });
}

}  // namespace aisched::proto
