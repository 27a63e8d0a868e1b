// Dispatching; see dispatching.hpp.
#include "actors/router/dispatching.hpp"

#include <algorithm>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "actors/router/withdrawal.hpp"
#include "common/log.hpp"
#include "obs/metrics.hpp"
#include "proto/errors.hpp"

namespace aisched::router {

using namespace proto;

namespace {

/// Commits run `x`'s attempt as failed: it could not be sent (`why`).
void fail_unsent(self_ptr self, const instance& x, const caf::error& why) {
  auto& st = self->state;
  log::warn("run not sent", {{"actor", "router"}, {"instance_id", x.id},
                             {"error", view(why).message}});
  auto now = now_of(self);
  report_results cmd{st.lead.term, now, {unsendable(x, why, now)}};
  self->request(st.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
      .then([](applied&) {}, [](caf::error&) {});  // uncommitted: the deadline times it out
}

/// Hands run `x` of `t` to its worker's proxy with its secrets' values; a run
/// that cannot be sent (a secret it names is gone) ends failed instead. A run
/// no longer assigned to that worker (cancelled or ended meanwhile) is not sent.
void send_run(self_ptr self, const task& t, const instance& x) {
  auto& st = self->state;
  auto a = st.term.assigned.find(x.id);
  auto* w = find_worker(st, x.worker_id);
  if (a == st.term.assigned.end() || a->second.worker != x.worker_id || !w || !w->proxy) return;
  auto req = make_request(t, x, st.opts.reveal_secrets);
  if (req) {
    req->leader_term = st.lead.term;  // fences it: see execute_request::leader_term
    // Fired ahead of its instant (planner.hpp): the worker holds it until then.
    if (x.created_at < x.slot) {
      req->not_before = x.slot;
      req->hold_ms = std::max<duration_ms>(0, x.slot - now_of(self));
    }
    return self->send(w->proxy, execute_atom::value, std::move(*req));
  }
  fail_unsent(self, x, req.error());
}

bool is_active_in_flight(instance_state s) {
  return s == instance_state::dispatched || s == instance_state::running;
}

/// Whether committed `x` ends attempt `before` (in flight) at or past its
/// deadline: the node timed it out (the retry actor), its worker never said
/// it ended, and may still be running it (and counting it in its load).
bool expired_unreported(const instance& before, const instance& x) {
  return (x.state == instance_state::timed_out || x.state == instance_state::retry_waiting) &&
         before.deadline != 0 && x.finished_at >= before.deadline;
}

/// Tells the worker run `run_id` is assigned to (if any) to stop it.
void cancel_on_worker(self_ptr self, const std::string& run_id) {
  auto& st = self->state;
  auto i = st.term.assigned.find(run_id);
  if (i == st.term.assigned.end()) return;
  if (auto* w = find_worker(st, i->second.worker); w && w->proxy)
    self->send(w->proxy, cancel_run_atom::value, run_id);
}

}  // namespace

void schedule_dispatch(self_ptr self) {
  auto& st = self->state;
  if (st.dispatch_scheduled || !st.lead.leading || !st.lead.ready) return;
  st.dispatch_scheduled = true;
  self->send(self, wake_atom::value, static_cast<uint64_t>(wake_reason::dispatch));
}

void release(self_ptr self, const std::string& run_id) {
  auto& st = self->state;
  st.term.limits.release(run_id);
  auto i = st.term.assigned.find(run_id);
  if (i == st.term.assigned.end()) return;
  if (i->second.slot)
    if (auto* w = find_worker(st, i->second.worker); w && w->c.reserved > 0) w->c.reserved -= 1;
  st.term.assigned.erase(i);
  if (auto p = st.term.parked.find(run_id); p != st.term.parked.end()) {
    auto x = std::move(p->second);
    st.term.parked.erase(p);
    enqueue(st, x);
    schedule_dispatch(self);
  }
}

void reserve(router_state& st, worker_entry& w, const std::string& run_id, bool noop,
             unix_ms now) {
  bool slot = w.c.holds_slot(noop);
  st.term.assigned[run_id] = {w.info.id, slot};
  w.c.reserved += slot;
  w.c.uses += 1;
  w.c.last_used = now;
}

/// Run `x` (dispatched or running) holds a slot of its task's and pool's limits.
void hold_limits(router_state& st, const instance& x) {
  if (auto* t = st.term.tasks.terms(x.task_id)) st.term.limits.hold(x.id, *t);
}

void enqueue(router_state& st, const instance& x) {
  if (st.term.assigned.count(x.id)) return;
  auto* t = st.term.tasks.terms(x.task_id);
  st.term.queue.push(x, t && t->noop);
}

/// Sends run `x` (dispatched or adopted) with its task's definition: the
/// cached one, or one read from the store first. Runs of a task whose read is
/// under way wait for that read; a task gone meanwhile fails them (not sent).
void deliver(self_ptr self, const instance& x) {
  auto& st = self->state;
  if (auto* t = st.term.tasks.definition(x.task_id)) return send_run(self, *t, x);
  auto& waiting = st.term.reading[x.task_id];
  waiting.push_back(x);
  if (waiting.size() > 1) return;  // its read is under way
  auto epoch = st.lead.epoch;
  auto id = x.task_id;
  auto take = [=] {
    auto& st = self->state;
    auto i = st.term.reading.find(id);
    if (i == st.term.reading.end()) return std::vector<instance>{};
    auto runs = std::move(i->second);
    st.term.reading.erase(i);
    return runs;
  };
  self->request(st.store, request_timeout, get_task_atom::value, std::string{}, id)
      .then(
          [=](task& t) {
            if (!self->state.lead.current(epoch)) return;
            self->state.term.tasks.cache(t);
            for (auto& y : take()) send_run(self, t, y);
          },
          [=](caf::error& err) {
            if (!self->state.lead.current(epoch)) return;
            for (auto& y : take())
              if (self->state.term.assigned.count(y.id)) fail_unsent(self, y, err);
          });
}

namespace {

/// The runs `entries` that `cands` (a copy of the workers) placed in a round
/// (`slotless`: holding no slot) now hold their slots on the workers (`now`).
void reserve_placed(router_state& st, const std::vector<dispatch_entry>& entries,
                    const std::vector<bool>& slotless, unix_ms now) {
  for (size_t i = 0; i < entries.size(); ++i)
    if (auto* w = find_worker(st, entries[i].worker_id))
      reserve(st, *w, entries[i].instance_id, slotless[i], now);
}

/// Placed runs `entries` were committed as `a`: the ones it shows dispatched
/// go to their workers; the others (the state machine refused them: cancelled
/// meanwhile, or their slot had fired before) give their capacity back.
void placed_committed(self_ptr self, const std::vector<dispatch_entry>& entries,
                      const applied& a) {
  // Each entry makes at most one run dispatched: when as many are, all were
  // placed (nearly always), and no set of their ids is needed.
  auto placed_n = static_cast<size_t>(
      std::count_if(a.instances.begin(), a.instances.end(),
                    [](const instance& x) { return x.state == instance_state::dispatched; }));
  obs::get().dispatch_ok.inc(static_cast<double>(placed_n));
  obs::get().dispatch_refused.inc(static_cast<double>(entries.size() - placed_n));
  if (placed_n != entries.size()) {
    std::unordered_set<std::string> placed;
    for (auto& x : a.instances)
      if (x.state == instance_state::dispatched) placed.insert(x.id);
    for (auto& e : entries)
      if (!placed.count(e.instance_id)) release(self, e.instance_id);
  }
  for (auto& x : a.instances) {
    if (x.state != instance_state::dispatched) continue;
    if (log::enabled(log::level::info))  // per run: no strings built when off
      log::info("run dispatched", {{"actor", "router"},
                                   {"task_id", std::to_string(x.task_id)},
                                   {"instance_id", x.id},
                                   {"trace_id", x.trace_id},
                                   {"worker_id", x.worker_id},
                                   {"attempt", std::to_string(x.attempt)}});
    if (!withdraw_if_paused(self, x)) deliver(self, x);
  }
}

}  // namespace

/// Places queued runs on workers and commits one dispatch batch.
void dispatch(self_ptr self) {
  auto& st = self->state;
  st.dispatch_scheduled = false;
  // Backpressure defers firing (the trigger's part), never the drain: only
  // dispatching lowers the backlog, so holding it at red would hold it forever.
  if (!st.lead.leading || !st.lead.ready || st.term.queue.empty()) return;
  std::vector<candidate> cands;
  for (auto& w : st.workers.entries()) cands.push_back(w.c);
  // Once the free slots are taken only no-ops fit, so the rest of the queue is
  // not looked at (a backlog far larger than the workers' capacity would
  // otherwise be rescanned on every finished run).
  uint64_t free_slots = free_slots_of(cands);
  uint64_t free_noops = takes_free_noops(cands) ? st.term.queue.noops() : 0;
  if (free_slots + free_noops == 0) return;  // a finished run or a new worker wakes us
  auto now = now_of(self);
  // The dispatch rate limit: at most this many runs leave now.
  auto budget = st.bucket->take(
      std::min<uint64_t>({st.term.queue.size(), max_batch, free_slots + free_noops}), now);
  obs::get().dispatch_tokens.set(st.bucket->tokens(now));
  if (budget == 0) {
    if (!st.waiting_for_tokens) {
      st.waiting_for_tokens = true;
      self->delayed_send(self, std::chrono::milliseconds(std::max<duration_ms>(1, st.bucket->wait_ms(now))),
                         wake_atom::value, static_cast<uint64_t>(wake_reason::tokens_refilled));
    }
    return;
  }
  st.pick.ring = &st.ring;
  auto task_of = [&](uint64_t id) { return st.term.tasks.terms(id); };
  auto round = place(st.term.queue, task_of, cands, budget, scan_limit, st.pick, st.term.limits);
  for (auto& q : round.orphaned) {
    // The task was deleted: nothing to run it with. Not committed: it waits
    // in the queue again (popped, it would otherwise wait for the next
    // leader). Refused: it had ended or gone otherwise.
    cancel c{"", q.run.id, now, "task deleted before the run was dispatched"};
    auto epoch = st.lead.epoch;
    self->request(st.raft, request_timeout, propose_atom::value, command{std::move(c)})
        .then([](applied&) {},
              [=](caf::error& e) {
                auto& st = self->state;
                auto code = view(e).code;
                if (code == errc::illegal_transition || code == errc::not_found) return;
                if (st.lead.current(epoch) && !st.term.in_flight.count(q.run.id))
                  st.term.queue.push(q.run, q.noop);
              });
  }
  proto::dispatch cmd{st.lead.term, now, std::move(round.placed)};
  reserve_placed(st, cmd.entries, round.slotless, now);
  if (cmd.entries.empty()) return;
  auto epoch = st.lead.epoch;
  auto entries = cmd.entries;
  auto runs = std::make_shared<std::vector<run_queue::queued>>(std::move(round.runs));
  self->request(st.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
      .then(
          [=](applied& a) {
            auto& st = self->state;
            if (!st.lead.current(epoch)) return;
            placed_committed(self, entries, a);
            if (!st.term.queue.empty()) schedule_dispatch(self);
          },
          [=](caf::error&) {
            // Not committed: give the capacity back; the runs are still pending
            // and wait in the queue again (a dispatch that commits after all
            // makes them in flight; a second one of a run is then refused).
            obs::get().dispatch_error.inc(static_cast<double>(entries.size()));
            auto& st = self->state;
            if (!st.lead.current(epoch)) return;
            for (auto& e : entries) release(self, e.instance_id);
            // Not if it went in flight otherwise meanwhile (the dispatch
            // committed after all); a run placed again (in flight already,
            // takeover.cpp) is queued again while its committed view is the same.
            for (auto& q : *runs) {
              auto f = st.term.in_flight.find(q.run.id);
              if (f == st.term.in_flight.end() || (run_step(f->second) == run_step(q.run) &&
                                              f->second.worker_id == q.run.worker_id))
                st.term.queue.push(q.run, q.noop);
            }
            self->delayed_send(self, std::chrono::milliseconds(200), wake_atom::value,
                               static_cast<uint64_t>(wake_reason::dispatch));
          });
  if (!st.term.queue.empty()) schedule_dispatch(self);
}

namespace {

using applied_promise = caf::typed_response_promise<applied>;

/// The registry's workers as placement sees them: a copy, in which a round
/// reserves the slots it takes.
std::vector<candidate> candidates_of(router_state& st) {
  std::vector<candidate> cands;
  for (auto& w : st.workers.entries()) cands.push_back(w.c);
  return cands;
}

/// Commits fire `f`, its broadcast slots' fanout decided, and answers `rp`
/// with the commit. Its runs are placed in the same command (fire_placed)
/// only when no run waits (those go first, in order) and this router leads
/// the fire's term with its view rebuilt.
void commit_fire(self_ptr self, fire f, applied_promise rp) {
  auto& st = self->state;
  auto pass_on = [rp](caf::expected<applied> a) mutable {
    if (a) rp.deliver(std::move(*a));
    else rp.deliver(std::move(a.error()));
  };
  placement_round round;
  if (st.lead.leading && st.lead.ready && f.term == st.lead.term && st.term.queue.empty()) {
    auto cands = candidates_of(st);
    auto task_of = [&](uint64_t id) { return st.term.tasks.terms(id); };
    auto runs = runs_fired(f.slots, task_of);
    // A slot fired again (its fire was not known to commit) may have runs
    // placed already: such a fire is committed as it is.
    if (std::any_of(runs.items().begin(), runs.items().end(), [&](const run_queue::queued& q) {
          return st.term.assigned.count(q.run.id) > 0;
        }))
      runs.clear();
    auto now = now_of(self);
    // No max_batch here: the fire carries these runs whether placed or not.
    uint64_t room = std::min<uint64_t>(
        runs.size(), free_slots_of(cands) + (takes_free_noops(cands) ? runs.noops() : 0));
    if (auto budget = room == 0 ? 0 : st.bucket->take(room, now); budget > 0) {
      st.pick.ring = &st.ring;
      round = place(runs, task_of, cands, budget, runs.size(), st.pick, st.term.limits);
    }
  }
  if (round.placed.empty()) {
    self->request(st.raft, request_timeout, propose_atom::value, command{std::move(f)})
        .then([=](applied& a) mutable { pass_on(std::move(a)); },
              [=](caf::error& e) mutable { pass_on(std::move(e)); });
    return;
  }
  reserve_placed(st, round.placed, round.slotless, now_of(self));
  auto epoch = st.lead.epoch;
  auto entries = round.placed;
  fire_placed cmd{f.term, f.at, std::move(f.slots), std::move(round.placed)};
  self->request(st.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
      .then(
          [=](applied& a) mutable {
            if (self->state.lead.current(epoch)) placed_committed(self, entries, a);
            pass_on(std::move(a));
          },
          [=](caf::error& e) mutable {
            // Not committed: the trigger decides the fire again; the slots are free.
            obs::get().dispatch_error.inc(static_cast<double>(entries.size()));
            if (self->state.lead.current(epoch))
              for (auto& x : entries) release(self, x.instance_id);
            pass_on(std::move(e));
          });
}

/// Decides the fanout of `f`'s broadcast slots by the tasks the book knows,
/// or else `read` (read from the store for this fire), then commits `f`.
void decide_and_commit(self_ptr self, fire f, const std::unordered_map<uint64_t, task_terms>& read,
                       applied_promise rp) {
  auto& st = self->state;
  auto task_of = [&](uint64_t id) -> const task_terms* {
    if (auto* t = st.term.tasks.terms(id)) return t;
    auto i = read.find(id);
    return i == read.end() ? nullptr : &i->second;
  };
  decide_fanout(f.slots, task_of, candidates_of(st));
  commit_fire(self, std::move(f), std::move(rp));
}

caf::error not_leading_term(uint64_t term) {
  return make_error(errc::not_leader, "term",
                    "this router does not lead term " + std::to_string(term) + "; retry shortly");
}

/// Reads the tasks `ids` of fire `f` that this term's book does not know yet
/// (its rebuild is under way, or the commit that made them has not reached
/// the router) from the store, then decides and commits `f`. The store holds
/// every commit the trigger has seen, so each read answers at once: a task
/// not found was deleted since, and the state machine skips its slots. Any
/// other failure, or the term ending meanwhile, answers `rp` with an error
/// and commits nothing: the trigger decides those slots again.
void read_then_commit(self_ptr self, fire f, const std::set<uint64_t>& ids, applied_promise rp) {
  struct reads {
    fire f;
    applied_promise rp;
    std::unordered_map<uint64_t, task_terms> tasks;
    size_t left = 0;
    caf::error failed;
  };
  auto r = std::make_shared<reads>();
  r->f = std::move(f);
  r->rp = std::move(rp);
  r->left = ids.size();
  auto epoch = self->state.lead.epoch;
  auto one_done = [=] {
    if (--r->left > 0) return;
    if (!self->state.lead.current(epoch))
      r->rp.deliver(not_leading_term(r->f.term));
    else if (r->failed)
      r->rp.deliver(std::move(r->failed));
    else
      decide_and_commit(self, std::move(r->f), r->tasks, std::move(r->rp));
  };
  for (auto id : ids)
    self->request(self->state.store, request_timeout, get_task_atom::value, std::string{}, id)
        .then(
            [=](task& t) {
              r->tasks.emplace(id, task_terms::of(t));
              one_done();
            },
            [=](caf::error& err) {
              if (view(err).code != errc::not_found && !r->failed) r->failed = std::move(err);
              one_done();
            });
}

}  // namespace

void propose_fire(self_ptr self, fire f, applied_promise rp) {
  auto& st = self->state;
  // Its fanout can be decided only by the term's leader (raft would refuse
  // such a fire anyway: fenced by its term).
  if (!st.lead.leading || f.term != st.lead.term) {
    rp.deliver(not_leading_term(f.term));
    return;
  }
  std::set<uint64_t> unknown;
  for (auto& s : f.slots)
    if (!st.term.tasks.terms(s.task_id)) unknown.insert(s.task_id);
  if (!unknown.empty()) return read_then_commit(self, std::move(f), unknown, std::move(rp));
  decide_and_commit(self, std::move(f), {}, std::move(rp));
}

/// Applies one committed instance state to the queue and reservations.
void observe(self_ptr self, const instance& x) {
  auto& st = self->state;
  bool expired = false;
  if (x.state != instance_state::pending && !st.term.parked.empty()) st.term.parked.erase(x.id);
  if (is_active_in_flight(x.state)) {
    st.term.in_flight[x.id] = x;
    hold_limits(st, x);
  } else if (auto f = st.term.in_flight.find(x.id); f != st.term.in_flight.end()) {
    expired = expired_unreported(f->second, x);
    st.term.in_flight.erase(f);
  }
  switch (x.state) {
    case instance_state::pending:
      // Placed, its dispatch not committed yet: a note_waiting (or a retry)
      // that commits meanwhile reports it pending, and must not give its
      // slots back. Should that placement not dispatch it, it is queued as
      // this view then (release).
      if (st.term.assigned.count(x.id)) {
        st.term.parked[x.id] = x;
        break;
      }
      release(self, x.id);  // a retry comes back as pending
      enqueue(st, x);
      break;
    case instance_state::dispatched:
    case instance_state::running:
      break;
    case instance_state::cancelled:
      cancel_on_worker(self, x.id);
      release(self, x.id);
      break;
    default:  // success, failed, timed_out, retry_waiting: capacity is free again
      // Timed out by its deadline: stopped on its worker too, so that an
      // external worker's heartbeat stops counting it (candidate::reported).
      // Lost attempts were cancelled there when they were ended (takeover.hpp).
      if (expired) cancel_on_worker(self, x.id);
      release(self, x.id);
      break;
  }
  if (!is_active_in_flight(x.state) && !st.term.orphans.empty()) {
    auto& o = st.term.orphans;
    o.erase(std::remove_if(o.begin(), o.end(), [&](const instance& y) { return y.id == x.id; }),
            o.end());
  }
}

}  // namespace aisched::router
