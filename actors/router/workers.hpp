// The leader's worker set as the router changes it: a worker_proxy per
// registered worker (linked to the router), the hash ring over the online
// ones and the workers_* gauges. Split from router_actor.cpp, which calls
// these on its messages.
#pragma once

#include "actors/router/router_actor.hpp"

namespace aisched::router {

/// Spawns a proxy for every registered worker that has none (leading only).
void start_proxies(self_ptr self);

/// Adds or refreshes a worker entry; the old proxy (if any) is replaced.
worker_entry& upsert_worker(self_ptr self, proto::worker info);

/// Stops every worker's proxy; the workers stay registered.
void stop_proxies(self_ptr self);

/// The set of workers taking runs changed: rebuild the hash ring and the
/// workers_* gauges.
void workers_changed(self_ptr self);

/// Moves a worker to `s`; a reachable worker that is drained (by an operator
/// or itself) is `draining`: its runs finish, nothing new goes there.
void set_status(self_ptr self, worker_entry& w, proto::worker_status s);

/// Asks native worker `w`, which left a dispatch unanswered, for an answer
/// (once at a time): it is online again only once one arrives. Its
/// heartbeats show that it reaches the leader, not that the leader reaches
/// it: cut off one way, it would swallow every run sent there, each retry
/// too. Called on its heartbeats, so an unanswered probe is asked again.
void probe_worker(self_ptr self, worker_entry& w);

/// Forgets every worker: the registry belongs to the leader, and workers
/// register again with whoever leads next.
void forget_workers(self_ptr self);

}  // namespace aisched::router
