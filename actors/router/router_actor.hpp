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
// fires come through here too: when no run waits, the runs a fire creates are
// placed as it is proposed (`fire_placed`), saving each a dispatch commit. Capacity is
// reserved at dispatch and released when a run ends or waits to retry; a run
// no worker can take stays pending, and the router commits why (waiting.hpp,
// `note_waiting`). Backpressure never stops dispatching: only the trigger
// defers fires. When a native worker registers it says which runs it holds:
// runs the committed state has in flight on it that it does not hold were lost
// with it and are committed as `worker_lost` failures (takeover.hpp, deciding
// by adoption.hpp); a worker silent for `dead_after`, or removed, loses its
// runs the same way. This file holds the state; router_actor.cpp the messages.
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <memory>

#include "common/activity.hpp"
#include "common/clock.hpp"
#include "common/token_bucket.hpp"
#include "actors/router/placement.hpp"
#include "actors/router/registry.hpp"
#include "actors/router/routing.hpp"
#include "actors/router/run_request.hpp"
#include "actors/router/task_book.hpp"
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

struct router_state {
  proto::raft_actor raft;
  proto::store_actor store;
  proto::trigger_actor census_to;  // told the online workers' labels when they change
  leader_epoch lead;  // leading, term, the epoch that drops stale replies, ready once rebuilt
  proto::router_actor leader_router;  // a follower's cache of the leader's router
  worker_registry workers;
  task_book tasks;
  /// Runs dispatched (or adopted) whose task's definition is being read from
  /// the store, by task id: sent when it arrives.
  std::unordered_map<uint64_t, std::vector<proto::instance>> reading;
  run_queue queue;                                        // pending runs to place
  concurrency limits;  // runs holding max_concurrency / pool slots, and pool sizes
  /// A run placed on a worker: which, and whether it holds one of its slots
  /// (a no-op on a native worker does not, candidate::holds_slot).
  struct assignment {
    std::string worker;
    bool slot = true;
  };
  std::unordered_map<std::string, assignment> assigned;  // by run id
  std::unordered_map<std::string, std::string> noted;     // run id -> reason committed
  std::vector<proto::instance> orphans;  // in flight on a worker not registered (yet)
  std::unordered_map<std::string, proto::instance> in_flight;  // committed dispatched/running
  /// The newest step (run_step) a commit told of for each run while this
  /// term's rebuild was reading the store: each page is read at its own
  /// moment, so a page's view of a run may be older than a commit already
  /// observed; such a page entry is skipped (the commits decide).
  std::unordered_map<std::string, uint64_t> seen_in_rebuild;
  /// What each native worker's latest registration said it holds, and in
  /// which epoch (an older epoch's list says nothing about this term's runs).
  struct held_runs {
    uint64_t epoch = 0;
    std::vector<proto::held_run> runs;
  };
  std::unordered_map<std::string, held_runs> held;  // by worker id
  /// Workers declared dead (or removed) this term, by id, with the attempts
  /// that ended with them: cancelled on the worker should it come back.
  /// (instance id, attempt): a lookup, not a walk, with 15 000 runs on a worker.
  std::unordered_map<std::string, std::set<std::pair<std::string, uint32_t>>> dead;
  unix_ms led_since = 0;  // when this node last became leader
  bool dispatch_scheduled = false;
  pick_context pick;
  hash_ring ring;
  proto::pressure load;
  router_options opts;
  wall_clock clock;  // opts.clock: every instant the router and its pure parts see
  std::unique_ptr<token_bucket> bucket;
  bool waiting_for_tokens = false;
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
