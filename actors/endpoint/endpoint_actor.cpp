// Behaviour of the endpoint actor; see endpoint_actor.hpp.
#include "actors/endpoint/endpoint_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/inspector/counted.hpp"
#include "proto/errors.hpp"

namespace aisched::endpoint {

using namespace proto;

endpoint_actor::behavior_type endpoint_actor_impl(
    endpoint_actor::stateful_pointer<endpoint_state> self, router_actor router, caf::actor raft,
    inspector_actor inspector) {
  self->state.router = std::move(router);
  self->state.raft = std::move(raft);
  self->state.inspector = std::move(inspector);
  return inspector::counted(self, {
      [=](handles_atom) -> caf::result<router_actor, caf::actor> {
        if (!self->state.router)
          return make_error(errc::unavailable, "not a scheduler node (a worker node)");
        return {self->state.router, self->state.raft};
      },
      [=](inspector_atom) { return self->state.inspector; },
      [=](inspect_atom) {
        return inspector::summary_of(
            self, {{"scheduler", inspector::text(static_cast<bool>(self->state.router))}});
      },
  });
}

}  // namespace aisched::endpoint
