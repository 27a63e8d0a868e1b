// A Raft group of real raft actors (actors/raft/raft_actor.*) in one actor
// system on CAF's test coordinator, for deterministic tests with virtual time.
// Each member has its own RocksDB in a temporary directory and its own state
// machine; members reach each other through raft_options::resolve_peer (a
// directory of handles kept here) instead of the middleman, and dial and greet
// each other exactly as nodes do. Each has a cluster address of its own
// (address(i)), never dialed: it is how the members' statuses name each other.
// Members can be stopped (the actor is killed and its database closed),
// restarted from their directory, and frozen (the actor keeps its mailbox but
// is not run, like a paused process); so can any other actor of the system
// (freeze_actor), e.g. the rest of a simulated node (tests/sim/scheduler_sim).
// The links between members can be cut one way (cut(from, to)), or slowed one
// way (delay(from, to, lo, hi): each message late by its own seeded draw, so
// they reorder), and healed; every link can also take a fixed latency
// (set_latency; time then moves to each message's arrival). Each member's
// raft actor is spawned as a cuttable_member, which at its mailbox drops
// whatever another member's raft actor sends it across a cut, and holds back
// what comes over a delayed link or with the latency (see cut, delay,
// set_latency). A member's disk can fail (the disk_fault hook): a raft
// actor that then ends, as a node's does on a write RocksDB will not resume
// from, is a crashed node's (ended, running).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/raft/raft_actor.hpp"
#include "proto/registry.hpp"
#include "storage/rocks.hpp"
#include "support/caf_gtest_dsl.hpp"

namespace aisched::test {

struct raft_group_config : caf::actor_system_config {
  raft_group_config() { proto::register_types(*this); }
};

class raft_group : public test_coordinator_fixture<raft_group_config> {
 public:
  using member_impl = caf::stateful_actor<raft::raft_state, raft::node_actor::base>;

  struct member {
    std::string id;
    std::string dir;
    std::shared_ptr<storage::rocks> db;
    std::shared_ptr<storage::state_machine> sm;
    raft::node_actor raft;  // invalid while stopped
    bool frozen = false;
    bool joiner = false;  // started empty (aisched --join), added by a membership change
    /// Why its raft actor ended on its own (killed by stop() is not that),
    /// once it did: an error it does not go on after, as a node's raft actor
    /// quits on a write RocksDB will not resume from (raft_actor.cpp,
    /// retry_storage). New at each start.
    std::shared_ptr<std::optional<caf::error>> ended;
  };

  /// Test hook: how member i's disk fails right now (storage::fault_kind::none
  /// while it works), asked by its RocksDB before every file write, from
  /// RocksDB's background threads too (rocks::open_options::fault).
  using disk_fault_fn = std::function<storage::fault_kind(size_t i)>;

  /// `size` members n1..n<size>, each restored from a fresh directory and
  /// spawned; `snapshot_every` as in raft_options; member i's election
  /// timeouts are drawn from seed `seed + i`, and the delays (delay()) from
  /// `seed`. With `disk_fault`, every member's database is opened with it
  /// (at each start); without, no write ever fails. Throws
  /// std::runtime_error when the test environment is broken (no temp dir,
  /// RocksDB fails).
  explicit raft_group(size_t size, uint64_t snapshot_every = 10'000, uint64_t seed = 1000,
                      disk_fault_fn disk_fault = {});
  ~raft_group();

  /// Member i's cluster address, "127.0.0.1:<7401 + i>" (raft_options::
  /// cluster_addr, and the peers' addresses the others are given).
  static std::string address(size_t i);

  size_t size() const { return members_.size(); }
  member& at(size_t i) { return members_.at(i); }
  /// Member i's raft state; requires running(i) (an ended actor's state is gone).
  raft::raft_state& state(size_t i) { return deref<member_impl>(members_.at(i).raft).state; }
  /// Whether member i's raft actor runs: started, not stopped, not ended on its own.
  bool running(size_t i) const {
    auto& m = members_.at(i);
    return m.raft && !(m.ended && m.ended->has_value());
  }
  /// Why member i's raft actor ended on its own, until stop(i) (nullopt while
  /// it runs, and once stopped): a crashed node's. Nothing of the group asks
  /// it anything from then on; stop(i) closes its database, start(i) restarts it.
  std::optional<caf::error> ended(size_t i) const;

  /// Adds and starts a member that joins the running group (aisched --join):
  /// a fresh directory, no peers, no membership until the leader adds it.
  /// Returns its index; its id is "n<index + 1>".
  size_t add_joiner();

  /// Asks member `i` to add or remove a member and delivers messages (no
  /// timers) until it answers.
  caf::expected<proto::applied> change_members(size_t i, proto::membership_change change);

  /// Kills member `i`'s actor (if it still runs) and closes its database;
  /// its directory stays.
  void stop(size_t i);
  /// Restores member `i` from its directory and spawns it again.
  void start(size_t i);
  /// Stops running member `i`'s actor; messages to it wait in its mailbox.
  void freeze(size_t i);
  void thaw(size_t i);

  /// From now on every message that member `from`'s raft actor sends member
  /// `to`'s is dropped on arrival, as by a network that loses it: requests
  /// (hello, forwarded proposals, snapshot chunks) time out at the requester,
  /// and answers `from` gives `to` are lost too. Not dropped: down and exit
  /// messages (a dead peer is still noticed) and messages from actors that are
  /// no member's raft actor. A partition is cut(a, b) and cut(b, a).
  void cut(size_t from, size_t to);
  /// From now on every message that member `from`'s raft actor sends member
  /// `to`'s arrives late, by a delay drawn for it alone, uniform in [lo, hi]
  /// (from the group's seed: a seed replays the same delays), so messages
  /// sent close together can arrive in another order. Exempt as from cut.
  /// Each is held back at `to`'s mailbox and put in it on the actor clock
  /// (virtual time: it arrives with the first tick at or past its instant),
  /// the message itself with its sender and request id, so the checks of
  /// the sender (accept_from, the hello) and the answers to requests see what
  /// they would over a real connection. One whose sender has stopped by then
  /// is dropped: a connection's messages go with its process. A both-ways
  /// delay is delay(a, b, ...) and delay(b, a, ...).
  void delay(size_t from, size_t to, std::chrono::milliseconds lo, std::chrono::milliseconds hi);
  /// From now on each message that member `from`'s raft actor sends member
  /// `to`'s is dropped on arrival with probability `permille`/1000, drawn for
  /// it alone (from the group's seed), as by a lossy network; exempt as from
  /// cut. A message a delay holds back is judged when it first arrives.
  void lose(size_t from, size_t to, uint32_t permille);
  /// Every cut, loss and delay is healed: messages flow again (the dropped ones
  /// stay lost; the held ones still arrive at their instant). The latency
  /// (set_latency) stays.
  void heal_all();
  /// The cut, loss or delay of the link from `from` to `to` alone is healed.
  void heal(size_t from, size_t to);
  /// From now on every message between members' raft actors that no delay()
  /// holds back arrives `d` late, the same `d` for each message, so each link
  /// keeps its order as a connection does (exempt as from cut); run_until
  /// then moves time to each message's arrival instead of by whole ticks, so
  /// a commit takes its round trips and no more. 0 (the default): none.
  void set_latency(std::chrono::milliseconds d);
  bool is_cut(size_t from, size_t to) const { return links_->cut.count({from, to}) > 0; }
  bool is_delayed(size_t from, size_t to) const { return links_->delayed.count({from, to}) > 0; }

  /// The cuts and delays, shared with the members' raft actors.
  struct link_table {
    std::set<std::pair<size_t, size_t>> cut;   // (from, to) member indexes
    /// (from, to) -> the delay's bounds, both included.
    std::map<std::pair<size_t, size_t>, std::pair<std::chrono::milliseconds,
                                                   std::chrono::milliseconds>>
        delayed;
    uint64_t delay_draws = 0;  // SplitMix64 state of the delays' draws (from the seed)
    std::map<std::pair<size_t, size_t>, uint32_t> lossy;  // (from, to) -> permille lost
    uint64_t loss_draws = 0;                              // SplitMix64 state (from the seed)
    std::chrono::milliseconds latency{0};  // of every link no delay holds back (set_latency)
    std::map<caf::actor_id, size_t> member_of;  // running raft actors, by actor id
  };

  /// Stops running actor `a`, any actor of the system: messages to it wait in
  /// its mailbox until thaw_actor. It must have mail waiting (send it a
  /// message it ignores first: an actor without mail is not in the job queue);
  /// throws std::runtime_error otherwise. Thaw a frozen actor before killing it.
  void freeze_actor(const caf::actor& a);
  /// Runs `a` again, its waiting mail first; a no-op when it is not frozen.
  void thaw_actor(const caf::actor& a);

  /// Moves virtual time by `total` in steps of one raft tick (with a latency,
  /// to each timer due sooner: next_step), delivering every message after each step.
  void run_for(std::chrono::milliseconds total);
  /// Runs as run_for until `pred` holds, at most `limit`; returns the virtual
  /// time it took, or -1 ms when `pred` never held.
  template <class Pred>
  std::chrono::milliseconds run_until(Pred pred, std::chrono::milliseconds limit) {
    sched.run();
    observe();
    auto spent = std::chrono::milliseconds(0);
    while (!pred()) {
      if (spent >= limit) return std::chrono::milliseconds(-1);
      auto step = next_step();
      advance_time(step);
      sched.run();
      observe();
      spent += step;
    }
    return spent;
  }

  /// Index of the one running, unfrozen member that leads and that every other
  /// such member of its membership follows; -1 while there is none.
  int agreed_leader();

  /// Proposes `cmd` through member `i` and delivers messages (no timers) until
  /// it answers.
  caf::expected<proto::applied> propose(size_t i, proto::command cmd);
  /// Creates a noop task named `name` through member `i`; its id, 0 on failure.
  uint64_t create_task(size_t i, const std::string& name);

  static constexpr std::chrono::milliseconds tick{50};  // raft_options' default

 private:
  /// How far run_until moves time next: a tick, or, with a latency, to the
  /// first timer due sooner (a message arriving, or any actor's timer), at
  /// least 1 ms.
  std::chrono::milliseconds next_step();
  raft::raft_options options_for(size_t i) const;
  /// Election safety over every step seen: at most one leader per term.
  void observe();

  std::string make_dir();

  uint64_t snapshot_every_;
  uint64_t seed_;
  disk_fault_fn disk_fault_;
  std::vector<member> members_;
  std::vector<caf::actor> frozen_;  // taken out of the job queue by freeze_actor
  std::shared_ptr<std::map<std::string, raft::node_actor>> directory_;
  std::shared_ptr<link_table> links_;
  std::map<uint64_t, std::string> leaders_by_term_;
};

}  // namespace aisched::test
