// aisched-chaos: starts a three-member aisched group and a worker node
// (process_control; each node in its own network namespace where permitted,
// network), drives a workload at random members (workload), injects faults on a
// schedule drawn from --seed (SIGKILL and restart of the leader, a follower and
// the worker node; SIGSTOP/SIGCONT of a member; a member's link cut; the leader
// killed in a bulk enqueue; a follower's WAL damaged, then restored:
// faults_known below), then lets the group settle and checks the history
// (checks, bursts, leaders). Prints a report on stdout; exit 0 with no
// violation, 1 with violations, 2 on a harness error.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/clock.hpp"
#include "proto/time.hpp"
#include "tools/chaos/checks.hpp"
#include "tools/chaos/leaders.hpp"
#include "tools/chaos/network.hpp"
#include "tools/chaos/process_control.hpp"
#include "tools/chaos/wal_damage.hpp"
#include "tools/chaos/workload.hpp"

using namespace aisched::chaos;
using aisched::steady_now;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

struct options {
  std::string binary = AISCHED_CHAOS_DEFAULT_BINARY;
  uint64_t seed = 1;
  double duration_s = 120;   // workload and faults
  double settle_s = 240;     // quiet phase: settling deadline
  double fault_gap_s = 12;   // mean pause between faults
  double hard_deadline_s = 0;  // 0: duration + settle + 180 s
  bool no_partitions = false;
  std::vector<std::string> faults;  // --faults: the kinds injected (empty: all)
  workload_options work;
};

/// A harness error: the report says so and the exit status is 2.
struct harness_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class fault {
  kill_leader,
  kill_follower,
  stop_member,
  kill_worker,
  isolate_member,
  kill_leader_at_slot,  // 0.1-0.3 s before a slot: runs wait on its worker for their instant
  kill_mid_burst,       // the leader, while it accepts, fires or collects a bulk enqueue
  damage_wal,           // a follower's WAL damaged: it must refuse to start; then restored
};

/// Each fault's name (the report) and what it does (--help), in enum order.
struct fault_info {
  const char* name;
  const char* what;
};
constexpr fault_info faults_known[] = {
    {"kill_leader", "SIGKILL of the leader, restarted on its data dir and ports after 1-4 s"},
    {"kill_follower", "SIGKILL of a follower, restarted after 1-4 s"},
    {"stop_member", "SIGSTOP of a member for 2-6 s, then SIGCONT"},
    {"kill_worker", "SIGKILL of the worker node, restarted after 1-4 s"},
    {"isolate_member",
     "a member (the leader half of the time) cut off for 3-8 s (with network namespaces)"},
    {"kill_leader_at_slot",
     "SIGKILL of the leader 0.1-0.3 s before a slot of a periodic task, restarted after 1-4 s"},
    {"kill_mid_burst",
     "a bulk enqueue of --burst runs sent to the leader, SIGKILLed while it accepts, fires or "
     "collects them, restarted after 1-4 s"},
    {"damage_wal",
     "SIGKILL of a follower and 64 bytes XORed in the middle of its newest WAL: it must refuse "
     "to start (exit 1, \"damaged\"); then its bytes are put back (a restore) and it must "
     "start and rejoin"},
};

static_assert(std::size(faults_known) == size_t(fault::damage_wal) + 1, "a fault without its info");

const char* name_of(fault k) { return faults_known[int(k)].name; }

/// The run's state, as the report prints it.
struct chaos_run {
  options opt;
  clock::time_point t0 = steady_now();
  std::mt19937_64 rng;
  std::map<std::string, size_t> faults;  // by kind
  std::vector<std::string> timeline;     // one line per fault
  std::vector<std::string> violations;
  std::vector<std::string> notes;        // not violations, worth reading
  std::string partitions;                // why partitions are skipped ("" if they are not)
  workload_counts counts;
  size_t acked = 0, acked_periodic = 0, acked_manual = 0;
  run_summary runs;
  settle_outcome settled;
  uint64_t commit = 0;

  double elapsed() const { return std::chrono::duration<double>(steady_now() - t0).count(); }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
  size_t pick(size_t n) { return static_cast<size_t>(rng() % n); }
  void log(const std::string& line) const {
    std::fprintf(stderr, "[chaos +%6.1fs] %s\n", elapsed(), line.c_str());
  }
};

/// Sleeps `d`, returning early when the harness is asked to stop.
void pause_for(std::chrono::duration<double> d) {
  auto until = steady_now() + std::chrono::duration_cast<clock::duration>(d);
  while (steady_now() < until && !stop_requested()) std::this_thread::sleep_for(50ms);
}

void publish(port_board& board, node& n) {
  if (n.role() == node::kind::member) board.set(n.id(), n.running() ? n.http_endpoint() : "");
}

/// The leader every member that answers names, if they agree and it says it leads.
node* agreed_leader(group& g) {
  std::string leader;
  for (auto* m : g.members()) {
    if (!m->running() || m->stopped()) continue;
    auto v = view_of(m->http_endpoint());
    if (!v.ok || v.leader.empty() || (!leader.empty() && v.leader != leader)) return nullptr;
    leader = v.leader;
  }
  auto* l = g.member(leader);
  if (!l || !l->running() || l->stopped()) return nullptr;
  auto v = view_of(l->http_endpoint());
  return v.ok && v.role == "leader" ? l : nullptr;
}

node* await_leader(group& g, clock::duration timeout) {
  auto until = steady_now() + timeout;
  while (steady_now() < until && !stop_requested()) {
    if (auto* l = agreed_leader(g)) return l;
    std::this_thread::sleep_for(200ms);
  }
  return nullptr;
}

/// Restarts `n`; a failure is a violation (a killed node must come back on its
/// data dir and ports), tried once more before giving up.
void restart(chaos_run& run, group& g, port_board& board, node& n) {
  for (int attempt = 0; attempt < 2 && !stop_requested(); ++attempt) {
    size_t join_via = 0;
    auto members = g.members();
    for (size_t i = 0; i < members.size(); ++i)
      if (members[i]->running() && !members[i]->stopped()) join_via = i;
    auto err = g.restart(n, steady_now() + 60s, join_via);
    publish(board, n);
    if (err.empty()) return;
    run.violations.push_back(n.id() + " did not restart: " + err);
  }
}

/// Any node that ended without the harness killing it is a violation (a crash);
/// it is restarted so the run goes on.
void reap_crashes(chaos_run& run, group& g, port_board& board) {
  std::vector<node*> all = g.members();
  all.push_back(&g.worker());
  for (auto* n : all) {
    if (n->running()) continue;
    run.violations.push_back(n->id() + " exited by itself (wait status " +
                             std::to_string(n->last_unexpected_exit()) + "); log tail:\n" +
                             n->current_log().substr(n->current_log().size() > 800
                                                         ? n->current_log().size() - 800
                                                         : 0));
    run.log(n->id() + " exited by itself; restarting it");
    restart(run, g, board, *n);
  }
}

/// Waits until 0.1-0.3 s before the next slot of the first periodic task, as
/// `leader` plans it: inside the fire-ahead window, where that slot's runs wait
/// on a worker for their instant. False (and a note) when no slot is known.
bool await_slot_window(chaos_run& run, node& leader, const workload& work) {
  uint64_t periodic = 0;
  int64_t every = 0;
  for (auto& t : work.acknowledged())
    if (t.interval_ms > 0) {
      periodic = t.id;
      every = t.interval_ms;
      break;
    }
  auto next = periodic ? next_fire_ms(leader.http_endpoint(), periodic) : std::nullopt;
  if (!next) {
    run.notes.push_back("no next slot known at +" + std::to_string(int(run.elapsed())) +
                        "s; kill_leader_at_slot skipped");
    return false;
  }
  auto early = static_cast<int64_t>(run.uniform(100, 300));
  auto wait = *next - early - aisched::system_now_ms();
  while (wait < 0) wait += every;  // that window passed: the next slot's
  pause_for(std::chrono::milliseconds(wait));
  return true;
}

/// kill_mid_burst: sends a bulk enqueue of --burst runs to `leader` and
/// SIGKILLs it in a phase drawn from the seed: while it accepts the batch (0-40 ms
/// after sending: before its answer, committed or not), fires it (0-100 ms after
/// the answer: runs being dispatched) or collects it (0.3-1 s after: runs ending,
/// their reports in flight). The leader rather than the member whose worker
/// holds the most runs: it holds every stage (the proposal, the dispatch, the
/// reports) and its own worker's share of the runs, while a follower's worker
/// alone is what kill_follower and kill_worker already lose. Returns what
/// happened, for the timeline.
std::string kill_mid_burst(chaos_run& run, workload& work, node& leader) {
  static const char* phases[] = {"accepting", "firing", "collecting"};
  auto phase = run.pick(3);
  double after_s = phase == 0   ? run.uniform(0, 0.04)
                   : phase == 1 ? run.uniform(0, 0.1)
                                : run.uniform(0.3, 1.0);
  auto answer = std::async(std::launch::async,
                           [&work, id = leader.id(), endpoint = leader.http_endpoint()] {
                             return work.enqueue_burst(id, endpoint);
                           });
  // Bounded by the request's own timeout.
  bool answered = phase > 0 && answer.wait_for(run.opt.work.request_timeout + 1s) ==
                                   std::future_status::ready;
  pause_for(std::chrono::duration<double>(after_s));
  leader.signal(SIGKILL);
  auto status = answer.get();
  std::ostringstream out;
  out.precision(2);
  out << std::fixed << "burst of " << run.opt.work.burst << " runs, killed " << phases[phase]
      << ", " << after_s << " s after " << (answered ? "the answer" : "sending") << "; answered "
      << (status == 0 ? std::string("nothing") : std::to_string(status));
  return out.str();
}

/// damage_wal: SIGKILLs follower `target`, damages its newest write-ahead log
/// in the middle and starts it again with the same flags. It must refuse (exit
/// status 1, a message saying "damaged": README "Storage faults"); if it starts
/// and serves, that is a violation and it stays. A refusing member gets its
/// bytes back (what restoring the file from a backup does; the refused start
/// must have changed nothing) and must start and rejoin. With no write-ahead
/// log big enough to damage, the fault is skipped (a note says why) and the
/// member restarted. Returns what happened.
std::string damage_wal(chaos_run& run, group& g, port_board& board, node& target) {
  target.signal(SIGKILL);
  publish(board, target);
  auto wal = damage_newest_wal(g.data_dir(target));
  if (!wal.skipped.empty()) {
    run.notes.push_back("damage_wal of " + target.id() + " skipped: " + wal.skipped);
    restart(run, g, board, target);
    return "skipped: " + wal.skipped + "; restarted";
  }
  std::ostringstream out;
  out << std::filesystem::path(wal.file).filename().string() << " of " << wal.size
      << " bytes damaged at " << wal.offset;
  auto err = target.start(steady_now() + 60s);  // its data dir, ports and flags
  publish(board, target);
  if (err.empty()) {
    run.violations.push_back(target.id() +
                             " started and served on a write-ahead log damaged in its middle (" +
                             wal.file + ")");
    out << "; it STARTED and served";
    return out.str();
  }
  auto status = target.last_unexpected_exit();
  bool exit_1 = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 1;
  bool says = target.current_log().find("damaged") != std::string::npos;
  if (exit_1 && says) {
    out << "; it refused to start (exit 1, \"damaged\")";
  } else {
    run.violations.push_back(target.id() +
                             " did not refuse its damaged write-ahead log as documented (exit "
                             "status 1, \"damaged\"): " +
                             err);
    out << "; it did not refuse as documented";
  }
  auto back = damage_newest_wal(g.data_dir(target));  // XOR again: the bytes as they were
  if (back.file != wal.file)
    run.violations.push_back("the refused start of " + target.id() +
                             " changed its data directory: the newest write-ahead log is now " +
                             back.file + ", was " + wal.file);
  restart(run, g, board, target);
  out << "; restored and restarted at +" << run.elapsed() << "s";
  return out.str();
}

void inject(chaos_run& run, group& g, port_board& board, network& net, workload& work,
            fault kind) {
  node* target = nullptr;
  auto members = g.members();
  if (kind == fault::kill_leader_at_slot) {
    auto* leader = await_leader(g, 30s);
    if (!leader || !await_slot_window(run, *leader, work)) return;
    target = leader;
  } else if (kind == fault::isolate_member) {
    // The leader half of the time: a deposed leader must rejoin cleanly.
    auto* leader = run.pick(2) == 0 ? await_leader(g, 30s) : nullptr;
    target = leader ? leader : members[run.pick(members.size())];
  } else if (kind == fault::kill_leader || kind == fault::kill_follower ||
             kind == fault::kill_mid_burst || kind == fault::damage_wal) {
    auto* leader = await_leader(g, 30s);
    if (!leader) {
      run.notes.push_back("no agreed leader within 30 s before a " + std::string(name_of(kind)) +
                          " at +" + std::to_string(int(run.elapsed())) + "s; fault skipped");
      return;
    }
    if (kind == fault::kill_leader || kind == fault::kill_mid_burst) {
      target = leader;
    } else {
      std::vector<node*> followers;
      for (auto* m : members)
        if (m != leader) followers.push_back(m);
      target = followers[run.pick(followers.size())];
    }
  } else if (kind == fault::stop_member) {
    target = members[run.pick(members.size())];
  } else {
    target = &g.worker();
  }
  std::ostringstream line;
  line.precision(1);
  line << std::fixed << "+" << run.elapsed() << "s " << name_of(kind) << " " << target->id();
  if ((kind == fault::isolate_member || kind == fault::stop_member) && agreed_leader(g) == target)
    line << " (the leader)";
  if (kind == fault::isolate_member) {
    double for_s = run.uniform(3, 8);
    if (auto err = net.set_link(target->slot(), false); !err.empty())
      throw harness_error("cannot cut a link: " + err);
    pause_for(std::chrono::duration<double>(for_s));
    if (auto err = net.set_link(target->slot(), true); !err.empty())
      throw harness_error("cannot heal a link: " + err);
    line << " (cut off " << for_s << " s)";
  } else if (kind == fault::stop_member) {
    double for_s = run.uniform(2, 6);
    target->signal(SIGSTOP);
    pause_for(std::chrono::duration<double>(for_s));
    target->signal(SIGCONT);
    line << " (stopped " << for_s << " s)";
  } else if (kind == fault::damage_wal) {
    line << " (" << damage_wal(run, g, board, *target) << "; over at +" << run.elapsed() << "s)";
  } else {
    double down_s = run.uniform(1, 4);
    if (kind == fault::kill_mid_burst) line << " (" << kill_mid_burst(run, work, *target) << ")";
    target->signal(SIGKILL);  // a burst's leader is down already
    publish(board, *target);
    pause_for(std::chrono::duration<double>(down_s));
    restart(run, g, board, *target);
    line << " (down " << down_s << " s, serving again at +" << run.elapsed() << "s)";
  }
  ++run.faults[name_of(kind)];
  run.timeline.push_back(line.str());
  run.log(line.str());
}

/// Faults, one at a time, for --duration seconds from now (the group is up).
void fault_phase(chaos_run& run, group& g, port_board& board, network& net, workload& work) {
  auto end = steady_now() + std::chrono::duration_cast<clock::duration>(
                                std::chrono::duration<double>(run.opt.duration_s));
  pause_for(5s);  // a first stretch without faults: the workload gets going
  std::vector<fault> bag;
  while (steady_now() < end && !stop_requested()) {
    if (bag.empty()) {
      // Every kind chosen (--faults) once per round, in an order drawn from
      // the seed; isolate_member only with network namespaces.
      for (auto kind : {fault::kill_leader, fault::kill_follower, fault::stop_member,
                        fault::kill_worker, fault::kill_leader_at_slot, fault::kill_mid_burst,
                        fault::damage_wal, fault::isolate_member}) {
        auto& chosen = run.opt.faults;
        if (!chosen.empty() &&
            std::find(chosen.begin(), chosen.end(), name_of(kind)) == chosen.end())
          continue;
        if (kind != fault::isolate_member || net.enabled()) bag.push_back(kind);
      }
      if (bag.empty()) return;  // only isolate_member chosen, and no namespaces
      std::shuffle(bag.begin(), bag.end(), run.rng);
    }
    auto kind = bag.back();
    bag.pop_back();
    reap_crashes(run, g, board);
    inject(run, g, board, net, work, kind);
    auto gap = run.uniform(run.opt.fault_gap_s / 2, run.opt.fault_gap_s * 1.5);
    auto left = std::chrono::duration<double>(end - steady_now()).count();
    pause_for(std::chrono::duration<double>(std::max(0.0, std::min(gap, left))));
  }
}

/// Once the nodes are stopped nothing carrying the marker may survive: not a
/// node, not a supervisor (its command line names the run's directory, below the
/// marker through --scratch-dir), not a run's shell. Survivors are listed and killed.
void check_orphans(chaos_run& run, const std::string& marker) {
  auto until = steady_now() + 10s;  // a run's supervisor may take a moment to go
  auto left = processes_with_marker(marker);
  while (!left.empty() && steady_now() < until) {
    std::this_thread::sleep_for(100ms);
    left = processes_with_marker(marker);
  }
  for (auto pid : left) {
    run.violations.push_back("orphaned process " + std::to_string(pid) + ": " + command_line(pid));
    kill(pid, SIGKILL);
  }
}

void print_report(const chaos_run& run, const std::string& error) {
  auto& o = run.opt;
  std::ostringstream r;
  r.precision(1);
  r << std::fixed;
  r << "aisched-chaos report\n";
  r << "seed " << o.seed << ", duration " << o.duration_s << " s, settle deadline " << o.settle_s
    << " s, elapsed " << run.elapsed() << " s\n";
  if (!error.empty()) r << "harness error: " << error << "\n";
  if (run.partitions.empty())
    r << "partitions: a member's link to the others cut (each node in its own network namespace)\n";
  else
    r << "partitions skipped: " << run.partitions << "\n";
  size_t total = 0;
  for (auto& [k, n] : run.faults) total += n;
  r << "faults injected: " << total;
  for (auto& f : faults_known) {
    std::string k = f.name;
    if (k == "isolate_member" && !run.partitions.empty()) continue;
    auto it = run.faults.find(k);
    r << (&f == faults_known ? " (" : ", ") << k << " "
      << (it == run.faults.end() ? 0 : it->second);
  }
  r << ")\n";
  for (auto& t : run.timeline) r << "  " << t << "\n";
  auto& c = run.counts;
  r << "operations: " << c.creates_sent << " creates sent (" << c.creates_acked << " acknowledged, "
    << c.creates_refused << " refused";
  for (auto& [status, n] : c.refused_by_status) r << " [" << n << "x " << status << "]";
  r << ", " << c.creates_unanswered << " unanswered), "
    << c.pauses_sent << " pauses sent (" << c.pauses_acked << " acknowledged), "
    << c.bursts_sent << " bursts sent (" << c.bursts_acked << " acknowledged with "
    << c.burst_runs_acked << " runs, " << c.bursts_refused << " refused";
  for (auto& [status, n] : c.bursts_refused_by_status) r << " [" << n << "x " << status << "]";
  r << ", " << c.bursts_unanswered << " unanswered)\n";
  r << "acknowledged creates: " << run.acked << " (" << run.acked_periodic << " periodic, "
    << run.acked - run.acked_periodic - run.acked_manual << " one-shot, " << run.acked_manual
    << " manual)\n";
  r << "runs: " << run.runs.instances;
  for (auto& [state, n] : run.runs.by_state) r << ", " << state << " " << n;
  if (run.runs.held_by_pause)
    r << " (" << run.runs.held_by_pause << " of them held by their task's pause)";
  r << "; executions (side-effect lines) " << run.runs.effect_lines << ", runs retried "
    << run.runs.retried_runs << ", attempts lost with their worker " << run.runs.lost_attempts
    << "\n";
  if (!run.runs.ended_attempts.empty()) {
    r << "earlier attempts of retried runs:";
    for (auto& [how, n] : run.runs.ended_attempts) r << " [" << n << "x " << how << "]";
    r << "\n";
  }
  if (run.settled.settled)
    r << "settled: in " << run.settled.seconds << " s (leader " << run.settled.leader
      << ", commit index " << run.commit << " on every member)\n";
  else
    r << "settled: no (" << run.settled.reason << ")\n";
  for (auto& n : run.notes) r << "note: " << n << "\n";
  r << "violations: " << run.violations.size() << "\n";
  for (auto& v : run.violations) r << "  " << v << "\n";
  std::cout << r.str() << std::flush;
}

/// Prints the members' log lines that name each run in `ids` (runs left
/// stuck), at most `per_run` of them each: what the report alone cannot say.
void print_traces(const std::vector<std::string>& ids, const std::map<std::string, std::string>& logs,
                  size_t per_run = 80) {
  for (auto& id : ids) {
    std::ostringstream out;
    size_t shown = 0, found = 0;
    for (auto& [member, text] : logs) {
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);) {
        if (line.find(id) == std::string::npos) continue;
        if (found++ < per_run) out << "  " << member << ": " << line << "\n";
        else ++shown;
      }
    }
    std::cout << "log lines naming run " << id << " (" << found << "):\n" << out.str();
    if (shown) std::cout << "  ... " << shown << " more\n";
    std::cout << std::flush;
  }
}

int run_chaos(chaos_run& run, network& net) {
  auto& o = run.opt;
  run.partitions = net.enabled() ? "" : net.skipped();
  group g(o.binary, net);
  run.log("group root " + g.root());
  port_board board;
  if (auto err = g.start(steady_now() + 90s); !err.empty())
    throw harness_error("could not start the group: " + err);
  for (auto* m : g.members()) publish(board, *m);
  if (!await_leader(g, 60s)) throw harness_error("the group elected no leader within 60 s");
  run.log("group up");

  workload work(board, g.effects_path(), run.rng(), o.work);
  if (auto err = work.create_periodic(steady_now() + 60s); !err.empty()) throw harness_error(err);
  if (auto err = work.create_bulk_task(steady_now() + 60s); !err.empty()) throw harness_error(err);
  work.start_creates();
  fault_phase(run, g, board, net, work);
  work.stop_creates();
  if (stop_requested()) throw harness_error("interrupted");
  run.log("faults over; settling");

  reap_crashes(run, g, board);
  if (auto err = work.pause_periodic(steady_now() + 60s); !err.empty())
    run.violations.push_back("could not pause the periodic tasks: " + err);
  auto acked = work.acknowledged();
  run.acked = acked.size();
  for (auto& t : acked) {
    run.acked_periodic += t.interval_ms > 0;
    run.acked_manual += t.interval_ms == 0 && t.at_ms == 0;
  }
  run.settled = settle(board, g.members().size(), acked,
                       steady_now() + std::chrono::duration_cast<clock::duration>(
                                          std::chrono::duration<double>(o.settle_s)));
  if (stop_requested()) throw harness_error("interrupted");
  run.log(run.settled.settled ? "settled" : "did not settle: " + run.settled.reason);
  std::string leader_endpoint;
  if (auto* l = g.member(run.settled.leader)) leader_endpoint = l->http_endpoint();
  for (auto& m : run.settled.snapshot) run.commit = std::max(run.commit, m.view.commit);
  auto found =
      check_history(run.settled, acked, work.bursts(), g.effects_path(), leader_endpoint, run.runs);
  run.violations.insert(run.violations.end(), found.begin(), found.end());
  reap_crashes(run, g, board);
  run.counts = work.counts();

  g.stop_all(10s);
  std::map<std::string, std::string> logs;
  for (auto& [id, path] : g.member_logs()) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    logs[id] = text.str();
  }
  print_traces(run.runs.stuck, logs);
  size_t elections = 0;
  auto split_brain = check_one_leader_per_term(logs, elections);
  run.violations.insert(run.violations.end(), split_brain.begin(), split_brain.end());
  run.notes.push_back(std::to_string(elections) + " elections won, at most one leader per term: " +
                      (split_brain.empty() ? "held" : "VIOLATED"));
  check_orphans(run, g.marker());
  return run.violations.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  chaos_run run;
  auto& o = run.opt;
  CLI::App app{"aisched-chaos: fault injection against a three-member aisched group on loopback"};
  app.add_option("--aisched", o.binary, "the aisched binary")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the fault schedule and the workload")
      ->capture_default_str();
  app.add_option("--duration", o.duration_s, "seconds of workload and faults")
      ->capture_default_str();
  app.add_option("--settle", o.settle_s, "seconds the group may take to settle afterwards")
      ->capture_default_str();
  app.add_option("--fault-gap", o.fault_gap_s, "mean seconds between faults")->capture_default_str();
  app.add_option("--hard-deadline", o.hard_deadline_s,
                 "seconds after which everything is killed (default: duration + settle + 180)");
  app.add_flag("--no-partitions", o.no_partitions,
               "run every node on the host's loopback, without network namespaces");
  app.add_option("--periodic", o.work.periodic, "@every tasks")->capture_default_str();
  unsigned every_ms = 1000, gap_ms = 500;
  app.add_option("--every-ms", every_ms, "interval of the periodic tasks")->capture_default_str();
  app.add_option("--create-gap-ms", gap_ms, "mean gap between one-shot creates")
      ->capture_default_str();
  app.add_option("--burst", o.work.burst, "runs per bulk enqueue of kill_mid_burst")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  std::vector<std::string> known;
  for (auto& f : faults_known) known.push_back(f.name);
  app.add_option("--faults", o.faults, "the faults injected, comma-separated (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember(known));
  std::string faults_help =
      "Faults, one at a time every --fault-gap s, each once per round in an order drawn from "
      "--seed:\n";
  for (auto& f : faults_known) faults_help += "  " + std::string(f.name) + ": " + f.what + "\n";
  app.footer(faults_help);
  CLI11_PARSE(app, argc, argv);
  o.work.every = milliseconds(every_ms);
  o.work.create_gap = milliseconds(gap_ms);
  run.rng.seed(o.seed);
  // Before any thread: unshare() moves only the calling thread.
  network net(!o.no_partitions);
  if (o.hard_deadline_s <= 0) o.hard_deadline_s = o.duration_s + o.settle_s + 180;

  install_cleanup_handlers();
  // The last resort: whatever hangs, nothing outlives the hard deadline.
  std::thread([limit = o.hard_deadline_s] {
    std::this_thread::sleep_for(std::chrono::duration<double>(limit));
    std::fprintf(stderr, "aisched-chaos: hard deadline of %.0f s passed; killing everything\n",
                 limit);
    kill_everything_and_clean_up();
    std::cout << "harness error: hard deadline passed\n" << std::flush;
    _exit(2);
  }).detach();

  int status = 2;
  std::string error;
  try {
    status = run_chaos(run, net);
  } catch (const std::exception& e) {
    error = e.what();
    status = 2;
  }
  kill_registered_processes();
  print_report(run, error);
  return status;
}
