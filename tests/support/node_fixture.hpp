// The fixture of a deterministic actor test on CAF's test coordinator. It gives the test
// a single node (RocksDB in a temporary directory, the state machine, a raft group of one,
// the store actor; see single_node.hpp), stops the actors the test keeps before the node
// at teardown, proposes commands through raft (tasks, fires, dispatches), reads committed
// instances, and keeps a wall clock for the actors under test that moves with virtual time
// (at() names its instants).
// A test derives from both:
//
//   class x_test : public test_coordinator_fixture<test::actor_test_config>,
//                  public test::node_fixture {
//     x_test() : node_fixture(sys, sched, self, "x", start_unix) { ... }
//   };
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_clock.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>  // scoped_actor, scheduler::test_coordinator
#include <gtest/gtest.h>

#include "common/clock.hpp"
#include "proto/interfaces.hpp"
#include "support/single_node.hpp"

namespace aisched::test {

/// The Unix milliseconds of the RFC 3339 instant `rfc3339`; throws std::runtime_error
/// if it is not one (a typo in a test).
unix_ms at(const char* rfc3339);

/// An actor system config with every proto type registered.
struct actor_test_config : caf::actor_system_config {
  actor_test_config();
};

class node_fixture : public ::testing::Test {
 protected:
  /// Starts the node in `sys`, its directory named after `prefix`. `sys`, `sched` and
  /// `self` are the test coordinator fixture's and must outlive this one (a base
  /// listed before it). now() is `start_unix` at construction. Throws
  /// std::runtime_error when the node cannot start (a broken test environment).
  node_fixture(caf::actor_system& sys, caf::scheduler::test_coordinator& sched,
               caf::scoped_actor& self, const std::string& prefix, unix_ms start_unix = 0);

  /// Drops the database and deletes the node's directory.
  ~node_fixture() override;

  /// Sends every kept actor and then the node's actors an exit and delivers the
  /// messages that causes: the coordinator fixture's destructor fires every pending
  /// timer, so the actors (and their state, which may hold the database) go first.
  void TearDown() override;

  // -- actors ------------------------------------------------------------------------

  /// Stops `a` at teardown, before the node.
  void keep(caf::actor a);

  template <class Handle>
  void keep(const Handle& h) {
    keep(caf::actor_cast<caf::actor>(h));
  }

  /// Subscribes `listener` to the raft actor's commits and leadership, as the node
  /// wires it, and keeps it. Sends only: run the scheduler to deliver.
  void subscribe(const proto::commit_listener_actor& listener);

  /// Tells `listener` whether it leads (in the node's term, under `leader`), as the raft
  /// actor's leadership notice does, and delivers every message that causes.
  void lead(const proto::commit_listener_actor& listener, bool leading,
            const std::string& leader = "n1");

  // -- raft --------------------------------------------------------------------------

  /// Proposes `cmd` and returns the answer; every message it causes (the commit
  /// reaching the listeners included) is delivered, no timer fires.
  caf::expected<proto::applied> propose(proto::command cmd);

  /// Proposes `create_task{t}`; the new task's id, or 0 after a test failure.
  uint64_t create_task(proto::task t);

  /// Proposes the fire of `task`'s slot `slot` at `slot`, in the node's term.
  caf::expected<proto::applied> propose_fire(uint64_t task, unix_ms slot);

  /// Proposes the dispatch of run `run` to `worker` at `at`, in the node's term.
  caf::expected<proto::applied> propose_dispatch(const std::string& run, unix_ms at,
                                                 const std::string& worker = "w1");

  /// The committed instance `id`, or an empty one after a test failure.
  proto::instance instance_of(const std::string& id);

  // -- virtual wall clock --------------------------------------------------------------

  /// The wall clock of the actors under test: `start_unix` plus the virtual time
  /// passed since construction.
  unix_ms now() const;

  /// That clock as the actors under test read it (common/clock.hpp): spawn them with it.
  wall_clock sim_clock() const { return wall_clock::simulated(start_unix_, spawned_at_); }

  /// Moves virtual time to `target` (as now() counts it) in steps of at most 100 ms,
  /// delivering every message after each step: timers fire at their instant, never early.
  void advance_to(unix_ms target);

  single_node node_;

 private:
  caf::actor_system& sys_;
  caf::scheduler::test_coordinator& sched_;
  caf::scoped_actor& self_;
  unix_ms start_unix_;
  caf::actor_clock::time_point spawned_at_;
  std::vector<caf::actor> kept_;
};

}  // namespace aisched::test
