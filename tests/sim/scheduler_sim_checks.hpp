// The checkers of the scheduler simulation (tests/sim/scheduler_sim): pure
// functions from what a run recorded (the workload it created, the fault
// windows it caused, every committed instance change, every execution the
// workers' executors made, the leader's final state) to violations, one line
// each. They talk to no actor; scheduler_sim feeds them, and
// scheduler_sim_checks_test feeds them hand-made histories.
//
// - slots (Jepsen's Chronos checker): check_slots.
// - total queue: check_total_queue (the runs of bulk enqueues).
// - attempts: check_attempts (attempt numbers, overlapping attempts, what
//   the executors ran against what was committed).
// - bounds: check_bounds (pools and max_concurrency never exceeded).
// - liveness: check_settled (every run final at the end, a settle period
//   after the last fault).
// - agreement: check_history (the history against the leader's final state,
//   and no log index applied differently by two members).
// Each function's comment states its rule.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "proto/commands.hpp"
#include "proto/types.hpp"

namespace aisched::sim {

/// A pause of a task and its resume, as the workload asked for them: the
/// pause was asked for at `from` and acknowledged (committed) at `paused`,
/// the resume asked for at `resume` and acknowledged at `to`. 0 for an
/// acknowledgement that never came (the command may or may not have
/// committed), and for a resume never asked for (the task stays paused).
struct pause_window {
  unix_ms from = 0;
  unix_ms paused = 0;
  unix_ms resume = 0;
  unix_ms to = 0;
};

/// A task the workload created, as the checks need it.
struct sim_task {
  uint64_t id = 0;
  std::string name;
  duration_ms every = 0;  // `@every` interval (slots k * every since the epoch); 0: not periodic
  unix_ms at = 0;         // one-shot instant; 0: none
  unix_ms end_at = 0;     // no slots after this (0: unbounded)
  uint32_t max_attempts = 1;
  std::string pool;              // the pool its runs count against ("": none)
  uint32_t max_concurrency = 0;  // its runs running at once (0: any)
  std::vector<pause_window> paused;
  // A task without `every` and `at` is a queue: its runs come from bulk enqueues.
  std::vector<std::string> enqueued;  // the runs its enqueues' acknowledgements named
  size_t unacknowledged = 0;  // enqueues asked for and not acknowledged (they may have committed)
  /// Runs the workload asked to cancel -> whether the cancel was acknowledged
  /// (then the run ends cancelled; otherwise it may, or end as it would have).
  std::map<std::string, bool> cancels;

  /// Whether its runs may wait for a limit (its pool, its max_concurrency)
  /// and so start late without a fault.
  bool limited() const { return !pool.empty() || max_concurrency != 0; }
};

/// When a fault was active: [from, to] on the simulated wall clock.
struct fault_window {
  std::string kind;    // "leader_crash", "follower_crash", "leader_freeze", "partition",
                       // "one_way", "worker_death", "delay", "disk_fault", "outbox_fault"
  std::string member;  // "n2"; "n1->n3" for one_way (n1's messages to n3 lost); "n1~>n3"
                       // or "n1<~>n3" for delay (late, one way or both: no one cut off)
  unix_ms from = 0;
  unix_ms to = 0;
};

/// Every committed instance change, by raft log index, as the first member to
/// apply that index told its listeners; and the indexes two members applied
/// differently.
struct history {
  std::map<uint64_t, std::vector<proto::instance>> commits;
  std::vector<std::string> disagreements;

  /// Records what member `member` applied (a commit listener's `applied`).
  void record(const std::string& member, const proto::applied& a);
};

/// One execution of an attempt as a worker's executor made it, whatever was
/// reported of it (worker::sim_run_event).
struct execution {
  std::string worker;  // the worker's id ("n2": a member's built-in worker)
  std::string instance_id;
  uint32_t attempt = 0;
  unix_ms started = 0;
  unix_ms ended = 0;      // 0: still running when the history ends
  bool reported = false;  // it ended and told its worker; false: killed with its worker, or running
};

/// One attempt of a run as the history shows it: the commits of the run
/// while its attempt number stayed the same, in log order.
struct attempt_view {
  uint32_t attempt = 0;
  std::set<std::string> workers;  // every worker it was committed to (placed again: several)
  unix_ms started = 0;            // its committed start (the worker's clock; 0: never started)
  bool ended = false;             // a commit ended it: success, failed, timed_out, cancelled
                                  // or retry_waiting
  unix_ms finished = 0;           // that commit's finished_at
  proto::instance_state end = proto::instance_state::pending;  // the state it made
  /// Ended by the leader without its worker's report: lost with its worker
  /// ("worker_lost: ...") or timed out at its deadline (the retry actor's
  /// "no report from the worker before the run's deadline").
  bool by_leader = false;
};

/// One run as the history shows it.
struct run_view {
  proto::instance last;     // its latest committed record
  unix_ms first_start = 0;  // the earliest start of any of its attempts (0: never started)
  /// Its attempts, a new entry each time a commit shows another attempt number
  /// (so a number that goes back shows as an entry of its own).
  std::vector<attempt_view> attempts;
  uint32_t finals = 0;  // how often a commit moved it into a final state
};

/// The runs of `h` by instance id.
std::map<std::string, run_view> runs_of(const history& h);

/// What check_slots allows.
struct slot_bounds {
  unix_ms checked_from = 0;  // slots in [checked_from, checked_until] are checked
  unix_ms checked_until = 0;
  duration_ms eps = 1'000;    // a run starts at most this long after its slot...
  duration_ms heal = 15'000;  // ...unless its slot is in [from, to + heal] of a fault window
  /// A slot this close to a pause's or a resume's asking or acknowledgement
  /// may fire or not (see check_slots).
  duration_ms pause_margin = 2'000;
};

/// Whether a fault window, extended by `heal`, covers instant `t`.
bool covered(const std::vector<fault_window>& faults, duration_ms heal, unix_ms t);

/// Whether a fault window of member `worker`'s own (a crash, freeze,
/// partition or worker death of it, or a one-way cut from it), extended by
/// `heal`, covers instant `t`: the worker was cut off then.
bool cut_off(const std::vector<fault_window>& faults, duration_ms heal, const std::string& worker,
             unix_ms t);

/// Whether `x` ended as its task allows: success, or failed / timed out with
/// `max_attempts` attempts spent; or cancelled when `may_cancel`.
bool ended_allowed(const proto::instance& x, uint32_t max_attempts, bool may_cancel = false);

/// Slots. Every slot of a periodic task in [checked_from, checked_until] (up
/// to its end_at), and every one-shot instant in it, fired exactly once: one
/// run per (task, slot), and no run at an instant that is no slot. Its run
/// started never before its slot and, unless the task is limited() or a fault
/// window extended by `heal` covers the slot, at most `eps` after it; and it
/// ended success, or failed with every attempt its retry policy allows spent;
/// and it reached a final state once.
///
/// Pauses: a paused task's slots are skipped, not caught up at the resume (the
/// trigger arms a resumed task after the resume's instant, and a new leader
/// catches up only after the task's latest change: actors/trigger/planner.hpp,
/// upsert). With m = pause_margin, for each pause_window:
/// - a slot in [from - m, paused + m] or [resume - m, to + m] may have no run,
///   or one run, which may end cancelled (a run fired ahead and withdrawn by
///   the pause: actors/router/withdrawal.hpp) and may start late (a pending
///   run waits for the resume);
/// - a slot in (paused + m, resume - m) has no run ("fired while paused").
/// An acknowledgement that never came stretches its edge to the end of the
/// history (`paused` 0: [from - m, ...); `to` 0: [resume - m, ...)); a resume
/// never asked for (`resume` 0) leaves the task paused to the end.
std::vector<std::string> check_slots(const std::vector<sim_task>& tasks,
                                     const std::vector<fault_window>& faults,
                                     const std::map<std::string, run_view>& runs,
                                     const slot_bounds& b);

/// Total queue, for each queue task (no `every`, no `at`). Every run an
/// acknowledgement named is in the history, reached a final state exactly
/// once, and ended success or failed with every attempt spent (or cancelled,
/// for a run whose cancel was acknowledged it must have ended cancelled, and
/// for one whose cancel was not, it may). No two acknowledgements named one
/// run. A run of the task that no acknowledgement named is a violation while
/// every enqueue of the task was acknowledged (the history holds an enqueue
/// nobody asked for); when one was not, its runs may have committed, and
/// check_settled still requires them final.
std::vector<std::string> check_total_queue(const std::vector<sim_task>& tasks,
                                           const std::map<std::string, run_view>& runs);

/// Attempts. In the history, per run:
/// - the attempt numbers its commits show are 1, 2, 3 ... in log order: each
///   new number the previous one plus one, never one that goes back, and
///   none beyond its task's max_attempts;
/// - attempt k + 1 starts no earlier than attempt k's committed end.
/// Against the executions:
/// - every execution is of an attempt the history committed to that worker;
/// - every committed start is an execution of that attempt on a worker it
///   was committed to;
/// - an attempt executes once: a second execution of it is allowed only when
///   the earlier one ended unreported (killed with its worker, so the leader
///   could place the attempt again as never started: actors/router/adoption.hpp);
/// - no two executions of one run overlap in time.
/// An overlap (of committed attempts or of executions) is excused only when
/// the older attempt was ended by the leader without its worker's report
/// (attempt_view::by_leader) and a fault window cut its worker off
/// (cut_off, extended by `heal`) when the newer one started: the leader
/// cannot tell a cut-off worker's run from a dead one.
std::vector<std::string> check_attempts(const std::vector<sim_task>& tasks,
                                        const std::vector<fault_window>& faults, duration_ms heal,
                                        const std::map<std::string, run_view>& runs,
                                        const std::vector<execution>& executions);

/// Bounds. At no instant run more attempts of a pool's tasks than the pool's
/// size (`pools`: name -> size), nor more attempts of one task than its
/// max_concurrency. An attempt runs from its committed start (the worker's
/// started_at) to its committed end (the finished_at of the commit that ended
/// it: the worker's report, or the leader's decision when lost, timed out or
/// cancelled), half-open, so one ending at the instant another starts does not
/// overlap it; one whose end was never committed runs to the end of the
/// history. (The router holds a limit from placement to the committed end,
/// which contains that interval: actors/router/concurrency.hpp.) A task naming
/// a pool not in `pools` is a violation.
std::vector<std::string> check_bounds(const std::vector<sim_task>& tasks,
                                      const std::map<std::string, uint32_t>& pools,
                                      const std::map<std::string, run_view>& runs);

/// Liveness. `final_state`: every run in the leader's state at the end, by id.
/// Every run is final (success, failed, timed_out, cancelled) at the end.
/// With check_slots (every due slot has its run) and check_total_queue (every
/// acknowledged run is in the history) and check_history (the history is the
/// leader's state), this is: every run due reached a final state by the end.
/// The bound is the settle period, which scheduler_sim checks it kept: the
/// last fault window ends at least timeline::min_settle before the end, and
/// the last slot (timeline::workload_end) is timeline::length - workload_end
/// before it.
std::vector<std::string> check_settled(const std::map<std::string, proto::instance>& final_state);

/// Agreement: the recorded history agrees with the leader's final state (no
/// commit missed by the recorders: each run's last committed state and
/// attempt are the leader's, and both hold the same runs), and no two
/// members applied one log index differently (history::disagreements).
std::vector<std::string> check_history(const history& h,
                                       const std::map<std::string, run_view>& runs,
                                       const std::map<std::string, proto::instance>& final_state);

}  // namespace aisched::sim
