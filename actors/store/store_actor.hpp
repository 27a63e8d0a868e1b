// The store actor answers reads of the applied state (proto::store_actor) from
// the node's state machine. It never writes. Spawned detached, so a slow disk
// read never stalls CAF's scheduler threads.
#pragma once

#include <memory>

#include "common/activity.hpp"
#include "proto/interfaces.hpp"

namespace aisched::storage {

class rocks;
class state_machine;

struct store_state {
  std::shared_ptr<rocks> db;  // keeps the database open while reads run
  std::shared_ptr<const state_machine> sm;
  inspector::activity activity;
  static inline const char* name = "store";
};

proto::store_actor::behavior_type store_actor_impl(
    proto::store_actor::stateful_pointer<store_state> self, std::shared_ptr<rocks> db,
    std::shared_ptr<const state_machine> sm);

}  // namespace aisched::storage
