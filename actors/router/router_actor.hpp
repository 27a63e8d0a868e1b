// The router actor: the leader's worker registry and dispatcher. While leading
// it keeps the registered workers (registry.hpp; native CAF workers,
// monitored, and external HTTP workers with their credential) with a
// worker_proxy per worker (workers.hpp); a follower's router keeps none and
// hands the registry requests of its gateway to the leader's router. It keeps
// the terms of every task and a bounded cache of definitions (task_book.hpp; a
// definition it lacks is read from the store when a run of it is sent), and
// queues pending runs; placement.hpp decides which worker takes which run
// (tenant, labels, strategy, capacity); dispatching.hpp commits a `dispatch`
// batch through raft, then hands each run to its worker's proxy. The trigger's
// fires come through here too (the one way the two talk: the router tells the
// trigger nothing): a broadcast task's slot gets one run per matching online
// worker, decided here as the fire is proposed (placement.hpp,
// broadcast_fanout; a task this term has not seen yet is read from the store
// first), and when no run waits the runs a fire creates are placed as it is
// proposed (`fire_placed`), saving each a dispatch commit. Capacity is
// reserved at dispatch and released when a run ends or waits to retry; a run
// no worker can take stays pending, and the router commits why (waiting.hpp,
// `note_waiting`). Backpressure never stops dispatching: only the trigger
// defers fires. When a native worker registers it says which runs it holds:
// runs the committed state has in flight on it that it does not hold were lost
// with it and are committed as `worker_lost` failures (takeover.hpp, deciding
// by adoption.hpp); a worker silent for `dead_after`, or removed, loses its
// runs the same way. This file holds the state (what lives one leadership term
// only is term_state.hpp's); router_actor.cpp the messages.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/activity.hpp"
#include "common/clock.hpp"
#include "common/token_bucket.hpp"
#include "actors/router/placement.hpp"
#include "actors/router/registry.hpp"
#include "actors/router/routing.hpp"
#include "actors/router/run_request.hpp"
#include "actors/router/term_state.hpp"
#include "common/run_pool.hpp"
#include "common/leader_epoch.hpp"
#include "proto/interfaces.hpp"

namespace aisched::router {

struct router_options {
  std::string report_base;                        // "http://host:port" external workers report to
  std::shared_ptr<worker::run_pool> http_pool;    // threads for HTTP dispatch
  duration_ms heartbeat_timeout = 30'000;         // external worker offline after this silence
  double dispatch_rate = 3000;                    // dispatches per second (0: unlimited)
  double dispatch_burst = 6000;
  /// A worker silent this long is dead: its attempts end `worker_lost`
  /// (takeover.hpp, bury_silent). Longer than heartbeat_timeout.
  duration_ms dead_after = 45'000;
  reveal_fn reveal_secrets;  // opens a run's secrets (storage::secret_keeper); empty: disabled
  wall_clock clock{};        // the router's and its proxies' (common/clock.hpp): the system's
};

/// The router's state. `term` is what one leadership term knows and is
/// replaced whole on each `leader` message; the rest outlives terms: the
/// handles and options it was spawned with, the leader_epoch that tells a
/// term's replies from older ones', the worker registry (kept when this node
/// leads again: its workers need not register anew; forgotten when it stops
/// leading, forget_workers), what routing and the dispatch rate carry from
/// round to round, and the flags saying a wake this actor sent itself is on
/// its way (it arrives whatever the term: cleared then, a second wake would be
/// sent).
struct router_state {
  proto::raft_actor raft;
  proto::store_actor store;
  leader_epoch lead;  // leading, term, the epoch that drops stale replies, ready once rebuilt
  term_state term;    // this term's view: built on each leader message, dropped with the term
  worker_registry workers;
  bool dispatch_scheduled = false;  // a dispatch wake is on its way (schedule_dispatch)
  pick_context pick;
  hash_ring ring;  // over the registry's online workers
  proto::pressure load;
  router_options opts;
  wall_clock clock;  // opts.clock: every instant the router and its pure parts see
  std::unique_ptr<token_bucket> bucket;
  bool waiting_for_tokens = false;  // a tokens_refilled wake is on its way
  inspector::activity activity;
  static inline const char* name = "router";
};

/// Why the router wakes itself (the payload of its wake_atom).
enum class wake_reason : uint64_t { dispatch = 0, tokens_refilled = 1 };

using self_ptr = proto::router_actor::stateful_pointer<router_state>;

/// How long the router waits for raft or the store before a request counts as failed.
constexpr auto request_timeout = std::chrono::seconds(10);

inline worker_entry* find_worker(router_state& st, const std::string& id) {
  return st.workers.find(id);
}

proto::router_actor::behavior_type router_actor_impl(self_ptr self, proto::raft_actor raft,
                                                     proto::store_actor store,
                                                     router_options opts);

}  // namespace aisched::router
