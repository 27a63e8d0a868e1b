// The worker actor runs task attempts handed to it by a worker_proxy. It owns
// the dedup cache (instance id + attempt -> outcome) so a run delivered twice
// executes once and the cancel flags of running attempts; it hands each run
// that is not a no-op to its executor, given at spawn (run_executor.hpp: the
// real processes on a run_pool's threads, process_executor, or a simulation's
// runs of seeded duration and exit code in virtual time, sim_executor), which
// tells it the run started, its output and its result. Reports (running, then
// the final result) go to the proxy that sent the execute. It tells its
// registrar which runs it holds (`held`), so a leader can tell runs lost with a
// restarted worker from runs still going. A worker whose outbox will not open, write or
// delete takes no new runs from then on: its reports would not survive a
// restart, which is what the outbox is for.
//
// A finished run's final report is written to the outbox (write(2): in the
// kernel, so it survives a killed process) before anything else hears of it:
// before it is sent, counted, logged as a no-op's start, or repeated to a
// duplicate delivery. The runs one message finishes (a burst of no-ops, the
// runs due at one instant) share one write; a run of the pool gets its own.
// A restarted worker holds what its outbox kept and sends it again until
// acknowledged. What a lost machine can lose: see outbox.hpp.
//
// A run placed ahead of its instant (execute_request::hold_ms, the
// trigger's fire-ahead) waits here until then: it is held (it counts as a run
// of this worker, so a new leader adopts it), a cancel drops it unstarted, and
// a delivery of it again (its task changed) replaces what it will run.
//
// The dedup cache is bounded. An attempt stays whole (its full result) from
// its execute until the leader acknowledges its final report, which it does
// only once the result is committed; from then on no leader dispatches that
// attempt again (a leader re-dispatches only instances its log shows
// unfinished), so only an execute already in flight can still arrive. The
// attempt is then kept as a compact outcome (`settled`), oldest first, for
// `dedup_ttl` and at most `dedup_cap` of them.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "actors/worker/outbox.hpp"
#include "actors/worker/run_executor.hpp"
#include "actors/worker/settled.hpp"
#include "common/activity.hpp"
#include "common/clock.hpp"
#include "common/run_pool.hpp"
#include "proto/interfaces.hpp"

namespace aisched::worker {

/// The longest a worker holds a run for its instant (--fire-ahead-ms is at
/// most 10 s, and a burst fires at most 4 s earlier still:
/// trigger::planner::max_burst_lead); a run to hold longer is refused. Well under the leader's
/// deadline grace (30 s), so a held run never outlives its deadline.
constexpr duration_ms max_hold = 15'000;
/// How much longer than the leader asked (execute_request::hold_ms) a worker
/// whose clock is behind the leader's holds a run for its instant.
constexpr duration_ms max_skew = 1'000;
/// A held run whose wake-up comes this much past its instant is not started:
/// the worker was stopped (SIGSTOP, a paused VM), and the leader may have
/// given its attempt up meanwhile (the worker silent) and placed the next one.
/// Its attempt ends failed, saying so. The 10 s its proxy waits for an answer.
constexpr duration_ms max_late_start = 10'000;

struct worker_config {
  std::string id = "local";
  duration_ms dedup_ttl = 5 * 60'000;  // a settled attempt is forgotten after this...
  size_t dedup_cap = 100'000;           // ...or once this many newer ones settled
  std::string outbox_dir;           // "" keeps unacknowledged reports in memory only
  outbox::options outbox_opts;      // how it is opened (tests: its fault hook)
  size_t live_cap = 64 * 1024;      // bytes of live output a new follower is sent first
  duration_ms resend_after = 3'000;  // an unacknowledged report is sent again after this
  wall_clock clock{};                // the worker's (common/clock.hpp): the system's
};

struct worker_state {
  struct run {
    proto::worker_proxy_actor reply_to;
    std::shared_ptr<std::atomic<bool>> cancelled;  // set once it goes to the pool (not a no-op)
    bool done = false;
    proto::run_result result;  // when done
    std::string live;          // output so far (the last live_cap bytes) while it runs
    std::vector<caf::actor> followers;  // told each chunk, then (done, instance id)
    /// Held until its instant: what it will run (not started while set).
    std::optional<proto::execute_request> waiting;
    /// Its final report was written to the outbox, then sent, and the leader
    /// has not acknowledged it yet; last sent then. (done and not unacked: it
    /// finished in the message being handled, its write still to come.)
    bool unacked = false;
    unix_ms last_sent = 0;
  };
  worker_config cfg;
  wall_clock clock;  // cfg.clock: every instant the worker sees
  std::shared_ptr<run_executor> exec;  // runs what is not a no-op (never null)
  std::unique_ptr<outbox> box;  // durable copy of the unacknowledged reports (run::unacked)
  std::string outbox_fault;     // why reports cannot be kept durably; "" while they can
  caf::actor report_sink;       // the router, for re-sends
  // Running attempts and finished ones not acknowledged yet; key:
  // "{instance}#{attempt}".
  std::unordered_map<std::string, run> runs;
  /// Runs held for their instant, by instant (keys as in `runs`; one gone
  /// since, cancelled, is skipped): one timer per instant, and the runs due
  /// then start together, their no-op reports kept in one outbox write.
  std::map<unix_ms, std::vector<std::string>> held_until;
  settled_outcomes settled{0};  // acknowledged attempts (sized from cfg at spawn)
  /// The highest term of a leader that placed a run here or asked what runs
  /// here (execute_request::leader_term): a request of an older one is refused.
  /// In memory: a restarted worker accepts the first leader that reaches it.
  uint64_t leader_term = 0;
  std::string leader_cluster;  // the cluster of that leader (its terms only compare)
  inspector::activity activity;
  static inline const char* name = "worker";
};

/// `exec` executes the runs (run_executor.hpp); a process_executor's pool
/// must outlive the actor's runs (the runtime stops it at shutdown).
proto::worker_actor::behavior_type worker_actor_impl(
    proto::worker_actor::stateful_pointer<worker_state> self, worker_config cfg,
    std::shared_ptr<run_executor> exec);

}  // namespace aisched::worker
