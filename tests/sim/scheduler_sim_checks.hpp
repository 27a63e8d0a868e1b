// The checkers of the scheduler simulation (tests/sim/scheduler_sim): pure
// functions from what a run recorded (the workload it created, the fault
// windows it caused, every committed instance change, every execution the
// workers' executors made, the leader's final state) to violations, one line
// each. They talk to no actor; scheduler_sim feeds them, and
// scheduler_sim_checks_test feeds them hand-made histories.
//
// - slots (Jepsen's Chronos checker): check_slots (@every, cron and one-shot
//   tasks; jitter; overlap skip and buffer_one; pauses).
// - DAG: check_chains (a task without a schedule of its own that fires on its
//   upstream's success).
// - total queue: check_total_queue (the runs of bulk enqueues).
// - attempts: check_attempts (attempt numbers, overlapping attempts, what
//   the executors ran against what was committed).
// - bounds: check_bounds (pools and max_concurrency never exceeded).
// - liveness: check_settled (every run final at the end, a settle period
//   after the last fault).
// - agreement: check_history (the history against the leader's final state,
//   and no log index applied differently by two members).
// Each function's comment states its rule. check_slots and check_chains are
// in scheduler_sim_slot_checks.cpp, the others in scheduler_sim_checks.cpp.
#pragma once

#include <cstdint>
#include <limits>
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
  duration_ms every = 0;  // `@every` interval (slots k * every since the epoch); 0: none
  std::string cron;       // a cron expression (actors/trigger/schedule.hpp); "": none
  std::string timezone;   // the IANA zone `cron` is read in ("" or "UTC": UTC)
  unix_ms at = 0;         // one-shot instant; 0: none
  unix_ms end_at = 0;     // no slots after this (0: unbounded)
  /// A slot's run starts at the slot's jittered instant, a hash of (task id,
  /// slot) in [slot, slot + jitter] (trigger::planner::jittered); 0: at the slot.
  duration_ms jitter = 0;
  proto::overlap_policy overlap = proto::overlap_policy::allow;
  /// Its upstream tasks' ids. A task with upstreams and no `every`, `cron` or
  /// `at` fires on their success (chained(): check_chains).
  std::vector<uint64_t> depends_on;
  uint32_t max_attempts = 1;
  std::string pool;              // the pool its runs count against ("": none)
  /// Its retention's keep_runs (the cluster's default, 1 000, unless it sets
  /// its own): its finished runs beyond the newest this many may leave the
  /// leader's state (0: none may).
  uint32_t keep_runs = 0;
  uint32_t max_concurrency = 0;  // its runs running at once (0: any)
  std::vector<pause_window> paused;
  // A task without `every`, `cron`, `at` and upstreams is a queue (queue()):
  // its runs come from bulk enqueues.
  std::vector<std::string> enqueued;  // the runs its enqueues' acknowledgements named
  size_t unacknowledged = 0;  // enqueues asked for and not acknowledged (they may have committed)
  /// Runs the workload asked to cancel -> whether the cancel was acknowledged
  /// (then the run ends cancelled; otherwise it may, or end as it would have).
  std::map<std::string, bool> cancels;

  /// Whether its runs may wait for a limit (its pool, its max_concurrency)
  /// and so start late without a fault.
  bool limited() const { return !pool.empty() || max_concurrency != 0; }
  /// Whether its schedule fires it: `every`, `cron` or `at` (check_slots).
  bool scheduled() const { return every > 0 || !cron.empty() || at != 0; }
  /// Whether it fires on its upstreams' success alone (check_chains).
  bool chained() const { return !scheduled() && !depends_on.empty(); }
  /// Whether its runs come from bulk enqueues alone (check_total_queue).
  bool queue() const { return !scheduled() && depends_on.empty(); }
};

/// When a fault was active: [from, to] on the simulated wall clock.
struct fault_window {
  std::string kind;    // "leader_crash", "follower_crash", "leader_freeze", "partition",
                       // "one_way", "worker_death", "delay", "disk_fault", "outbox_fault",
                       // "worker_freeze", "loss", "worker_cut"
  std::string member;  // "n2"; "n1->n3" for one_way (n1's messages to n3 lost); "n1~>n3"
                       // or "n1<~>n3" for delay (late, one way or both: no one cut off);
                       // "n1%>n3" or "n1<%>n3" for loss (some lost: no one cut off)
  unix_ms from = 0;
  unix_ms to = 0;
};

/// Every committed instance change, by raft log index, as the first member to
/// apply that index told its listeners, and when; and the indexes two members
/// applied differently.
struct history {
  std::map<uint64_t, std::vector<proto::instance>> commits;
  /// Log index -> when the first member to apply it did (the simulated wall
  /// clock). The leader applies an index before any follower, so this is
  /// when the leader's trigger saw the change.
  std::map<uint64_t, unix_ms> applied_at;
  std::vector<std::string> disagreements;

  /// Records what member `member` applied at `at` (a commit listener's `applied`).
  void record(const std::string& member, const proto::applied& a, unix_ms at = 0);
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
  uint64_t created_index = 0;  // the log index of its first commit (its fire)
  unix_ms created = 0;         // when that index was applied (history::applied_at)
  uint64_t final_index = 0;    // of the commit that first made it final (0: never final)
  unix_ms finalized = 0;       // when that index was applied
  /// Its attempts, a new entry each time a commit shows another attempt number
  /// (so a number that goes back shows as an entry of its own).
  std::vector<attempt_view> attempts;
  uint32_t finals = 0;  // how often a commit moved it into a final state
};

/// The runs of `h` by instance id.
std::map<std::string, run_view> runs_of(const history& h);

/// An instant after every history: when a run that never ended ends.
constexpr unix_ms forever = std::numeric_limits<unix_ms>::max();

/// A run in a violation: "<id> (<state>, attempt <n>, "<error>")".
std::string describe(const proto::instance& x);

/// What check_slots allows.
struct slot_bounds {
  unix_ms checked_from = 0;  // slots in [checked_from, checked_until] are checked
  unix_ms checked_until = 0;
  duration_ms eps = 1'000;    // a run starts at most this long after its slot...
  duration_ms heal = 15'000;  // ...unless its slot is in [from, to + heal] of a fault window
  /// A slot this close to a pause's or a resume's asking or acknowledgement
  /// may fire or not (see check_slots).
  duration_ms pause_margin = 2'000;
  /// The trigger decides a slot at most this long before its instant: its
  /// fire-ahead and a burst's lead (actors/trigger/planner.hpp). The overlap
  /// rules look at the runs active from then on.
  duration_ms decided_ahead = 500;
};

/// Whether a fault window, extended by `heal`, covers instant `t`.
bool covered(const std::vector<fault_window>& faults, duration_ms heal, unix_ms t);

/// Whether a fault window, extended by `heal`, meets [from, to]: a fault came
/// before something due in [from, to] was done.
bool fault_near(const std::vector<fault_window>& faults, duration_ms heal, unix_ms from,
                unix_ms to);

/// Whether a fault window of member `worker`'s own (a crash, freeze,
/// partition or worker death of it, or a one-way cut from it), extended by
/// `heal`, covers instant `t`: the worker was cut off then.
bool cut_off(const std::vector<fault_window>& faults, duration_ms heal, const std::string& worker,
             unix_ms t);

/// Whether `x` ended as its task allows: success, or failed / timed out with
/// `max_attempts` attempts spent; or cancelled when `may_cancel`.
bool ended_allowed(const proto::instance& x, uint32_t max_attempts, bool may_cancel = false);

/// Slots, for each task with `every`, `cron` or `at` (scheduled()). Its slots
/// are the instants trigger::schedule gives for its schedule (`@every`: k *
/// every since the epoch; `cron` in its `timezone`; `at`), up to its end_at.
/// Every slot in [checked_from, checked_until] fired exactly once: one run
/// per (task, slot), and no run at an instant that is no slot. Its run ended
/// success, or failed with every attempt its retry policy allows spent, and
/// reached a final state once.
///
/// When its run starts. Its due instant d is the slot's jittered instant
/// (trigger::planner::jittered: the slot itself without jitter): the run
/// starts never before d (1 ms before is a violation: the trigger fires a
/// jittered slot at d, and a new leader inside a slot's jitter waits for it)
/// and at most `eps` after d, unless the task is limited() or a fault window
/// extended by `heal` meets [d, d + eps]. With overlap buffer_one (and
/// buffer_all) the lateness counts from the latest commit that ended a run of
/// an earlier slot, if later than d: a buffered slot fires when the run
/// before it ends.
///
/// Overlap (actors/trigger/planner.cpp, decide): a task whose policy is not
/// `allow` fires a slot only while none of its runs is active (committed and
/// not final, or fired and not yet committed). So a slot may have no run:
/// - skip: when a run of an earlier slot was active at the slot's decision
///   (no earlier than decided_ahead before d), i.e. its final state was
///   committed then or later, or never;
/// - buffer_one: when the buffer was full then too: two runs of earlier slots
///   were active then, and one of them was created then or later (it waited
///   in the buffer).
/// A slot that fires has its one run all the same: a slot fired twice is a
/// violation under every policy, and a skipped slot is never fired later...
/// Known gap (the trigger's, not the policy's): a new leader catches a task
/// up from the last slot that fired (planner::upsert, rt.last_slot), so it
/// fires, late, the slots its predecessor skipped or dropped after it (seeds
/// 2 and 11 of 1-12 show it when this excuse is taken out). Until the
/// planner knows them, a late run of a task whose overlap is not `allow` is
/// excused when a fault window extended by `heal` meets [d, its start] (a
/// leader change came between), not only [d, d + eps].
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

/// DAG, for each chained() task B: no schedule of its own, one upstream A
/// (another count of upstreams is reported, not judged). The README's promise
/// ("Schedules, retries, overlap, DAG"): as soon as the success of A's latest
/// run commits, B fires once, at once, as a manual run (actors/trigger/
/// planner.hpp, observe); a new leader fires it for a success the old one did
/// not chain yet (resume_chains). A success of A's latest run (a cause) is the
/// commit that ends a run of A in success before any run of a later slot of A
/// was created; a failed, timed out or cancelled run of A fires nothing. By
/// log index and commit time (history::applied_at):
/// - every run of B was created after a cause; its cause is the latest one
///   before it;
/// - no two runs of B have one cause (one success fired B twice);
/// - a run of B was created at most `eps` after its cause committed, and
///   started never before its slot (the instant it fired) and at most `eps`
///   after it, unless a fault window extended by `heal` meets that interval;
///   it ended as check_slots requires;
/// - every cause committed in [checked_from, checked_until] fired B, unless a
///   run of a later slot of A was created at most `eps` after it (A fired again
///   as it succeeded: B fires only while A's latest run is the success) or a
///   fault window extended by `heal` meets [its commit, its commit + eps] (a
///   success the old leader did not chain yet, and a new leader's catch-up of
///   A fires A before B).
std::vector<std::string> check_chains(const std::vector<sim_task>& tasks,
                                      const std::vector<fault_window>& faults,
                                      const std::map<std::string, run_view>& runs,
                                      const slot_bounds& b);

/// Total queue, for each queue() task. Every run an
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
/// max_concurrency, nor more than one of a task whose overlap is skip,
/// buffer_one or buffer_all (its next run fires only once the commit that
/// ended the one before is seen, and that commit's finished_at ends it). An
/// attempt runs from its committed start (the worker's
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
/// Retention: a run of a task of `tasks` with keep_runs may be missing from
/// the leader's state only if the history ended it (a run not finished is
/// never removed), and at least the newest keep_runs of the task's finished
/// runs stay (or all of them, when fewer finished).
std::vector<std::string> check_history(const history& h,
                                       const std::map<std::string, run_view>& runs,
                                       const std::map<std::string, proto::instance>& final_state,
                                       const std::vector<sim_task>& tasks = {});

}  // namespace aisched::sim
