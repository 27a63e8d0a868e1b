// A follower's router hands the registry requests of its gateway to the
// leader's router (the registry lives on the leader only): finding that router
// through this node's raft and the leader's endpoint, caching it until
// leadership moves, and answering a request with the leader router's reply.
// Included only by the router's own sources (it needs the complete actor type).
#pragma once

#include <chrono>
#include <functional>

#include <caf/expected.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/router/router_actor.hpp"

namespace aisched::router {

using router_self = proto::router_actor::stateful_pointer<router_state>;

constexpr auto forward_timeout = std::chrono::seconds(10);

/// Calls `then` with the leader's router (cached in `self->state.term.leader_router`)
/// or the error that says why there is none.
void with_leader_router(router_self self,
                        std::function<void(caf::expected<proto::router_actor>)> then);

/// Answers `xs...` with the leader router's reply.
template <class Result, class... Ts>
caf::result<Result> forward_to_leader(router_self self, Ts... xs) {
  auto rp = self->make_response_promise<Result>();
  with_leader_router(self, [=](caf::expected<proto::router_actor> r) mutable {
    if (!r) {
      rp.deliver(std::move(r.error()));
      return;
    }
    self->request(*r, forward_timeout, xs...)
        .then([=](Result& x) mutable { rp.deliver(std::move(x)); },
              [=](caf::error& e) mutable {
                self->state.term.leader_router = nullptr;  // perhaps no longer the leader's
                rp.deliver(std::move(e));
              });
  });
  return rp;
}

}  // namespace aisched::router
