// The ingredients of the Raft group simulator (raft_sim.cpp): its seeded
// generator, the fault profile drawn per seed, what a member keeps on its
// "disk" across crashes, packets in flight, and the commands it proposes.
// Internal to the simulator.
#pragma once

#include <caf/sum_type.hpp>
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/raft/core.hpp"
#include "tests/sim/raft_sim.hpp"

namespace aisched::raft::sim::ingredients {

struct sim_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Raw-output arithmetic only: std distributions differ between libraries.
struct rng {
  std::mt19937_64 g;
  explicit rng(uint64_t seed) : g(seed) {}
  uint64_t next() { return g(); }
  uint64_t below(uint64_t n) { return g() % n; }
  bool chance(double p) { return static_cast<double>(g() >> 11) * 0x1.0p-53 < p; }
  template <class T, size_t N>
  T pick(const T (&xs)[N]) {
    return xs[below(N)];
  }
};

/// Fault rates and core settings, drawn once per seed.
struct profile {
  double drop = 0;
  double dup = 0;
  uint64_t max_delay = 0;  // ticks
  double crash = 0;        // per chaos event
  double partition = 0;    // per chaos event
  double compact = 0;      // per chaos event
  double flush = 1;        // chance a member's ready is processed right after an input
  double leader_bias = 0;  // chance a crash or isolation targets a leader
  double tick_skip = 0;    // chance a member misses a tick (slow clock, paused process)
  // Snapshots leave at the sender's applied index rather than at the core's
  // compaction base, as the raft actor sends them (it exports the live state).
  bool snapshot_at_applied = false;
  double membership = 0;  // per chaos event: a leader proposes a membership change
  raft::config cfg;

  std::string describe() const {
    std::ostringstream out;
    out << "drop=" << drop << " dup=" << dup << " max_delay=" << max_delay << " crash=" << crash
        << " partition=" << partition << " compact=" << compact << " flush=" << flush
        << " leader_bias=" << leader_bias << " tick_skip=" << tick_skip
        << " snapshot_at_applied=" << snapshot_at_applied << " membership=" << membership
        << " auto_promote=" << cfg.auto_promote << " promote_gap=" << cfg.promote_gap
        << " election_ticks=" << cfg.election_ticks << " heartbeat_ticks=" << cfg.heartbeat_ticks
        << " pre_vote=" << cfg.pre_vote << " check_quorum=" << cfg.check_quorum
        << " max_entries_per_append=" << cfg.max_entries_per_append
        << " max_inflight_appends=" << cfg.max_inflight_appends;
    return out.str();
  }
};

inline profile draw_profile(rng& r, const options& opts) {
  static constexpr double drops[] = {0, 0.01, 0.05, 0.15, 0.3};
  static constexpr double dups[] = {0, 0.02, 0.1};
  static constexpr uint64_t delays[] = {0, 1, 2, 3};
  static constexpr double crashes[] = {0, 0.001, 0.003, 0.01};
  static constexpr double partitions[] = {0, 0.002, 0.005};
  static constexpr double compacts[] = {0, 0.005, 0.02};
  static constexpr double flushes[] = {1.0, 0.8, 0.5};
  static constexpr double biases[] = {0, 0.5, 0.9};
  static constexpr double skips[] = {0, 0.1, 0.3};
  static constexpr int elections[] = {5, 10};
  static constexpr int heartbeats[] = {1, 2};
  static constexpr size_t batches[] = {1, 3, 64};
  static constexpr size_t windows[] = {1, 2, 4};
  profile p;
  p.drop = r.pick(drops);
  p.dup = r.pick(dups);
  p.max_delay = r.pick(delays);
  p.crash = r.pick(crashes);
  p.partition = r.pick(partitions);
  p.compact = r.pick(compacts);
  p.flush = r.pick(flushes);
  p.leader_bias = r.pick(biases);
  p.tick_skip = r.pick(skips);
  p.snapshot_at_applied = r.chance(0.5);
  p.cfg.election_ticks = r.pick(elections);
  p.cfg.heartbeat_ticks = r.pick(heartbeats);
  p.cfg.max_entries_per_append = r.pick(batches);
  p.cfg.max_inflight_appends = r.pick(windows);
  p.cfg.pre_vote = r.below(4) != 0;
  p.cfg.check_quorum = r.below(4) != 0;
  static constexpr double changes[] = {0, 0.003, 0.01, 0.03};
  static constexpr uint64_t gaps[] = {0, 4, 64};
  p.membership = r.pick(changes);
  p.cfg.auto_promote = r.chance(0.5);
  p.cfg.promote_gap = r.pick(gaps);
  if (opts.pre_vote) p.cfg.pre_vote = *opts.pre_vote;
  if (opts.check_quorum) p.cfg.check_quorum = *opts.check_quorum;
  return p;
}

/// What a member made durable through its readies; all that survives a crash.
struct disk {
  hard_state hard;
  snapshot_meta snap;
  std::vector<proto::log_entry> log;  // entries after snap
  uint64_t sm_index = 0;              // the state machine's applied index
  uint64_t last_index() const { return snap.index + log.size(); }
};

struct member {
  std::string id;
  std::unique_ptr<core> c;  // null while crashed
  disk d;
  uint64_t checked_commit = 0;  // committed prefix already compared with the truth
  int group = 0;                // partition side
};

struct packet {
  message m;
  uint64_t deliver_at;
};

/// The identity of a command in the simulation: proposals are cancels with a
/// unique instance id; leaders' no-ops are "noop".
inline std::string key_of(const proto::command& cmd) {
  if (proto::holds<proto::noop>(cmd)) return "noop";
  if (auto x = proto::command_as<proto::cancel>(cmd)) return x->instance_id;
  return "?";
}

inline std::string describe(const payload& body) {
  std::ostringstream out;
  out << kind_of(body) << " term " << term_of(body);
  if (auto* x = caf::get_if<vote_request>(&body))
    out << (x->pre_vote ? " pre" : "") << " last " << x->last_log_index << "/" << x->last_log_term;
  else if (auto* x = caf::get_if<vote_response>(&body))
    out << (x->pre_vote ? " pre" : "") << (x->granted ? " granted" : " refused");
  else if (auto* x = caf::get_if<append_request>(&body))
    out << " prev " << x->prev_index << "/" << x->prev_term << " entries " << x->entries.size()
        << " commit " << x->leader_commit;
  else if (auto* x = caf::get_if<append_response>(&body))
    out << (x->success ? " ok match " : " rejects ") << x->match_index
        << (x->success ? ""
                       : " hint " + std::to_string(x->reject_hint) + "/" +
                             std::to_string(x->reject_hint_term));
  else if (auto* x = caf::get_if<snapshot_request>(&body))
    out << " last " << x->last_index << "/" << x->last_term;
  return out.str();
}

inline proto::command make_command(std::string key) {
  proto::cancel x;
  x.tenant = "sim";
  x.instance_id = std::move(key);
  return proto::command{std::move(x)};
}

}  // namespace aisched::raft::sim::ingredients
