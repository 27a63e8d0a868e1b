// The faults of the scheduler simulation (scheduler_sim.hpp): a member's
// node crashed, restarted, frozen; a worker killed and restarted; and the
// seed's choice of three faults, each carried out over its window
// (inject_faults): crashes, a freeze, cuts and delays of the cluster link, a
// member's disk failing (fail_disk), a worker's outbox failing (fail_outbox).
#include <algorithm>
#include <chrono>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>
#include <utility>

#include <caf/send.hpp>

#include "tests/sim/scheduler_sim.hpp"

namespace aisched::sim {

namespace {

// A delayed link's messages arrive each this much late, uniform between the
// two: up to 8 raft ticks (50 ms), so that messages sent ticks apart
// (appends, acks, votes, forwarded proposals) arrive out of order and commits
// come late. Kept below the shortest election timeout (10 ticks): a leader
// sends a heartbeat every tick, so no gap between arrivals at a follower
// reaches it and a delay alone deposes no one (a cut does that).
constexpr std::chrono::milliseconds min_delay{10};
constexpr std::chrono::milliseconds max_delay{400};

/// How long after its disk works again a member whose raft actor fenced
/// itself may take to recover in place or end: it probes the disk at most
/// 2 s apart (raft_actor.cpp, max_retry).
constexpr duration_ms disk_settle = 5'000;

/// aisched --fault-file's word for `k` (storage::fault_while_file_exists).
const char* name_of(storage::fault_kind k) {
  switch (k) {
    case storage::fault_kind::none: return "none";
    case storage::fault_kind::no_space: return "enospc";
    case storage::fault_kind::io_error: return "eio";
    case storage::fault_kind::sync_error: return "esync";
  }
  return "?";
}

}  // namespace

// -- a member's node ------------------------------------------------------------

void scheduler_sim::kill_worker(size_t i) {
  auto& n = nodes_.at(i);
  if (n.exec) n.exec->stop();  // its runs end at their next timer, unreported
  caf::anon_send_exit(n.registrar, caf::exit_reason::kill);
  caf::anon_send_exit(n.worker, caf::exit_reason::kill);
  group_.sched.run();
  n.registrar = nullptr;
  n.worker = nullptr;
  n.link = nullptr;  // ended with the worker
  n.exec.reset();
}

void scheduler_sim::freeze_worker(size_t i, bool frozen) {
  auto& n = nodes_.at(i);
  for (auto a : {caf::actor_cast<caf::actor>(n.worker), caf::actor_cast<caf::actor>(n.registrar)}) {
    if (!frozen) {
      group_.thaw_actor(a);
      continue;
    }
    // Mail first, so that it is in the job queue (freeze_member says why).
    if (a == n.registrar)
      caf::anon_send(a, caf::down_msg{});
    else
      caf::anon_send(a, proto::inspect_atom::value);
    group_.freeze_actor(a);
  }
}

void scheduler_sim::stop_member(size_t i) {
  auto& n = nodes_.at(i);
  if (n.frozen) thaw_member(i);
  if (n.exec) n.exec->stop();  // its runs end at their next timer, unreported
  endpoints_->erase(test::raft_group::address(i));
  for (auto& a : n.actors())
    if (a) caf::anon_send_exit(a, caf::exit_reason::kill);
  group_.sched.run();  // the store lets go of the database before raft closes it
  n = node{};
  group_.stop(i);
}

void scheduler_sim::start_member(size_t i) {
  group_.start(i);
  spawn_node(i);
}

void scheduler_sim::freeze_member(size_t i) {
  auto& n = nodes_.at(i);
  if (n.frozen) return;
  group_.freeze(i);
  // Each needs mail to be in the job queue: one it answers without effect
  // (inspect, answered to nobody), or for the registrar (untyped, no
  // inspect) a down message of an actor it does not watch.
  for (auto& a : n.actors()) {
    if (a == n.registrar)
      caf::anon_send(a, caf::down_msg{});
    else
      caf::anon_send(a, proto::inspect_atom::value);
    try {
      group_.freeze_actor(a);
    } catch (const std::runtime_error& e) {  // it terminated: deaths_ says why
      violations_.push_back("freeze of " + group_.at(i).id + ": " + e.what());
    }
  }
  n.frozen = true;
}

void scheduler_sim::thaw_member(size_t i) {
  auto& n = nodes_.at(i);
  if (!n.frozen) return;
  group_.thaw(i);
  for (auto& a : n.actors()) group_.thaw_actor(a);
  n.frozen = false;
}

// -- a member's disk -------------------------------------------------------------

/// What a node does when its disk fails (actors/raft/raft_actor.cpp): the
/// first write that fails fences its raft actor (no votes, no acks, no
/// proposals; the leader-only actors told it does not lead), which probes
/// the disk with backoff. RocksDB marks an EIO on its log fatal, and an fsync
/// that fails under a synced write (the probe's) too: no Resume() mends it,
/// so the probe says `internal` and the actor ends, and with it the node
/// (runtime/scheduler_node.cpp: an essential actor ended; crash-only). So
/// here: the tick its raft actor ends, the member crashes (stop_member: every
/// actor of it killed, its runs unreported, its database closed); its
/// supervisor starts it again once the disk works (started while it still
/// failed, it would not open and exit again). A member whose raft actor
/// outlives the window must recover in place (a probe write succeeds) or end
/// within disk_settle; one still fenced then is a violation.
void scheduler_sim::fail_disk(size_t i, storage::fault_kind k, duration_ms length) {
  const auto tick = test::raft_group::tick.count();
  bool crashed = false;
  auto crash_if_ended = [&] {
    if (crashed) return;
    auto why = group_.ended(i);
    if (!why) return;
    trace("%s's raft ended (%s): its node exits", group_.at(i).id.c_str(),
          (*why ? group_.sys.render(*why) : std::string("normal exit")).c_str());
    stop_member(i);
    crashed = true;
  };
  disk_faults_->at(i).store(k);
  for (auto until = now() + length; now() < until;) {
    advance_to(std::min(until, now() + tick));
    crash_if_ended();
  }
  disk_faults_->at(i).store(storage::fault_kind::none);
  for (auto until = now() + disk_settle;;) {
    crash_if_ended();
    if (crashed || !group_.state(i).fault || now() >= until) break;
    advance_to(now() + tick);
  }
  if (crashed) {
    start_member(i);
    return;
  }
  if (auto& fault = group_.state(i).fault)
    violations_.push_back(group_.at(i).id + " still fenced " + format_duration(disk_settle) +
                          " after its disk works again (" + name_of(k) +
                          " fault): " + group_.sys.render(fault));
}

// -- a worker's outbox -----------------------------------------------------------

/// What a worker does when its outbox cannot write (actors/worker/
/// worker_actor.cpp): at the first write that fails it logs why and takes no
/// new runs from then on, refusing them (storage_error; the leader fails the
/// attempt, retried per the task's policy), and its registrar registers it
/// with no capacity at its next heartbeat (at most 5 s later); the reports it
/// could not write it still sends. It stays so until restarted with a
/// working outbox: here its operator restarts it when the window ends, as a
/// crash (kill_worker, spawn_worker), whether a write failed or not. What
/// its outbox could not keep is lost with it: the leader finds those runs
/// lost at its registration (worker_lost, retried; placed again when no
/// start of theirs was committed).
void scheduler_sim::fail_outbox(size_t i, duration_ms length) {
  outbox_faults_->at(i) = true;
  advance_to(now() + length);
  outbox_faults_->at(i) = false;
  kill_worker(i);
  spawn_worker(i);
}

// -- the seed's faults ---------------------------------------------------------

void scheduler_sim::ride_out(const std::string& kind, size_t victim, duration_ms length) {
  // One window in three (drawn from overlap_rng_, so the other draws keep
  // their order): a second fault on another member inside this one. A
  // partition only inside a worker's fault: inside a member's it would take
  // the quorum away, and the workload's requests meanwhile (a resume) would
  // fail as any client's do.
  static const char* const kinds[] = {"worker_death", "worker_freeze", "partition"};
  bool workers_only = kind == "worker_death" || kind == "worker_freeze" || kind == "worker_cut";
  if (nodes_.size() < 2 || length < 4'000 || overlap_rng_.draw(3) != 0) {
    advance_to(now() + length);
    return;
  }
  std::string second = kinds[overlap_rng_.draw(workers_only ? 3 : 2)];
  auto other = (victim + 1 + overlap_rng_.draw(nodes_.size() - 1)) % nodes_.size();
  auto end = now() + length;
  auto offset = overlap_rng_.between(0, length / 2);
  auto span = overlap_rng_.between(1'000, length - offset);  // so it ends by `end`
  advance_to(now() + offset);  // it may overshoot by a step: `span` is cut short then
  span = std::max<duration_ms>(0, std::min(span, end - now()));
  fault_window w{second, group_.at(other).id, now(), 0};
  trace("%s of %s for %s, inside %s of %s", second.c_str(), w.member.c_str(),
        format_duration(span).c_str(), kind.c_str(), group_.at(victim).id.c_str());
  if (second == "worker_death") kill_worker(other);
  if (second == "worker_freeze") freeze_worker(other, true);
  if (second == "partition")
    for (size_t j = 0; j < nodes_.size(); ++j)
      if (j != other) group_.cut(other, j), group_.cut(j, other);
  advance_to(now() + span);
  if (second == "worker_death") spawn_worker(other);
  if (second == "worker_freeze") freeze_worker(other, false);
  if (second == "partition")
    for (size_t j = 0; j < nodes_.size(); ++j)
      if (j != other) group_.heal(other, j), group_.heal(j, other);
  w.to = now();
  trace("%s of %s over", second.c_str(), w.member.c_str());
  profile_ += second + " " + w.member + " [" + at_text(w.from) + ", " + at_text(w.to) + "]; ";
  faults_.push_back(std::move(w));
  advance_to(std::max(now(), end));
}

void scheduler_sim::inject_faults() {
  for (uint32_t round = 0; round < opts_.rounds; ++round) inject_round(round);
}

void scheduler_sim::inject_round(uint32_t round) {
  using namespace std::chrono_literals;
  // Three of the first six kinds, in the order the seed draws (rng_)...
  std::vector<std::string> kinds{"leader_crash", "follower_crash", "leader_freeze",
                                 "partition",    "one_way",        "worker_death"};
  for (size_t k = kinds.size() - 1; k > 0; --k) std::swap(kinds[k], kinds[draw(k + 1)]);
  kinds.resize(3);
  // ...each replaced, one time in three, by a kind added since, drawn (with
  // whatever such a kind draws) from a stream of their own, fault_rng_: a
  // seed none of whose three is replaced draws the faults it drew before.
  static const char* const added[] = {"delay",         "disk_fault", "outbox_fault",
                                      "worker_freeze", "loss",       "worker_cut"};
  for (auto& kind : kinds)
    if (fault_rng_.draw(3) == 0) kind = added[fault_rng_.draw(std::size(added))];
  if (!opts_.every_fault.empty()) {
    static const std::set<std::string> known{
        "leader_crash", "follower_crash", "leader_freeze", "partition",    "one_way",
        "worker_death", "delay",          "disk_fault",    "outbox_fault", "worker_freeze",
        "loss",         "worker_cut"};
    if (!known.count(opts_.every_fault)) {
      violations_.push_back("no fault kind '" + opts_.every_fault + "'");
      return;
    }
    for (auto& kind : kinds) kind = opts_.every_fault;
  }
  auto members = nodes_.size();
  for (size_t k = 0; k < kinds.size(); ++k) {
    auto& kind = kinds[k];
    auto segment = static_cast<duration_ms>(round * kinds.size() + k);  // from 0, over the rounds
    auto start = t0_ + timeline::faults_from + segment * timeline::fault_segment +
                 between(0, 25) * 1'000;
    bool worker_down = kind == "worker_death" || kind == "worker_freeze" || kind == "worker_cut";
    auto length = kind == "leader_freeze" ? between(1, 6) * 1'000
                  : worker_down           ? between(5, timeline::max_worker_death / 1'000) * 1'000
                                          : between(3, timeline::max_fault / 1'000) * 1'000;
    advance_to(start);  // a no-op when the previous fault (a long worker death) ended later
    // Past its segment (long worker faults in a row; never in the first
    // round): not injected, so the faults end by span_.faults_until + 55 s.
    if (now() >= t0_ + timeline::faults_from + (segment + 1) * timeline::fault_segment) {
      trace("%s not injected: the faults before it ran past its segment", kind.c_str());
      continue;
    }
    int leader = -1;
    group_.run_until([&] { return (leader = group_.agreed_leader()) >= 0; }, 10s);
    if (leader < 0) {
      violations_.push_back("no agreed leader at " + at_text(now()) + " (before " + kind + ")");
      continue;
    }
    auto victim = static_cast<size_t>(leader);
    size_t other = victim;   // one_way, delay: messages from victim to other are lost, or late
    bool both_ways = false;  // delay, loss: and those from other to victim
    uint32_t lost = 0;       // loss: the share of them lost, per mille
    auto disk = storage::fault_kind::none;  // disk_fault: how victim's disk fails
    if (kind == "follower_crash") {
      victim = (victim + 1 + draw(members - 1)) % members;
    } else if (kind == "partition" || worker_down) {
      victim = draw(members);
    } else if (kind == "outbox_fault") {
      victim = fault_rng_.draw(members);
    } else if (kind == "one_way") {
      victim = draw(members);
      other = (victim + 1 + draw(members - 1)) % members;
    } else if (kind == "delay") {
      victim = fault_rng_.draw(members);
      other = (victim + 1 + fault_rng_.draw(members - 1)) % members;
      both_ways = fault_rng_.draw(2) == 0;
    } else if (kind == "loss") {
      victim = fault_rng_.draw(members);
      other = (victim + 1 + fault_rng_.draw(members - 1)) % members;
      both_ways = fault_rng_.draw(2) == 0;
      lost = static_cast<uint32_t>(fault_rng_.between(200, 700));
    } else if (kind == "disk_fault") {
      victim = fault_rng_.draw(members);
      disk = fault_rng_.draw(2) == 0 ? storage::fault_kind::io_error
                                     : storage::fault_kind::sync_error;
    }
    fault_window w{kind, group_.at(victim).id, now(), 0};
    if (kind == "one_way") w.member += "->" + group_.at(other).id;
    // "~", not "-": a delay loses nothing, so it cuts no worker off (cut_off).
    if (kind == "delay") w.member += (both_ways ? "<~>" : "~>") + group_.at(other).id;
    // "%": some of its messages lost, not all; no worker is cut off either.
    if (kind == "loss") w.member += (both_ways ? "<%>" : "%>") + group_.at(other).id;
    // What the window's kind does not say (profile and trace).
    auto how = kind == "disk_fault" ? std::string(" (") + name_of(disk) + ")"
               : kind == "loss"       ? " (" + std::to_string(lost / 10) + "% lost)"
                                      : std::string();
    trace("%s%s of %s for %s", kind.c_str(), how.c_str(), w.member.c_str(),
          format_duration(length).c_str());
    if (kind == "leader_freeze") {
      freeze_member(victim);
    } else if (kind == "partition") {
      for (size_t j = 0; j < members; ++j)
        if (j != victim) {
          group_.cut(victim, j);
          group_.cut(j, victim);
        }
    } else if (kind == "one_way") {
      group_.cut(victim, other);
    } else if (kind == "delay") {
      group_.delay(victim, other, min_delay, max_delay);
      if (both_ways) group_.delay(other, victim, min_delay, max_delay);
    } else if (kind == "loss") {
      group_.lose(victim, other, lost);
      if (both_ways) group_.lose(other, victim, lost);
    } else if (kind == "worker_death") {
      kill_worker(victim);
    } else if (kind == "worker_freeze") {
      freeze_worker(victim, true);
    } else if (kind == "worker_cut") {
      worker_cuts_->at(victim) = true;
    } else if (kind == "leader_crash" || kind == "follower_crash") {
      stop_member(victim);
    }
    if (kind == "leader_crash" || kind == "leader_freeze") {
      // A one-shot created as the leader is lost, its instant 0.2-1.5 s
      // away (drawn from `more_`, which nothing draws from after the plan):
      // its create waits for the next leader and commits after its instant.
      auto name = "late-" + std::to_string(segment + 1);
      create_task(one_shot_task(name, now() + more_.between(200, 1'500)));
    }
    if (kind == "disk_fault")
      fail_disk(victim, disk, length);  // its whole window, the restart included
    else if (kind == "outbox_fault")
      fail_outbox(victim, length);  // the worker's restart included
    else
      ride_out(kind, victim, length);
    if (kind == "leader_freeze")
      thaw_member(victim);
    else if (kind == "partition" || kind == "one_way" || kind == "delay" || kind == "loss")
      group_.heal_all();
    else if (kind == "worker_death")
      spawn_worker(victim);
    else if (kind == "worker_freeze")
      freeze_worker(victim, false);
    else if (kind == "worker_cut")
      worker_cuts_->at(victim) = false;
    else if (kind == "leader_crash" || kind == "follower_crash")
      start_member(victim);
    w.to = now();
    trace("%s of %s over", kind.c_str(), w.member.c_str());
    profile_ += kind + how + " " + w.member + " [" + at_text(w.from) + ", " + at_text(w.to) +
                "]; ";
    faults_.push_back(std::move(w));
  }
}

}  // namespace aisched::sim
