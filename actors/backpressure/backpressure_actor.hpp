// The backpressure actor, leader only: counts the backlog (pending and
// dispatched runs) from committed state, samples the workers' load from the
// router every second, and broadcasts the level (pressure) to the trigger and
// the router whenever it changes. GET /api/v1/backpressure reads its state.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "actors/backpressure/pressure.hpp"
#include "common/activity.hpp"
#include "common/leader_epoch.hpp"
#include "proto/interfaces.hpp"

namespace aisched::backpressure {

struct backpressure_state {
  proto::store_actor store;
  proto::router_actor router;
  std::vector<proto::trigger_actor> triggers;
  thresholds limits;
  leader_epoch lead;  // leading, and the epoch that drops stale replies
  std::unordered_set<std::string> backlog;  // ids of pending / dispatched runs
  double worker_load = 0;
  proto::pressure current;
  inspector::activity activity;
  static inline const char* name = "backpressure";
};

proto::backpressure_actor::behavior_type backpressure_actor_impl(
    proto::backpressure_actor::stateful_pointer<backpressure_state> self,
    proto::store_actor store, proto::router_actor router, proto::trigger_actor trigger,
    thresholds limits);

}  // namespace aisched::backpressure
