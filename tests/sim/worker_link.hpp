// The link from the leader's side to one member's built-in worker in the
// scheduler simulation (scheduler_sim.hpp): an actor the worker is known by
// (its registrar registers this handle, so the router and its proxies reach
// the worker only through it) that passes every message on to the worker and,
// while `cut` says so, loses every message but its own node's (its
// registrar's: what it holds, whom to report to): dispatches, cancels,
// report acks, probes. What the worker sends (its registrations, heartbeats
// and reports) still arrives: a one-way worker-link partition, the gray
// failure in which a worker looks alive and takes nothing. It ends with the
// worker (linked), so a killed worker is seen down as before.
#pragma once

#include <functional>
#include <memory>

#include <caf/actor.hpp>

#include "proto/interfaces.hpp"

namespace aisched::sim {

/// Spawns the link to `worker` in `sys`; `cut()` is asked for each message
/// not sent by `*local` (set once the worker's registrar is spawned).
proto::worker_actor spawn_worker_link(caf::actor_system& sys, const proto::worker_actor& worker,
                                      std::function<bool()> cut,
                                      std::shared_ptr<caf::actor_addr> local);

}  // namespace aisched::sim
