// Behaviour of the gatekeeper; see gatekeeper_actor.hpp.
#include "actors/endpoint/gatekeeper_actor.hpp"

#include <chrono>
#include <cstdio>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "proto/errors.hpp"

namespace aisched::endpoint {

using namespace proto;

namespace {

using self_ptr = gatekeeper_actor::stateful_pointer<gatekeeper_state>;

/// The connecting actor, by node and actor id: a node may dial several times
/// at once (raft, gateway, registrar), each with its own challenge.
std::string client_key(const caf::strong_actor_ptr& sender) {
  return caf::to_string(sender->node()) + "/" + std::to_string(sender->id());
}

void log_refusal(self_ptr self, const caf::strong_actor_ptr& sender, const std::string& role,
                 const caf::error& why) {
  // A refused peer retries every few hundred ms: say it once per process.
  auto node = caf::to_string(sender->node());
  if (!self->state.refusals_logged.insert(node).second) return;
  std::fprintf(stderr, "cluster: refused %s from node %s: %s\n", role.c_str(), node.c_str(),
               view(why).message.c_str());
}

}  // namespace

gatekeeper_actor::behavior_type gatekeeper_actor_impl(self_ptr self, endpoint_actor endpoint,
                                                      std::string secret) {
  self->state.endpoint = std::move(endpoint);
  if (!secret.empty()) self->state.gate.emplace(std::move(secret));
  auto no_secret_here = [] {
    return make_error(errc::unauthenticated, "cluster-secret-file",
                      "this node has no cluster secret; start every node with the same "
                      "--cluster-secret-file, or none of them");
  };
  return {
      [=](cluster_enter_atom) -> caf::result<endpoint_actor> {
        if (!self->state.gate) return self->state.endpoint;
        auto why = make_error(errc::unauthenticated, "cluster-secret-file",
                              "this node requires the cluster secret: pass --cluster-secret-file "
                              "FILE (the file every node of the cluster has)");
        if (auto sender = self->current_sender())
          log_refusal(self, sender, "a peer without the secret", why);
        return why;
      },
      [=](cluster_challenge_atom, std::string& nonce,
          std::string& role) -> caf::result<std::string, std::string> {
        if (!self->state.gate) return no_secret_here();
        auto sender = self->current_sender();
        if (!sender) return make_error(errc::unauthenticated, "a challenge needs a sender");
        auto c = self->state.gate->issue(client_key(sender), std::move(role), std::move(nonce),
                                         caf::to_string(sender->node()),
                                         caf::to_string(self->node()),
                                         self->clock().now());
        if (!c) return std::move(c.error());
        return {std::move(c->server_nonce), std::move(c->server_proof)};
      },
      [=](cluster_prove_atom, const std::string& proof) -> caf::result<endpoint_actor> {
        if (!self->state.gate) return no_secret_here();
        auto sender = self->current_sender();
        if (!sender) return make_error(errc::unauthenticated, "a proof needs a sender");
        auto role = self->state.gate->accept(client_key(sender), proof, self->clock().now());
        if (!role) {
          log_refusal(self, sender, "a peer with a wrong proof", role.error());
          return std::move(role.error());
        }
        return self->state.endpoint;
      },
  };
}

}  // namespace aisched::endpoint
