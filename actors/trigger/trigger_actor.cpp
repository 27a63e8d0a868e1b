// Behaviour of the trigger actor; see trigger_actor.hpp.
#include "actors/trigger/trigger_actor.hpp"

#include <chrono>

#include <caf/stateful_actor.hpp>
#include <caf/to_string.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/counted.hpp"
#include "obs/metrics.hpp"
#include "common/log.hpp"
#include "proto/errors.hpp"
#include "common/store_scan.hpp"

namespace aisched::trigger {

using namespace proto;

namespace {

using self_ptr = trigger_actor::stateful_pointer<trigger_state>;

constexpr auto request_timeout = std::chrono::seconds(10);
constexpr duration_ms retry_fire_after = 200;

/// Arms the single wake-up timer for the planner's next due instant.
void rearm(self_ptr self) {
  auto& st = self->state;
  if (!st.lead.leading || !st.lead.ready || st.load.level == pressure_level::red) return;
  auto due = st.term.plan->next_due();
  if (!due) return;
  auto now = now_of(self);
  auto at = std::max(*due, now);
  if (st.load.level == pressure_level::yellow) at += st.load.delay;
  if (st.term.armed_for != 0 && st.term.armed_for <= at) return;  // an earlier timer is armed
  st.term.armed_for = at;
  auto gen = ++st.timer_gen;
  if (at <= now) self->send(self, wake_atom::value, gen);
  else self->delayed_send(self, std::chrono::milliseconds(at - now), wake_atom::value, gen);
}

/// Adds what the planner counted since the last call to scheduler_slots_total
/// (each term's planner counts from zero, and so does its `reported`). Fired slots
/// are counted at commit instead (count_committed): a proposal that fails is
/// decided again, and the planner would count it twice.
void publish_slot_stats(trigger_state& st) {
  if (!st.term.plan) return;
  auto& m = obs::get();
  auto add = [](const obs::counter& c, uint64_t now, uint64_t& seen) {
    if (now > seen) c.inc(static_cast<double>(now - seen));
    seen = now;
  };
  const auto& counted = st.term.plan->stats();
  add(m.slots_skipped, counted.skipped, st.term.reported.skipped);
  add(m.slots_missed, counted.missed, st.term.reported.missed);
  add(m.slots_buffered, counted.buffered, st.term.reported.buffered);
}

/// Counts the slots of a committed fire: fired when it created instances,
/// deduplicated when it did not (the slot had fired already, e.g. under the
/// previous leader, or its task was deleted meanwhile). For scheduled slots
/// (`scheduled`), also the lateness from the nominal slot to now, the commit.
void count_committed(size_t slots, const applied& a, unix_ms now, bool scheduled) {
  auto& m = obs::get();
  size_t fired = 0;
  for (auto& x : a.instances) {
    if (log::enabled(log::level::info))  // per run: no strings built when off
      log::info("run fired", {{"actor", "trigger"},
                              {"task_id", std::to_string(x.task_id)},
                              {"instance_id", x.id},
                              {"trace_id", x.trace_id},
                              {"slot", format_rfc3339(x.slot)}});
    if (x.shard != 0) continue;  // one instance per shard, all created together
    ++fired;
    if (scheduled)
      m.trigger_lateness_seconds.observe(static_cast<double>(std::max<unix_ms>(0, now - x.slot)) /
                                         1000.0);
  }
  m.slots_fired.inc(static_cast<double>(fired));
  if (slots > fired) m.slots_deduplicated.inc(static_cast<double>(slots - fired));
}

/// Proposes fire `f` through the router (or raft, without one).
auto propose_fire(self_ptr self, fire f) {
  auto& st = self->state;
  if (st.fires_to)
    return self->request(st.fires_to, request_timeout, propose_atom::value, std::move(f));
  return self->request(st.raft, request_timeout, propose_atom::value, command{std::move(f)});
}

void on_fire_failed(self_ptr self, const fire& f, uint64_t epoch) {
  auto& st = self->state;
  if (!st.lead.current(epoch) || !st.term.plan) return;
  for (auto& s : f.slots) {
    st.term.plan->settle(s);
    // Decide the same slot again shortly (a repeated fire is a no-op in storage).
    if (st.lead.leading) st.term.plan->requeue(s);
  }
  if (st.lead.leading)
    self->delayed_send(self, std::chrono::milliseconds(retry_fire_after), wake_atom::value,
                       uint64_t{0});
}

void propose_decisions(self_ptr self, decisions d, unix_ms now) {
  auto& st = self->state;
  auto epoch = st.lead.epoch;
  for (auto& id : d.cancels) {
    cancel c{"", id, now, "replaced by a newer slot (overlap: replace)"};
    self->request(st.raft, request_timeout, propose_atom::value, command{std::move(c)})
        .then([](applied&) {}, [](caf::error&) {});
  }
  if (d.fires.empty()) return;
  fire f{st.lead.term, now, std::move(d.fires)};
  auto copy = f;
  propose_fire(self, std::move(f))
      .then(
          [=](applied& a) {
            count_committed(copy.slots.size(), a, now_of(self), true);
            auto& st = self->state;
            if (!st.lead.current(epoch) || !st.term.plan) return;
            for (auto& s : copy.slots) st.term.plan->settle(s);
            rearm(self);
          },
          [=](caf::error&) { on_fire_failed(self, copy, epoch); });
}

caf::error not_leading(const trigger_state& st) {
  return make_error(errc::not_leader, "leader",
                    st.leader_id.empty() ? "no leader is known right now; retry shortly"
                                         : "this node does not lead; send this to the leader, " +
                                               st.leader_id);
}

using applied_promise = caf::typed_response_promise<applied>;

/// Proposes `d` at once and answers `rp` with the committed effect (the
/// instances created); an empty decision answers an empty `applied`.
void commit_now(self_ptr self, decisions d, unix_ms now, applied_promise rp) {
  auto& st = self->state;
  publish_slot_stats(st);
  for (auto& id : d.cancels) {
    cancel c{"", id, now, "replaced by a newer run (overlap: replace)"};
    self->request(st.raft, request_timeout, propose_atom::value, command{std::move(c)})
        .then([](applied&) {}, [](caf::error&) {});
  }
  if (d.fires.empty()) {
    applied held;
    held.waiting_for = std::move(d.waiting_for);
    rp.deliver(std::move(held));
    return;
  }
  auto slots = d.fires;
  auto epoch = st.lead.epoch;
  auto settle = [=] {
    auto& st = self->state;
    if (st.lead.current(epoch) && st.term.plan)
      for (auto& s : slots) st.term.plan->settle(s);
  };
  propose_fire(self, fire{st.lead.term, now, std::move(d.fires)})
      .then(
          [=](applied& a) mutable {
            count_committed(slots.size(), a, now_of(self), false);
            settle();
            rp.deliver(std::move(a));
          },
          [=](caf::error& e) mutable {
            settle();
            rp.deliver(std::move(e));
          });
}

/// Runs `fn` with a promise for the current request: now if this node leads
/// and has rebuilt its view; while that rebuild runs, later (a request right
/// after startup or a failover waits a moment instead of failing).
template <class Fn>
caf::result<applied> when_ready(self_ptr self, Fn fn) {
  auto& st = self->state;
  if (!st.lead.leading) return not_leading(st);
  auto rp = self->make_response_promise<applied>();
  if (st.lead.ready) fn(rp);
  else st.deferred.emplace_back(fn, rp);
  return rp;
}

void wake(self_ptr self) {
  auto& st = self->state;
  if (!st.lead.leading || !st.lead.ready || st.load.level == pressure_level::red) return;
  auto now = now_of(self);
  auto d = st.term.plan->collect(now);
  publish_slot_stats(st);
  if (!d.empty()) propose_decisions(self, std::move(d), now);
  rearm(self);
}

/// Gives the planner every tenant's calendars, then runs `next`. Without them
/// it would fire on excluded dates, so a read that fails is tried again
/// (`tries` times); after that the trigger stays not ready for this term (a
/// store that cannot be read fences the member anyway) and says so.
template <class Next>
void load_calendars(self_ptr self, uint64_t epoch, int tries, Next next) {
  self->request(self->state.store, request_timeout, controls_atom::value, std::string{})
      .then(
          [=](controls& c) {
            auto& st = self->state;
            if (!st.lead.current(epoch) || !st.term.plan) return;
            for (auto& cal : c.calendars) st.term.plan->put_calendar(cal, now_of(self));
            next();
          },
          [=](caf::error& err) {
            if (!self->state.lead.current(epoch)) return;
            if (tries > 1) return load_calendars(self, epoch, tries - 1, next);
            log::error("trigger: cannot read the calendars; not firing in this term",
                       {{"actor", "trigger"}, {"error", caf::to_string(err)}});
          });
}

/// Rebuilds the planner from committed state: the calendars tasks exclude,
/// every task (misfire policies decide what an outage missed), then the runs
/// still active (overlap policies).
void rebuild(self_ptr self, uint64_t epoch) {
  auto alive = [=] { return self->state.lead.current(epoch); };
  auto on_tasks = [=](schedule_page& page) {
    auto& st = self->state;
    auto now = now_of(self);
    for (size_t i = 0; i < page.tasks.size(); ++i)
      st.term.plan->upsert(page.tasks[i], page.runtimes[i], now, true);
  };
  auto on_active = [=](schedule_page& page) {
    for (auto& x : page.active) self->state.term.plan->observe(x);
  };
  auto done = [=] {
    auto& st = self->state;
    if (!st.lead.rebuilt(epoch)) return;
    auto deferred = std::move(st.deferred);
    st.deferred.clear();
    for (auto& [fn, rp] : deferred) fn(rp);
    st.term.plan->resume_chains();  // a success the previous leader did not chain yet
    wake(self);
  };
  load_calendars(self, epoch, 3, [=] {
    storage::scan_tasks(self, self->state.store, 0, alive, on_tasks, [=] {
      storage::scan_active(self, self->state.store, "", alive, on_active, done);
    });
  });
}

/// Says why a DAG stops: the latest run of task `x.task_id` ended without
/// success, so the tasks that depend on it do not fire (until a later run of
/// it succeeds, e.g. a retry of this one).
void log_stopped_chain(const planner& plan, const instance& x) {
  if (x.shard != 0 || !is_terminal(x.state) || x.state == instance_state::success) return;
  auto deps = plan.dependents_of(x.task_id);
  if (deps.empty()) return;
  std::string ids;
  for (auto id : deps) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  log::warn("dag: an upstream run did not succeed; its dependents do not fire",
            {{"actor", "trigger"},
             {"task_id", std::to_string(x.task_id)},
             {"instance_id", x.id},
             {"state", std::string(name_of(x.state))},
             {"dependents", ids}});
}

/// The trigger's part of aisched-inspect: leadership, tasks planned, armed
/// slots, the next due instant and the one CAF timer armed for it.
std::map<std::string, std::string> details_of(self_ptr self) {
  auto& st = self->state;
  std::optional<unix_ms> due;
  if (st.term.plan) due = st.term.plan->next_due();
  return {{"leading", inspector::text(st.lead.leading)},
          {"ready", inspector::text(st.lead.ready)},
          {"term", std::to_string(st.lead.term)},
          {"tasks", std::to_string(st.term.plan ? st.term.plan->task_count() : 0)},
          {"armed", std::to_string(st.term.plan ? st.term.plan->armed_count() : 0)},
          {"next_due", due ? inspector::instant(*due) : "-"},
          {"timer_at", inspector::instant(st.term.armed_for)},
          {"pressure", inspector::text(st.load.level)},
          {"deferred", std::to_string(st.deferred.size())}};
}

}  // namespace

trigger_actor::behavior_type trigger_actor_impl(self_ptr self, raft_actor raft, store_actor store,
                                                wall_clock clock, duration_ms fire_ahead) {
  auto& st = self->state;
  st.fire_ahead = fire_ahead;
  st.raft = std::move(raft);
  st.store = std::move(store);
  st.clock = clock;
  return inspector::counted(self, {
      [=](inspect_atom) { return inspector::summary_of(self, details_of(self)); },
      [=](leader_atom, const leadership& l) {
        auto& st = self->state;
        st.lead.change(l.leading, l.term);
        st.leader_id = l.leader_id;
        ++st.timer_gen;          // a timer the last term armed wakes stale
        publish_slot_stats(st);  // the last term's counts not yet in the metrics
        // The last term's planner, counts and timer go whole; a leader's term
        // gets an empty planner, rebuilt below.
        st.term = l.leading ? term_state{now_of(self), st.fire_ahead} : term_state{};
        if (!l.leading) {
          // Requests that waited for a rebuild that will not happen now.
          auto deferred = std::move(st.deferred);
          st.deferred.clear();
          for (auto& [fn, rp] : deferred) rp.deliver(not_leading(st));
          return;
        }
        // Rebuild from committed state; misfire policies decide what the outage missed.
        // Requests still deferred (from the last term, if this node led it too)
        // are answered when this rebuild is done.
        rebuild(self, st.lead.epoch);
      },
      [=](committed_atom, const applied& a) {
        auto& st = self->state;
        if (!st.term.plan) return;
        auto now = now_of(self);
        for (auto& c : a.calendars) st.term.plan->put_calendar(c, now);
        for (auto& c : a.deleted_calendars) st.term.plan->remove_calendar(c.tenant, c.name, now);
        for (auto& t : a.tasks) st.term.plan->upsert(t, task_runtime{t.id, 0, {}, {}}, now, false);
        for (auto id : a.deleted_tasks) st.term.plan->remove(id);
        for (auto& x : a.instances) {
          st.term.plan->observe(x);
          log_stopped_chain(*st.term.plan, x);
        }
        if (st.lead.ready) rearm(self);
      },
      [=](subscribe_atom, fire_proposer_actor router) {
        self->state.fires_to = std::move(router);
      },
      [=](pressure_atom, const pressure& p) {
        auto& st = self->state;
        bool eased = p.level < st.load.level;
        if (eased && st.load.level == pressure_level::red && st.term.plan) {
          // The slots red held back: the misfire policy decides which fire now,
          // late; all of them count as scheduler_slots_total{outcome="deferred"}.
          auto held = st.term.plan->release_held(now_of(self));
          if (held > 0) obs::get().slots_deferred.inc(static_cast<double>(held));
        }
        st.load = p;
        if (eased) {
          st.term.armed_for = 0;  // re-arm now: deferred slots may fire
          rearm(self);
        }
      },
      [=](wake_atom, uint64_t gen) {
        auto& st = self->state;
        if (gen != 0 && gen != st.timer_gen) return;  // a stale timer
        if (gen != 0) st.term.armed_for = 0;
        wake(self);
      },
      [=](trigger_now_atom, const std::string& tenant,
          uint64_t task_id) -> caf::result<applied> {
        return when_ready(self, [=](applied_promise rp) {
          auto& st = self->state;
          auto now = now_of(self);
          auto d = st.term.plan->trigger_now(tenant, task_id, now);
          if (!d) {
            rp.deliver(d.error());
            return;
          }
          commit_now(self, std::move(*d), now, rp);
        });
      },
      [=](event_atom, const std::string& tenant, const std::string& name,
          const std::string& payload) -> caf::result<applied> {
        return when_ready(self, [=](applied_promise rp) {
          auto& st = self->state;
          auto now = now_of(self);
          commit_now(self, st.term.plan->fire_event(tenant, name, payload, now), now, rp);
        });
      },
      [=](enqueue_atom, const std::string& tenant, uint64_t task_id,
          std::vector<std::string>& payloads) -> caf::result<applied> {
        return when_ready(self, [=](applied_promise rp) {
          auto& st = self->state;
          auto now = now_of(self);
          auto d = st.term.plan->enqueue(tenant, task_id, payloads, now);
          if (!d) {
            rp.deliver(d.error());
            return;
          }
          commit_now(self, std::move(*d), now, rp);
        });
      },
      [=](backfill_atom, const std::string& tenant, uint64_t task_id, unix_ms from,
          unix_ms to) -> caf::result<applied> {
        return when_ready(self, [=](applied_promise rp) {
          auto& st = self->state;
          auto d = st.term.plan->backfill(tenant, task_id, from, to);
          if (!d) {
            rp.deliver(d.error());
            return;
          }
          commit_now(self, std::move(*d), now_of(self), rp);
        });
      },
  });
}

}  // namespace aisched::trigger
