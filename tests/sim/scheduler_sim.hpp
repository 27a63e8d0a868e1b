// The whole scheduler in one actor system on CAF's deterministic test
// coordinator (issue 45 item 4). It owns a raft_group
// (tests/actors/raft/raft_group: real raft actors over RocksDB in temporary
// directories) and, beside each member, the actors its node runs, spawned and
// wired as runtime/scheduler_node.cpp does: the store, the leader's trigger,
// retry, router and backpressure (runtime::spawn_scheduling), the endpoint,
// the retention actor (its sweep every 10 s; the first @every task keeps
// only its newest 3 finished runs, every other the default 1 000, which a
// 3 s task passes within an hour), and the built-in worker, here with the simulation's executor
// (worker::sim_executor: seeded durations and exit codes, no process), kept
// registered with the leader by its registrar. Every actor reads one
// simulated wall clock that moves with virtual time (common/clock.hpp).
// What stands in for the network: the members reach each other's raft actors
// through raft_options::resolve_peer and each other's endpoints through
// registrar_options::resolve_member, both lookups in directories kept here.
// Every message between two members' raft actors takes 10 ms
// (timeline::link_latency, raft_group::set_latency), so a commit takes its
// round trips and the leader's actors go on meanwhile: a router placing a run
// while a note about it is being committed (the race of ec39c14) happens
// about once a seed. Cuts (raft_group::cut) lose the messages between two
// members' raft actors, delays (raft_group::delay) make each of them late by
// a seeded draw of its own, so they reorder; the workers' links to the
// endpoints (registration, heartbeats, dispatch, reports) are never cut nor
// delayed, but a worker's may lose what the leader sends (worker_cut).
//
// One seed draws everything: the raft timeouts, the workload
// (tests/sim/sim_workload: @every tasks, one-shots, a bulk enqueue and the
// cancel of one of its runs, tasks sharing a pool, a task of max_concurrency
// 1, the pause and resume of one @every task, a six-field cron task in a
// zone, an @every task with jitter, a task that depends on the cron task (a
// DAG), and two tasks whose runs outlast their period, of overlap skip and
// buffer_one; created and done through the leader the way the gateway does
// them), the runs' durations and exit codes (those two tasks' runs take a
// range of their own: worker::sim_options::durations_of; every execution
// recorded as the executors made it), and three faults, each recorded as a
// window (sim_faults.cpp, inject_faults), of these kinds:
// - leader_crash, follower_crash: the member's node crashed, restarted later;
// - leader_freeze: the leader's node stopped as by SIGSTOP, then resumed;
// - partition: one member cut off from the others, both ways;
// - one_way: the messages from one member's raft actor to another's lost;
// - worker_death: one member's worker process killed, restarted later, its
//   member staying up;
// - delay: the messages between two members' raft actors late by 10-400 ms
//   each, one way or both, so they reorder;
// - disk_fault: one member's disk failing every write (EIO) or every fsync;
//   its raft actor fences itself and, RocksDB not resuming, ends: its node
//   crashes then and restarts once the disk works (fail_disk);
// - outbox_fault: one member's worker's outbox failing every write; the
//   worker takes no new runs meanwhile and is restarted after (fail_outbox);
// - loss: 20-70 % of the messages between two members' raft actors lost,
//   each drawn for itself, one way or both (raft_group::lose);
// - worker_freeze: one member's worker and registrar stopped for 5-60 s as by
//   SIGSTOP, then resumed with what queued meanwhile. It found attempts run
//   twice at once (execute_request::answer_by, the worker's max_late_start),
//   and a stopped worker drawing every retry of what it swallowed (the
//   router's `unanswered`: nothing new goes there until it is heard from).
// - worker_cut: for 5-60 s one member's worker gets nothing from the leader's
//   side (dispatches, cancels, report acks: its link, worker_link.hpp, loses
//   them) while its heartbeats and reports still arrive: a one-way
//   worker-link partition, the gray failure of a worker that looks alive.
// The first six are drawn as they always were; each of the three is replaced,
// one time in three, by one of the last six (drawn from a stream of their
// own, so a seed none of whose faults is replaced replays as before). One
// window in three (of the kinds that only wait out their length) holds a
// second fault on another member inside it: its worker killed or stopped,
// or, inside a worker's fault, the member partitioned (ride_out). A seed
// runs one round of three faults (scheduler_sim_options::rounds), or more:
// 23 make a simulated hour, the periodic tasks firing throughout. The
// slot checker excuses a run's lateness when a window, extended by `heal`
// after it, meets the second the run was due in: e.g. a run placed on a
// killed worker is lost and retried (found at its restart, or when the
// router declares it dead after dead_after, 45 s, a death of up to 60 s). A
// raft actor that ends on its own outside a disk fault is a violation. A
// recorder subscribed to every member's raft keeps every committed instance
// change and when it was first applied; at the end the checkers
// (scheduler_sim_checks.hpp) judge that history and the executions.
// Nothing reads the real clock and nothing sleeps: a seed replays exactly.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/worker/sim_executor.hpp"
#include "common/clock.hpp"
#include "proto/interfaces.hpp"
#include "runtime/scheduling.hpp"
#include "storage/rocks.hpp"
#include "tests/actors/raft/raft_group.hpp"
#include "tests/sim/scheduler_sim_checks.hpp"
#include "tests/sim/sim_workload.hpp"

namespace aisched::sim {

struct scheduler_sim_options {
  uint64_t seed = 1;
  size_t members = 3;
  /// Prints the setup, the workload and every fault as it happens (nullptr: quiet).
  FILE* trace = nullptr;
  /// "": the seed draws its faults' kinds. Else each of its three faults is
  /// this kind (at the instant and length the seed draws; AISCHED_SIM_FAULT in
  /// scheduler_sim_test).
  std::string every_fault;
  /// Rounds of three faults (timeline::span_of): 1, about five and a half
  /// simulated minutes; 23, about an hour (AISCHED_SIM_ROUNDS).
  uint32_t rounds = 1;
};

struct scheduler_sim_result {
  std::vector<std::string> violations;  // empty: every check passed
  /// The first violation's run, when it names one: its commits, its
  /// executions and the workload's and faults' events around them.
  std::string explained;
  std::string profile;                  // the workload and faults the seed drew
  uint64_t fingerprint = 0;  // of the committed history (trace ids aside): equal on a replay
  size_t commits = 0;        // log indexes that changed runs
  size_t runs = 0;           // runs in the leader's final state
  size_t removed = 0;        // runs the history saw that retention removed since
  uint64_t last_term = 0;    // the final leader's term
  duration_ms length = 0;    // simulated, from t0 (timeline::span::length)
};

/// Runs the simulation of `opts.seed` (about five and a half simulated
/// minutes a round of faults, plus the settle period).
scheduler_sim_result run_scheduler_sim(const scheduler_sim_options& opts);

/// How to replay `opts` (scheduler_sim_test's replay test).
std::string replay_hint(const scheduler_sim_options& opts);

/// The timeline, relative to t0 (a leader agreed and every worker registered
/// with it): slots are checked from `checked_from`, faults fall in
/// [faults_from, faults_until], periodic tasks end at `workload_end`, and the
/// run ends at `length`, after a settle period without faults. Those three
/// are of one round of faults; span_of stretches them over more.
struct timeline {
  static constexpr duration_ms checked_from = 20'000;
  static constexpr duration_ms faults_from = 30'000;
  static constexpr duration_ms fault_segment = 50'000;  // one fault in each of three
  static constexpr duration_ms max_fault = 20'000;
  /// A worker death lasts up to this: past dead_after (45 s), so that the
  /// router's worker_lost path runs. It may push the next fault later (it
  /// starts when this one ends): three in a row end by 235 s (and the
  /// waits for an agreed leader), leaving at least a minute to settle. (A
  /// disk fault may outlast max_fault by its settle, 5 s: well under this.)
  static constexpr duration_ms max_worker_death = 60'000;
  static constexpr duration_ms faults_until = faults_from + 3 * fault_segment;
  static constexpr duration_ms workload_end = 240'000;
  static constexpr duration_ms length = 330'000;
  /// Every message between two members' raft actors takes this long
  /// (raft_group::set_latency), so a commit takes its round trips: what the
  /// leader's actors do between a proposal and its commit is simulated. A
  /// real commit takes a round trip and an fsync (1-10 ms on a disk), which
  /// the simulated disk does not take: 10 ms each way stands for both.
  static constexpr duration_ms link_latency = 10;
  /// A run starts at most this long after its slot: the fire-ahead (250 ms)
  /// places it before the instant and its worker starts it on the instant,
  /// so this covers the 50 ms steps of virtual time and a slow commit.
  static constexpr duration_ms eps = 1'000;
  /// How long after a fault window's end a slot is still excused from eps:
  /// an election (0.5-1 s), the new leader's rebuild, the workers' new
  /// registration (retried every 0.5 s, a leadership check every 1 s), a run
  /// lost with a killed worker found at its restart and retried (2 s).
  static constexpr duration_ms heal = 15'000;
  /// A slot this close to a pause's or a resume's asking or acknowledgement
  /// may fire or not (slot_bounds::pause_margin): the fire-ahead (250 ms),
  /// the withdrawal's margin (50 ms), a commit that lands between two steps.
  static constexpr duration_ms pause_margin = 2'000;
  /// The trigger decides a slot at most this long before its instant: the
  /// fire-ahead (250 ms) and a burst's lead (0.1 ms a slot that fires ahead
  /// within 1 s of it). The overlap checks (slot_bounds::decided_ahead) count
  /// the runs active from then on.
  static constexpr duration_ms decided_ahead = 500;
  /// The liveness bound (check_settled): the last fault window ends at least
  /// this long before `length`, or the run is a violation of its own.
  static constexpr duration_ms min_settle = 60'000;

  /// The instants that move with the number of rounds of three faults (a
  /// fault segment each), the periodic tasks going on through all of them:
  /// one round is faults_until, workload_end and length above; 23 rounds end
  /// at 61 minutes. A fault whose segment a long one before it outlasted is
  /// not injected (never in the first round: three in a row end by 235 s),
  /// so every run keeps its settle period.
  struct span {
    duration_ms faults_until = timeline::faults_until;
    duration_ms workload_end = timeline::workload_end;
    duration_ms length = timeline::length;
  };
  static span span_of(uint32_t rounds) {
    auto more = static_cast<duration_ms>(rounds > 1 ? rounds - 1 : 0) * 3 * fault_segment;
    return {faults_until + more, workload_end + more, length + more};
  }
};

/// The executions the workers' executors made, as their observers tell them
/// (worker::sim_options::observer).
struct execution_log {
  std::vector<execution> items;
  std::map<uint64_t, size_t> open;  // a run's actor id -> its entry in items, until it ends

  /// Records step `e` of an execution on the worker `worker_id`.
  void record(const std::string& worker_id, const worker::sim_run_event& e);
};

/// The simulation itself; run_scheduler_sim drives one.
class scheduler_sim {
 public:
  explicit scheduler_sim(scheduler_sim_options opts);
  ~scheduler_sim();
  scheduler_sim(const scheduler_sim&) = delete;
  scheduler_sim& operator=(const scheduler_sim&) = delete;

  /// Setup, workload, faults, settle, checks.
  scheduler_sim_result run();

  /// The instant now on the simulation's wall clock.
  unix_ms now() const;

  // -- a member's node ---------------------------------------------------------

  /// Kills every actor of member `i` (its runs end unreported) and closes
  /// its database: a crashed process.
  void stop_member(size_t i);
  /// Restarts member `i` from its directory (raft log, state, worker outbox).
  void start_member(size_t i);
  /// Stops running member `i`'s actors (raft, store, leader actors, endpoint,
  /// worker, registrar): their mail waits, as a SIGSTOPped process's. Runs
  /// already started go on (a run is a child process, not stopped with its
  /// node), and so do the router's worker proxies (they reach only the frozen
  /// raft and the workers).
  void freeze_member(size_t i);
  void thaw_member(size_t i);
  /// Kills member `i`'s worker and registrar (its runs end unreported), its
  /// member staying up: a crashed worker process. spawn_worker restarts them,
  /// with the same id and outbox directory.
  void kill_worker(size_t i);
  /// Stops (or resumes) member i's worker and registrar as by SIGSTOP; their
  /// mail waits meanwhile (worker_freeze).
  void freeze_worker(size_t i, bool frozen);
  void spawn_worker(size_t i);

 private:
  /// The actors of one member beside its raft actor.
  struct node {
    proto::store_actor store;
    runtime::scheduling_actors leading;
    proto::endpoint_actor endpoint;
    proto::retention_actor keeper;  // run-history retention (leader only)
    proto::worker_actor worker;
    proto::worker_actor link;  // what the leader knows the worker by (worker_link.hpp)
    caf::actor registrar;
    std::shared_ptr<worker::sim_executor> exec;
    bool frozen = false;
    std::vector<caf::actor> actors() const;  // every one of them
  };

  void spawn_node(size_t i);
  /// Records in deaths_ that `a` ended, unless it was killed.
  void watch(const caf::actor& a, std::string what);
  /// Records an event of the workload or of a fault (for explain), and
  /// prints it when opts_.trace says so.
  void trace(const char* fmt, ...);
  /// What scheduler_sim_result::explained says of `violation`.
  std::string explain(const std::string& violation) const;
  std::string at_text(unix_ms t) const;  // "+31.250s" since t0

  /// Moves virtual time to `t` (a multiple of the raft tick after t0).
  void run_to(unix_ms t);
  /// Sends `xs` to `to` from a one-shot client actor and runs until it has the
  /// answer, at most `limit` (moving virtual time only while none came).
  template <class T, class Handle, class... Ts>
  caf::expected<T> ask(duration_ms limit, const Handle& to, Ts... xs);

  /// Moves virtual time to `t`, carrying out on the way the workload's
  /// actions that come due (each at its instant).
  void advance_to(unix_ms t);

  bool setup();       // a leader, every worker registered with it
  /// Carries out the seed's plan (sim_workload.hpp) up to its enqueue and
  /// cancel, and schedules its pause and resume as actions.
  bool create_workload();
  /// The member to propose through while faults go on: of the running,
  /// unfrozen members that lead, the one of the highest term (a partitioned
  /// old leader still believes it leads, in an older term); -1 while none
  /// does. Not agreed_leader(), which a partitioned member denies for as long
  /// as the partition lasts (and the partition ends only after the proposal).
  int proposer();
  /// Proposes `cmd` to the proposer()'s raft (waiting up to 10 s for one) as
  /// the gateway proposes to its node's, at most `tries` times, 5 s each,
  /// backing off 1, 2, 4 ... s after each failure as a client would. A
  /// proposal that times out may still commit, but only before a later one:
  /// an old leader cut off commits nothing, and a frozen member is never asked.
  /// Only an idempotent command may be tried more than once.
  caf::expected<proto::applied> propose_to_leader(const proto::command& cmd, int tries);
  bool put_pool(proto::pool p);
  bool create_task(planned_task p);
  void enqueue_bulk(sim_task& t, const std::vector<std::string>& payloads);
  void cancel_run(sim_task& t, const std::string& id);
  /// Pauses or resumes task tasks_[k], recording the pause_window.
  void set_paused(size_t k, bool paused);
  /// The seed's faults: three a round, each in a segment of its own.
  void inject_faults();
  void inject_round(uint32_t round);
  /// Waits out the window of fault `kind` on `victim`, `length` long; one
  /// time in three with a second fault of its own on another member inside
  /// it (a worker killed or stopped; inside a worker's fault, a partition
  /// too): overlapping faults, the quorum kept.
  void ride_out(const std::string& kind, size_t victim, duration_ms length);
  /// Member `i`'s disk fails (`k`: every write with EIO, or only its fsyncs)
  /// for `length`; what its node does meanwhile and after (sim_faults.cpp).
  void fail_disk(size_t i, storage::fault_kind k, duration_ms length);
  /// Member `i`'s worker's outbox fails every write for `length`; then its
  /// worker is restarted (sim_faults.cpp).
  void fail_outbox(size_t i, duration_ms length);
  scheduler_sim_result finish();

  scheduler_sim_options opts_;
  seed_stream rng_;   // the first draws: workload, then faults (keep their order)
  seed_stream more_;  // the workload's draws added since (sim_workload.hpp)
  uint64_t draw(uint64_t below) { return rng_.draw(below); }  // uniform in [0, below)
  int64_t between(int64_t lo, int64_t hi) { return rng_.between(lo, hi); }
  /// The fault kinds added since the first six, and what they draw
  /// (inject_faults): the first six's draws from rng_ keep their order.
  seed_stream fault_rng_;
  /// The overlapping faults' draws (ride_out).
  seed_stream overlap_rng_;
  /// How each member's disk fails now (none: it works), asked by its RocksDB
  /// before every file write (raft_group's disk_fault hook), from RocksDB's
  /// threads too: atomic. Before group_, which opens the databases.
  std::shared_ptr<std::vector<std::atomic<storage::fault_kind>>> disk_faults_;
  /// Whether each member's worker's outbox fails its writes now
  /// (worker::outbox::options::fail_writes; asked on the worker's actor).
  std::shared_ptr<std::vector<bool>> outbox_faults_;
  /// Whether each member's worker is cut off from the leader's side now
  /// (worker_cut: its link, worker_link.hpp, loses what the leader sends).
  std::shared_ptr<std::vector<bool>> worker_cuts_;

  test::raft_group group_;
  wall_clock clock_;
  unix_ms t0_ = 0;
  std::vector<node> nodes_;
  std::vector<proto::commit_listener_actor> recorders_;  // one per member, for the whole run
  std::shared_ptr<std::map<std::string, proto::endpoint_actor>> endpoints_;  // by cluster address
  std::shared_ptr<history> history_;
  std::shared_ptr<std::vector<std::string>> deaths_;  // actors that ended on their own
  std::shared_ptr<execution_log> executions_;
  /// Task id -> its runs' duration range, for the tasks that have their own
  /// (planned_task::min_duration): every worker's executor asks it.
  std::shared_ptr<std::map<uint64_t, worker::duration_range>> durations_;
  std::vector<sim_task> tasks_;
  std::map<std::string, uint32_t> pools_;  // the pools created, by name: their sizes
  /// The workload's steps due during the faults (pause, resume), by instant.
  struct timed_action {
    unix_ms at = 0;
    std::function<void()> run;
  };
  std::vector<timed_action> actions_;
  std::vector<fault_window> faults_;
  timeline::span span_;  // of opts_.rounds
  std::vector<std::string> violations_;
  std::vector<std::pair<unix_ms, std::string>> events_;  // trace()'s, in order
  std::string profile_;
};

}  // namespace aisched::sim
