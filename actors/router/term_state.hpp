// What the router knows for one leadership term, and only for it: a new value
// on every `leader` message (router_actor.cpp), dropped whole with the term
// before it, so nothing of an older term is reset field by field or left
// behind. While leading: the tasks' terms, the runs pending, placed, in flight
// or waiting for their worker, the limits they hold, and what the workers said
// and did in this term. While following: the leader's router. What outlives a
// term (handles, options, the worker registry) is in router_state.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/router/concurrency.hpp"
#include "actors/router/placement.hpp"
#include "actors/router/task_book.hpp"
#include "proto/interfaces.hpp"
#include "proto/time.hpp"
#include "proto/types.hpp"

namespace aisched::router {

struct term_state {
  term_state() = default;
  /// A term that began at `began` (this node's leader message for it).
  explicit term_state(unix_ms began) : led_since(began) {}

  task_book tasks;
  /// Runs dispatched (or adopted) whose task's definition is being read from
  /// the store, by task id: sent when it arrives.
  std::unordered_map<uint64_t, std::vector<proto::instance>> reading;
  run_queue queue;     // pending runs to place
  concurrency limits;  // runs holding max_concurrency / pool slots, and pool sizes
  /// A run placed on a worker: which, and whether it holds one of its slots
  /// (a no-op on a native worker does not, candidate::holds_slot). The
  /// worker's count of them is its registry entry's `c.reserved`, zeroed as
  /// the term is replaced (router_actor.cpp).
  struct assignment {
    std::string worker;
    bool slot = true;
  };
  std::unordered_map<std::string, assignment> assigned;  // by run id
  /// Pending commits of runs placed meanwhile (their dispatch under way): a
  /// placement that does not make the run dispatched queues this newer view
  /// as it gives the run's capacity back (release), or it would wait for good.
  std::unordered_map<std::string, proto::instance> parked;
  /// The waiting reason proposed for each pending run, while its committed
  /// view still says what was noted: a newer attempt's commit drops it.
  std::unordered_map<std::string, std::string> noted;
  std::vector<proto::instance> orphans;  // in flight on a worker not registered (yet)
  std::unordered_map<std::string, proto::instance> in_flight;  // committed dispatched/running
  /// The newest step (run_step) a commit told of for each run while this
  /// term's rebuild was reading the store: each page is read at its own
  /// moment, so a page's view of a run may be older than a commit already
  /// observed; such a page entry is skipped (the commits decide).
  std::unordered_map<std::string, uint64_t> seen_in_rebuild;
  /// What each native worker's latest registration said it holds, and in
  /// which epoch (an older epoch's list says nothing about this term's runs).
  /// A list said to an earlier term's router is not here: it goes with its term.
  struct held_runs {
    uint64_t epoch = 0;
    std::vector<proto::held_run> runs;
  };
  std::unordered_map<std::string, held_runs> held;  // by worker id
  /// Workers declared dead (or removed) this term, by id, with the attempts
  /// that ended with them: cancelled on the worker should it come back.
  /// (instance id, attempt): a lookup, not a walk, with 15 000 runs on a worker.
  std::unordered_map<std::string, std::set<std::pair<std::string, uint32_t>>> dead;
  unix_ms led_since = 0;  // when this term began here (when leading: this node's election)
  proto::router_actor leader_router;  // a follower's cache of this term's leader's router
};

}  // namespace aisched::router
