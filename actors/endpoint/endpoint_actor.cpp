// Behaviour of the endpoint actor; see endpoint_actor.hpp.
#include "actors/endpoint/endpoint_actor.hpp"

#include <chrono>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/counted.hpp"
#include "proto/errors.hpp"

namespace aisched::endpoint {

using namespace proto;

endpoint_actor::behavior_type endpoint_actor_impl(
    endpoint_actor::stateful_pointer<endpoint_state> self, router_actor router, caf::actor raft,
    trigger_actor trigger, std::string http_addr, inspector_actor inspector) {
  self->state.router = std::move(router);
  self->state.raft = std::move(raft);
  self->state.trigger = std::move(trigger);
  self->state.http_addr = std::move(http_addr);
  self->state.inspector = std::move(inspector);
  auto worker_node = [] {
    return make_error(errc::unavailable, "not a scheduler node (a worker node)");
  };
  return inspector::counted(self, {
      [=](handles_atom) -> caf::result<router_actor, caf::actor> {
        if (!self->state.router) return worker_node();
        return {self->state.router, self->state.raft};
      },
      [=](trigger_atom) -> caf::result<trigger_actor> {
        if (!self->state.trigger) return worker_node();
        return self->state.trigger;
      },
      [=](raft_status_atom) -> caf::result<raft_status> {
        if (!self->state.raft) return worker_node();
        auto rp = self->make_response_promise<raft_status>();
        self->request(caf::actor_cast<raft_actor>(self->state.raft), std::chrono::seconds(2),
                      raft_status_atom::value)
            .then(
                [=](raft_status& s) mutable {
                  s.http_addr = self->state.http_addr;
                  rp.deliver(std::move(s));
                },
                [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return rp;
      },
      [=](inspector_atom) { return self->state.inspector; },
      [=](inspect_atom) {
        return inspector::summary_of(
            self, {{"scheduler", inspector::text(static_cast<bool>(self->state.router))}});
      },
  });
}

}  // namespace aisched::endpoint
