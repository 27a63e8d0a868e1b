// Spawning and wiring the leader's scheduling actors; see scheduling.hpp.
#include "runtime/scheduling.hpp"

#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/retry/retry_actor.hpp"
#include "actors/trigger/trigger_actor.hpp"

namespace aisched::runtime {

scheduling_actors spawn_scheduling(caf::actor_system& sys, const proto::raft_actor& raft,
                                   const proto::store_actor& store, scheduling_options opts) {
  scheduling_actors out;
  out.trigger = sys.spawn(trigger::trigger_actor_impl, raft, store, opts.clock, opts.fire_ahead);
  out.retrier = sys.spawn(retry::retry_actor_impl, raft, store, opts.clock);
  opts.router.clock = opts.clock;
  out.router = sys.spawn(router::router_actor_impl, raft, store, std::move(opts.router));
  // Fires go through the router, which decides a broadcast slot's runs (one
  // per matching worker) and places the runs in the same command. Nothing
  // goes back: the router does not know the trigger.
  caf::anon_send(out.trigger, proto::subscribe_atom::value, proto::fire_proposer_actor{out.router});
  out.pressure = sys.spawn(backpressure::backpressure_actor_impl, store, out.router, out.trigger,
                           opts.limits);
  // Leader-only, all four: raft tells them whether this node leads, and every commit.
  for (auto listener : {caf::actor_cast<proto::commit_listener_actor>(out.pressure),
                        caf::actor_cast<proto::commit_listener_actor>(out.trigger),
                        caf::actor_cast<proto::commit_listener_actor>(out.retrier),
                        caf::actor_cast<proto::commit_listener_actor>(out.router)})
    caf::anon_send(raft, proto::subscribe_atom::value, listener);
  return out;
}

}  // namespace aisched::runtime
