// The trigger's decision logic, free of actors and clocks: for every task it
// keeps the schedule, the next slot and the bookkeeping that decides whether a
// due slot fires now — pause, schedule bounds, exclusion calendars, max_runs,
// overlap policy, DAG upstreams, misfire policy after an outage — and yields
// the fire_slots to propose. How many runs a broadcast task's slot creates is
// not decided here: its fanout stays 0 for the router to set (proto::fire_slot).
// The trigger actor feeds it time, task changes and committed instances.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/expected.hpp>

#include "actors/trigger/exclusion.hpp"
#include "actors/trigger/schedule.hpp"
#include "actors/trigger/timer_queue.hpp"
#include "proto/commands.hpp"
#include "proto/types.hpp"

namespace aisched::trigger {

/// What happened to slots, for metrics (scheduler_slots_total{outcome}).
struct slot_stats {
  uint64_t fired = 0;      // proposed for firing
  uint64_t skipped = 0;    // overlap `skip` (or a full buffer) dropped the slot
  uint64_t missed = 0;     // not caught up after an outage (misfire policy / window)
  uint64_t buffered = 0;   // held by buffer_one / buffer_all until the running one ends
  uint64_t blocked = 0;    // held until DAG upstreams succeed
  uint64_t replaced = 0;   // running instances cancelled by overlap `replace`
};

/// What collect() decided: slots to fire and runs to cancel (overlap `replace`).
struct decisions {
  std::vector<proto::fire_slot> fires;
  std::vector<std::string> cancels;
  /// A manual run held back for upstreams: the ones it waits for (it fires once they
  /// succeed). Empty otherwise.
  std::vector<uint64_t> waiting_for;
  bool empty() const { return fires.empty() && cancels.empty(); }
};

class planner {
 public:
  /// Bound on slots held by buffer_all per task; more are counted as skipped.
  static constexpr size_t max_buffered = 1000;

  /// `fire_ahead`: how long before a slot's instant it fires, so its run is
  /// committed and placed by then and its worker starts it on the instant
  /// (execute_request::hold_ms). Only where deciding early decides the
  /// same: tasks without jitter (the run would start at the bare slot),
  /// without upstreams (their success may come in between) and without
  /// dependents (they would wait for a run not yet due); a task whose
  /// overlap policy is not `allow` fires ahead only while none of its runs is
  /// active, else at the instant. 0: every slot fires at its instant.
  ///
  /// A burst lengthens the lead: the slots that fire ahead, counted from the
  /// earliest one to burst_window after it, fire earlier still by the time their
  /// fire, commit and placement take (burst_cost_us each, at most max_burst_lead),
  /// so the last run of 10 000 due at one instant is placed by the instant too.
  explicit planner(unix_ms now, duration_ms fire_ahead = 0);
  static constexpr duration_ms burst_window = 1'000;
  static constexpr int64_t burst_cost_us = 100;
  static constexpr duration_ms max_burst_lead = 4'000;
  static constexpr size_t max_burst_slots = max_burst_lead * 1000 / burst_cost_us;

  /// Adds or replaces task `t`. With `catch_up`, slots after `rt.last_slot` (or after
  /// the task's creation) that are already due are handled by the misfire policy —
  /// used when a leader rebuilds its view; slots at or before the task's latest change
  /// committed before this planner began (`updated_at`: an update, a pause, a resume)
  /// are not caught up and not counted as missed (a paused task's slots were never
  /// due). Without it, only slots after `now` count (create, update, resume). A
  /// paused task is kept but never armed; the slots
  /// its overlap buffer holds (buffer_one, buffer_all) stay there through the
  /// pause, and a resume fires them in order, one at a time, as runs end.
  void upsert(const proto::task& t, const proto::task_runtime& rt, unix_ms now, bool catch_up);

  /// Forgets task `id` (deleted).
  void remove(uint64_t id);

  /// Learns a committed instance state: keeps each task's active runs (overlap)
  /// and latest slot state (DAG), and releases buffered or blocked slots that may
  /// now fire at the next collect(). When the latest run of a task turns
  /// `success`, its dependents without a schedule, `at` or `event` of their own
  /// (see chains()) are queued to fire at the next collect(), each once every
  /// upstream's latest run succeeded: the chain goes on transitively.
  void observe(const proto::instance& x);

  /// Queues every dependent that chains (see chains()) whose upstreams all
  /// succeeded after its latest run and after its definition last changed: a
  /// new leader calls this once rebuilt, so a success committed just before
  /// the previous leader fired the dependents still fires them.
  void resume_chains();

  /// The tasks that list `id` in their depends_on (empty if none).
  std::vector<uint64_t> dependents_of(uint64_t id) const;

  /// Everything that should happen at `now`: due slots that pass their checks,
  /// plus catch-up, buffered and unblocked slots. Arms each task's next slot.
  decisions collect(unix_ms now);

  /// Ends a hold on firing (backpressure red): every task whose armed slot came
  /// due meanwhile is caught up by its misfire policy, as after an outage (skip:
  /// none fire; fire_once: the newest; fire_all: up to misfire_limit), and
  /// re-armed after `now`. Returns how many slots came due during the hold.
  uint64_t release_held(unix_ms now);
  /// Puts slot `s` back to be decided at the next collect() (its fire failed,
  /// so it no longer counts toward the task's max_runs until it fires).
  void requeue(const proto::fire_slot& s);

  /// Adds or replaces calendar `c` (tasks of its tenant naming it skip its
  /// dates from now on: their next slot is armed again after `now`).
  void put_calendar(const proto::calendar& c, unix_ms now);
  /// Forgets calendar `name` of `tenant` (tasks naming it exclude nothing).
  void remove_calendar(const std::string& tenant, const std::string& name, unix_ms now);

  /// Slots task `id`'s schedule fired so far (committed before this planner
  /// began, plus proposed since): what max_runs bounds.
  uint64_t scheduled_fires(uint64_t id) const;

  /// Decides a manual run of task `id` at `now` (slot = now), subject to its
  /// overlap policy and upstreams. A run that waits for upstreams is no error:
  /// no fires, `waiting_for` names them, and it fires when they succeed.
  /// Errors: not_found (unknown task or other tenant; tenant "" matches all),
  /// `already_exists` when the overlap policy drops or buffers the run.
  caf::expected<decisions> trigger_now(const std::string& tenant, uint64_t id, unix_ms now);

  /// Fires every unpaused task of `tenant` ("" = all) subscribed to event `name`
  /// once at `now`, each subject to its overlap policy and upstreams; the slots
  /// carry the event so the run can substitute its payload.
  decisions fire_event(const std::string& tenant, const std::string& name,
                       const std::string& payload, unix_ms now);

  /// A bulk enqueue of task `id` at `now`: one slot with one run per payload,
  /// side by side. The slot is `now` unless another fire of the task holds it
  /// (an earlier batch, a run starting, a schedule instant): then the next free
  /// millisecond, so concurrent batches never collide and later ones sort after.
  /// The task's overlap policy applies to the batch as to a manual run, against
  /// the runs already active; a batch is not buffered. Errors: not_found as
  /// trigger_now; invalid_argument for a task with shards, broadcast routing or
  /// upstreams (a run per payload would be ambiguous), no payloads or more than
  /// proto::max_bulk_runs; already_exists when the overlap policy holds the
  /// batch back.
  caf::expected<decisions> enqueue(const std::string& tenant, uint64_t id,
                                   std::vector<std::string> payloads, unix_ms now);

  /// Fires every slot of task `id`'s schedule in [from, to] (at most
  /// `max_backfill`), oldest first, subject to its overlap policy.
  caf::expected<decisions> backfill(const std::string& tenant, uint64_t id, unix_ms from,
                                    unix_ms to);
  static constexpr size_t max_backfill = 1000;

  /// Records that the proposal of `s` is settled: committed (its instances, if it
  /// created any, arrive through observe()) or failed (e.g. leadership lost). Until
  /// then the slot counts as a running instance for the overlap policy.
  void settle(const proto::fire_slot& s);

  /// Earliest instant at which collect() has something to do; `now`-or-earlier when
  /// slots are ready already. nullopt when nothing is armed or ready.
  std::optional<unix_ms> next_due() const;

  /// When task `id`'s next slot fires (its jittered instant less lead_of), if armed.
  std::optional<unix_ms> due_of(uint64_t id) const;

  const slot_stats& stats() const { return stats_; }
  size_t task_count() const { return tasks_.size(); }
  /// Tasks with an armed next slot.
  size_t armed_count() const { return timers_.size() + ahead_.size(); }

  /// The instant slot `slot` of task `t` fires: the slot plus a deterministic
  /// per-slot offset in [0, t.jitter] that spreads herds firing at :00.
  static unix_ms jittered(const proto::task& t, unix_ms slot) {
    return jittered(t.id, t.jitter, slot);
  }

 private:
  /// What the planner keeps of a task: the fields its decisions read. Not the
  /// task itself: a full copy per task was most of an idle task's memory (#17);
  /// the definition lives in the store.
  class terms {
   public:
    uint64_t id = 0;
    std::string tenant;
    unix_ms start_at = 0;
    unix_ms end_at = 0;
    duration_ms jitter = 0;
    duration_ms catchup_window = 0;
    uint32_t max_runs = 0;
    uint32_t shards = 1;
    uint32_t misfire_limit = 0;
    proto::overlap_policy overlap = proto::overlap_policy::allow;
    proto::misfire_policy misfire = proto::misfire_policy::fire_once;
    proto::route_strategy route = proto::route_strategy::least_loaded;
    bool paused = false;

    static terms of(const proto::task& t);

    const std::string& event() const { return rare_ ? rare_->event : none().event; }
    const std::string& exclude_calendar() const {
      return rare_ ? rare_->exclude_calendar : none().exclude_calendar;
    }
    /// The zone the calendar's days are read in (set only with a calendar).
    const std::string& timezone() const { return rare_ ? rare_->timezone : none().timezone; }
    const std::vector<uint64_t>& depends_on() const {
      return rare_ ? rare_->depends_on : none().depends_on;
    }
    /// When the definition last changed (kept for tasks with upstreams only).
    unix_ms changed_at() const { return rare_ ? rare_->changed_at : 0; }

   private:
    // What most tasks leave empty, held apart: an idle task without them pays
    // one pointer, not 150 bytes of empty strings and containers.
    struct rare {
      std::string event;
      std::string exclude_calendar;
      std::string timezone;
      std::vector<uint64_t> depends_on;
      unix_ms changed_at = 0;
    };
    static const rare& none() {
      static const rare empty;
      return empty;
    }
    std::unique_ptr<const rare> rare_;
  };

  /// A small set of slots as a sorted vector: a task has a few fired slots
  /// in flight at most, and an empty std::set costs 48 bytes per task.
  class slot_set {
   public:
    void insert(unix_ms s) {
      auto i = std::lower_bound(v_.begin(), v_.end(), s);
      if (i == v_.end() || *i != s) v_.insert(i, s);
    }
    void erase(unix_ms s) {
      auto i = std::lower_bound(v_.begin(), v_.end(), s);
      if (i != v_.end() && *i == s) v_.erase(i);
    }
    bool count(unix_ms s) const { return std::binary_search(v_.begin(), v_.end(), s); }
    bool empty() const { return v_.empty(); }
    size_t size() const { return v_.size(); }

   private:
    std::vector<unix_ms> v_;
  };
  static unix_ms jittered(uint64_t id, duration_ms jitter, unix_ms slot);
  static unix_ms jittered(const terms& t, unix_ms slot) { return jittered(t.id, t.jitter, slot); }

  struct entry {
    terms def;
    schedule sched;
    unix_ms next_slot = 0;                   // armed slot (0: none)
    std::set<std::string> active;            // non-terminal instance ids
    slot_set proposed;                       // fired slots whose commit is not settled
    // Slots waiting for the active run to end, oldest first (at most max_buffered).
    // A vector, not a deque: an empty libstdc++ deque allocates ~600 bytes, and
    // every task has one (an idle task's memory, #17).
    std::vector<unix_ms> buffered;
    std::optional<unix_ms> blocked;          // latest slot waiting for upstreams
    proto::instance_state last_state = proto::instance_state::pending;
    unix_ms last_slot = 0;
    unix_ms last_enqueued = 0;               // slot of this leader's latest bulk enqueue
    exclusion excluded;                      // its calendar in its zone (empty: none)
    uint64_t fires_committed = 0;            // scheduled fires in the store at upsert
    slot_set fires_proposed;                 // scheduled slots fired since (max_runs only)
  };

  void arm_after(entry& e, unix_ms after);
  /// Arms task `id` to fire at `due`: in ahead_ (a burst may bring it forward)
  /// or in timers_ (exactly then). disarm() cancels it in both.
  void arm(uint64_t id, unix_ms due, bool ahead);
  void disarm(uint64_t id);
  /// Keeps burst_ true when task `id` leaves ahead_ (before it does).
  void forget_burst(uint64_t id);
  /// How much earlier than due the earliest slots of ahead_ fire (the constructor).
  duration_ms burst_lead() const;
  /// Takes the slots collect() moved from ahead_ to due_buf_[from...] off burst_.
  void burst_fired(size_t from);
  static constexpr duration_ms burst_recount = 10;
  /// When slot `slot` of `t` fires: its jittered instant less lead_of(t).
  unix_ms fires_at(const terms& t, unix_ms slot) const { return jittered(t, slot) - lead_of(t); }
  /// How long before its instant a slot of `t` fires (see the constructor).
  duration_ms lead_of(const terms& t) const {
    auto d = dependents_.find(t.id);
    bool has_dependents = d != dependents_.end() && !d->second.empty();
    return t.jitter == 0 && t.depends_on().empty() && !has_dependents ? fire_ahead_ : 0;
  }
  /// Arms `e` again after `now` (a calendar it names changed).
  void rearm(entry& e, unix_ms now);
  /// Whether the schedule of `e` fired its max_runs.
  static bool exhausted(const entry& e) {
    return e.def.max_runs != 0 &&
           e.fires_committed + e.fires_proposed.size() >= e.def.max_runs;
  }
  exclusion exclusion_of(const terms& t) const;
  /// `scheduled`: the slot comes from the schedule or an event (counted and
  /// bounded by max_runs), not from a manual trigger or backfill.
  void decide(entry& e, unix_ms slot, decisions& out, bool scheduled,
              const std::string& event = {}, const std::string& payload = {});
  void decide_released(entry& e, unix_ms slot, decisions& out);
  size_t depth(uint64_t id, size_t guard = 0) const;
  /// Where the slots in (after, now] that are due at `now` end: a slot whose
  /// jittered instant is still ahead was not missed, so it and every slot after
  /// it are left to be armed (a new leader, or the end of a hold, inside a
  /// slot's jitter must not fire it early). `now` when the task has no jitter.
  unix_ms due_until(const entry& e, unix_ms after, unix_ms now) const;
  /// Queues the missed slots in (after, until] that the misfire policy keeps
  /// (`now` bounds the catch-up window); returns how many slots there were.
  uint64_t catch_up(entry& e, unix_ms after, unix_ms until, unix_ms now);
  void fire_now(entry& e, unix_ms slot, decisions& out, bool scheduled,
                const std::string& event = {}, const std::string& payload = {});
  /// The slot a bulk enqueue of `e` at `now` takes: `now`, or the first one
  /// after it and after the task's previous batch that no other fire holds, so
  /// batches never share run ids, whatever the number of producers, and their
  /// ids follow the order they were accepted in.
  unix_ms enqueue_slot(const entry& e, unix_ms now) const;
  bool upstreams_ok(const entry& e) const { return pending_upstreams(e).empty(); }
  /// Whether `e` fires on its upstreams' success: it has upstreams and no
  /// schedule, `at` or `event` of its own (a task with one fires at its own
  /// slots, each waiting for the upstreams).
  static bool chains(const entry& e) {
    return !e.def.depends_on().empty() && e.sched.is_manual() && e.def.event().empty();
  }
  /// Whether chaining task `e` fires now: unpaused, no run of it starting or
  /// waiting, every upstream's latest run succeeded. With `recovering`, also
  /// only if the newest of those runs is newer than its own latest run and its
  /// last change (resume_chains()).
  bool chain_due(const entry& e, bool recovering) const;
  /// The newest latest slot among the upstreams of `e` (0: none ran).
  unix_ms newest_upstream_slot(const entry& e) const;
  /// The upstreams of `e` whose latest slot has not succeeded (or is not settled).
  std::vector<uint64_t> pending_upstreams(const entry& e) const;
  static bool busy(const entry& e) { return !e.active.empty() || !e.proposed.empty(); }
  void release(entry& e);

  duration_ms fire_ahead_ = 0;
  std::unordered_map<uint64_t, entry> tasks_;
  // upstream task id -> tasks that depend on it (only tasks with depends_on)
  std::unordered_map<uint64_t, std::set<uint64_t>> dependents_;
  timer_queue timers_;  // slots decided at their instant (lead_of 0, or held for overlap)
  timer_queue ahead_;   // slots that fire ahead: keyed by instant less fire_ahead_
  /// How many slots of ahead_ are due from `first` (its earliest when counted)
  /// to burst_window after it; kept up to date by arm, disarm and collect,
  /// counted again (count_due_by) when the earliest leaves by a disarm, the
  /// window is past, or burst_recount after the count.
  struct burst_count {
    bool valid = false;
    unix_ms first = 0;
    size_t count = 0;
    unix_ms counted_at = 0;  // clock_ then
  };
  mutable burst_count burst_;
  unix_ms began_ = 0;  // the constructor's now: changes committed before it were decided
  unix_ms clock_ = 0;  // the latest collect()'s now
  /// A slot to decide at the next collect(): caught up, unblocked, requeued, or
  /// released from an overlap buffer (`released`: its turn has come).
  struct ready_slot {
    uint64_t task;
    unix_ms slot;
    bool released;
  };
  std::vector<ready_slot> ready_;
  /// Chaining tasks (chains()) to fire at the next collect() if chain_due().
  std::set<uint64_t> chained_;
  std::vector<timer_queue::fired> due_buf_;
  slot_stats stats_;
  std::map<std::pair<std::string, std::string>, proto::calendar> calendars_;  // tenant, name
};

}  // namespace aisched::trigger
