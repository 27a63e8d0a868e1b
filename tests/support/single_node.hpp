// Shared setup of deterministic actor tests: a fresh RocksDB in a temporary
// directory, the state machine, a raft group of one and the store actor,
// spawned in the test coordinator's actor system.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include <caf/actor_system.hpp>

#include "proto/interfaces.hpp"

namespace aisched::storage {
class rocks;
class state_machine;
}  // namespace aisched::storage

namespace aisched::test {

struct single_node {
  std::string dir;
  std::shared_ptr<storage::rocks> db;
  std::shared_ptr<storage::state_machine> sm;
  proto::raft_actor raft;
  proto::store_actor store;
  uint64_t term = 0;  // the term the member leads in
};

/// Creates the node; `prefix` names its temporary directory. Throws
/// std::runtime_error when setup fails (a broken test environment).
single_node start_single_node(caf::actor_system& sys, const std::string& prefix);

/// Sends the node's actors an exit; run the scheduler afterwards, then call
/// remove_single_node to drop the database and delete its directory.
void stop_single_node(single_node& n);
void remove_single_node(single_node& n);

}  // namespace aisched::test
