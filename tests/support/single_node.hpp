// Shared setup of deterministic actor tests: a fresh RocksDB in a temporary
// directory, the state machine, a raft group of one and the store actor,
// spawned in the test coordinator's actor system.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include <algorithm>
#include <chrono>

#include <caf/actor_clock.hpp>
#include <caf/actor_system.hpp>
#include <gtest/gtest.h>

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

// -- driving a test coordinator fixture (`f`: sys, self, sched, advance_time) --

/// The wall clock of an actor spawned at `spawned_at` with wall time `start_unix`:
/// it moves with the fixture's virtual clock.
template <class Fixture>
unix_ms virtual_now(const Fixture& f, caf::actor_clock::time_point spawned_at, unix_ms start_unix) {
  auto elapsed = f.sched.clock().now() - spawned_at;
  return start_unix + std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
}

/// Moves virtual time to `target` (as `now()` counts it) in steps of at most
/// 100 ms, delivering every message after each step: timers fire when their
/// instant is reached, never early.
template <class Fixture, class Now>
void advance_virtual_to(Fixture& f, unix_ms target, Now now) {
  f.sched.run();
  while (now() < target) {
    f.advance_time(std::chrono::milliseconds(std::min<unix_ms>(100, target - now())));
    f.sched.run();
  }
  ASSERT_EQ(now(), target);
}

/// Proposes `what` to `to` (raft with a command; the router with a fire) and
/// returns its answer, once every message is delivered (no timers).
template <class Fixture, class Handle, class What>
caf::expected<proto::applied> propose_to(Fixture& f, const Handle& to, What what) {
  caf::expected<proto::applied> out{caf::make_error(caf::sec::runtime_error, "no answer")};
  auto h = f.self->request(to, caf::infinite, proto::propose_atom::value, std::move(what));
  f.sched.run();
  if (f.self->mailbox().empty()) {
    ADD_FAILURE() << "no answer to the proposal";
    return out;
  }
  h.receive([&](proto::applied& a) { out = std::move(a); },
            [&](caf::error& e) { out = std::move(e); });
  return out;
}

/// Proposes `cmd` to `raft` and returns its answer (messages only, no timers).
template <class Fixture>
caf::expected<proto::applied> propose_via(Fixture& f, const proto::raft_actor& raft,
                                          proto::command cmd) {
  return propose_to(f, raft, std::move(cmd));
}

}  // namespace aisched::test
