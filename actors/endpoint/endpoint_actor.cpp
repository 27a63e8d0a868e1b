// Behaviour of the endpoint actor; see endpoint_actor.hpp.
#include "actors/endpoint/endpoint_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace aisched::endpoint {

using namespace proto;

endpoint_actor::behavior_type endpoint_actor_impl(
    endpoint_actor::stateful_pointer<endpoint_state> self, router_actor router, caf::actor raft) {
  self->state.router = std::move(router);
  self->state.raft = std::move(raft);
  return {
      [=](handles_atom) { return std::make_tuple(self->state.router, self->state.raft); },
  };
}

}  // namespace aisched::endpoint
