// Taking over runs in flight; see takeover.hpp.
#include "actors/router/takeover.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <caf/stateful_actor.hpp>
#include <caf/to_string.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/router/adoption.hpp"
#include "actors/router/dispatching.hpp"
#include "actors/router/workers.hpp"
#include "common/log.hpp"
#include "common/store_scan.hpp"
#include "obs/metrics.hpp"
#include "proto/time.hpp"

namespace aisched::router {

using namespace proto;

namespace {

/// Takes over a run in flight on its (registered) worker: holds its capacity
/// and hands it over again; the worker's dedup makes a second delivery safe.
void adopt(self_ptr self, const instance& x) {
  auto& st = self->state;
  auto* w = find_worker(st, x.worker_id);
  if (!w) return;
  auto a = st.term.assigned.find(x.id);
  if (a != st.term.assigned.end() && a->second.worker != w->info.id) return;
  if (a == st.term.assigned.end()) {
    auto* t = st.term.tasks.terms(x.task_id);
    reserve(st, *w, x.id, t && t->noop, now_of(self));
  }
  deliver(self, x);
}

/// Commits the end of attempts lost with their worker; the state machine
/// retries each per its task's policy. Not committed (leadership moved, a
/// timeout): those still in flight wait as orphans for the worker's next
/// registration, which decides again, and bury_silent may end them again.
void report_lost(self_ptr self, std::vector<run_result> lost, const obs::counter& counted) {
  auto& st = self->state;
  if (lost.empty()) return;
  counted.inc(static_cast<double>(lost.size()));
  for (auto& r : lost)
    log::warn("run lost with its worker", {{"actor", "router"},
                                           {"instance_id", r.instance_id},
                                           {"worker_id", r.worker_id},
                                           {"attempt", std::to_string(r.attempt)}});
  auto epoch = st.lead.epoch;
  report_results cmd{st.lead.term, now_of(self), lost};
  self->request(st.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
      .then([](applied&) {},
            [=](caf::error&) {
              auto& st = self->state;
              if (!st.lead.current(epoch)) return;
              for (auto& r : lost) {
                if (auto i = st.term.in_flight.find(r.instance_id);
                    i != st.term.in_flight.end() && i->second.attempt == r.attempt)
                  st.term.orphans.push_back(i->second);
                if (auto d = st.term.dead.find(r.worker_id); d != st.term.dead.end())
                  d->second.erase({r.instance_id, r.attempt});  // may be ended again
              }
            });
}

/// Places again the attempts `runs` lost with their worker before they started
/// (adoption.hpp, never_started): each gives back what it held and is queued;
/// its next `dispatch` (dispatched -> dispatched, the same attempt) names the
/// worker that runs it. It was no execution: no attempt is recorded and none
/// counts against the task's max_attempts. Its old worker restarted or never
/// got it, so it runs nowhere else. Not committed: it stays in flight on the
/// old worker, and the next leader (or its deadline) decides again.
void place_again(self_ptr self, const std::vector<instance>& runs) {
  auto& st = self->state;
  for (auto& x : runs) {
    // Being placed again already (queued, or its dispatch elsewhere under way).
    auto a = st.term.assigned.find(x.id);
    if (st.term.queue.contains(x.id) ||
        (a != st.term.assigned.end() && a->second.worker != x.worker_id))
      continue;
    log::warn("run lost with its worker before it started: placed again as the same attempt",
              {{"actor", "router"}, {"instance_id", x.id}, {"worker_id", x.worker_id},
               {"attempt", std::to_string(x.attempt)}});
    release(self, x.id);
    enqueue(st, x);
  }
  if (!runs.empty()) schedule_dispatch(self);
}

/// Ends attempt `x` as lost with its worker `w` (nullptr: not registered),
/// once: cancelled on the worker, noted in st.term.dead, its report added to `lost`.
/// The caller drops the ended attempts from the orphans (drop_orphans).
void end_attempt(self_ptr self, worker_entry* w, const instance& x, const std::string& why,
                 std::vector<run_result>& lost) {
  auto& st = self->state;
  if (!st.term.dead[x.worker_id].insert({x.id, x.attempt}).second) return;
  if (w && w->proxy) self->send(w->proxy, cancel_run_atom::value, x.id);
  lost.push_back(lost_report(x, why));
}

/// Drops the orphans whose attempts `lost` ends, in one pass.
void drop_orphans(router_state& st, const std::vector<run_result>& lost) {
  if (lost.empty() || st.term.orphans.empty()) return;
  std::unordered_set<std::string> ended;
  for (auto& r : lost) ended.insert(r.instance_id);
  auto& o = st.term.orphans;
  o.erase(std::remove_if(o.begin(), o.end(), [&](const instance& y) { return ended.count(y.id); }),
          o.end());
}

}  // namespace

/// A worker (re)registered: adopt the in-flight runs that were waiting for it.
void adopt_orphans(self_ptr self, const std::string& worker_id) {
  auto& st = self->state;
  if (!st.lead.leading) return;
  std::vector<instance> waiting;
  for (auto& x : st.term.orphans) {
    if (x.worker_id == worker_id) adopt(self, x);
    else waiting.push_back(std::move(x));
  }
  st.term.orphans = std::move(waiting);
}

/// Settles the runs in flight on native worker `worker_id` by what its latest
/// registration says it holds: held ones are adopted, the others reported
/// lost. `all`: every run in flight on it (a new registration: the worker may
/// have restarted); otherwise only the orphans that wait for it.
void settle(self_ptr self, const std::string& worker_id, bool all) {
  auto& st = self->state;
  if (!st.lead.leading) return;
  std::vector<instance> runs;
  if (all) {
    for (auto& [id, x] : st.term.in_flight)
      if (x.worker_id == worker_id) runs.push_back(x);
  } else {
    for (auto& x : st.term.orphans)
      if (x.worker_id == worker_id) runs.push_back(x);
  }
  auto& o = st.term.orphans;
  o.erase(std::remove_if(o.begin(), o.end(),
                         [&](const instance& y) { return y.worker_id == worker_id; }),
          o.end());
  auto h = sort_in_flight(runs, worker_id, st.term.held[worker_id].runs);
  for (auto& x : h.adopt) adopt(self, x);
  place_again(self, h.replace);
  report_lost(self, std::move(h.lost), obs::get().attempts_lost_restarted);
}

void place_refused(self_ptr self, const std::vector<run_result>& refused) {
  auto& st = self->state;
  if (!st.lead.leading || refused.empty()) return;
  std::vector<instance> runs;
  for (auto& r : refused) {
    auto i = st.term.in_flight.find(r.instance_id);
    if (i == st.term.in_flight.end() || i->second.worker_id != r.worker_id ||
        i->second.attempt != r.attempt || i->second.state != instance_state::dispatched)
      continue;  // it has moved on meanwhile (cancelled, ended, placed elsewhere)
    runs.push_back(i->second);
  }
  if (runs.empty()) return;
  // One line for the batch (a burst may bring thousands), naming the first.
  log::warn("worker refused runs: placed again as the same attempts",
            {{"actor", "router"}, {"worker_id", refused.front().worker_id},
             {"runs", std::to_string(runs.size())}, {"instance_id", runs.front().id},
             {"reason", refused.front().error}});
  // Its next registration reopens it (the heartbeat, every registrar period).
  if (auto* w = find_worker(st, refused.front().worker_id)) w->c.max_load = 0;
  place_again(self, runs);
}

size_t end_removed(self_ptr self, const std::string& worker_id) {
  auto& st = self->state;
  if (!st.lead.leading) return 0;
  auto* w = find_worker(st, worker_id);
  std::vector<run_result> lost;
  for (auto& [id, x] : st.term.in_flight)
    if (x.worker_id == worker_id) end_attempt(self, w, x, "was removed", lost);
  drop_orphans(st, lost);
  auto n = lost.size();
  log::warn("worker removed: its runs end worker_lost",
            {{"actor", "router"}, {"worker_id", worker_id}, {"attempts", std::to_string(n)}});
  report_lost(self, std::move(lost), obs::get().attempts_lost_removed);
  return n;
}

void bury_silent(self_ptr self, unix_ms now) {
  auto& st = self->state;
  if (!st.lead.ready) return;
  auto dead_after = st.opts.dead_after;
  for (auto& w : st.workers.entries()) {
    if (now - w.info.last_heartbeat <= dead_after || !st.term.dead.try_emplace(w.info.id).second)
      continue;
    log::warn("worker dead: not heard from for " + format_duration(dead_after),
              {{"actor", "router"},
               {"worker_id", w.info.id},
               {"last_heartbeat", std::to_string(w.info.last_heartbeat)}});
    set_status(self, w, worker_status::offline);
  }
  // Once a second over every run in flight: a hash lookup each, no registry walk.
  std::unordered_map<std::string, unix_ms> heard;
  for (auto& w : st.workers.entries()) heard[w.info.id] = w.info.last_heartbeat;
  std::vector<run_result> lost;
  for (auto& [id, x] : st.term.in_flight) {
    auto h = heard.find(x.worker_id);
    if (now - (h != heard.end() ? h->second : st.term.led_since) <= dead_after) continue;
    auto* w = h != heard.end() ? find_worker(st, x.worker_id) : nullptr;
    end_attempt(self, w, x,
                w ? "was not heard from for " + format_duration(dead_after)
                  : "did not register with this leader within " + format_duration(dead_after),
                lost);
  }
  drop_orphans(st, lost);
  report_lost(self, std::move(lost), obs::get().attempts_lost_silent);
}

void revive(self_ptr self, worker_entry& w, const std::vector<held_run>* held) {
  auto& st = self->state;
  auto d = st.term.dead.find(w.info.id);
  if (d == st.term.dead.end()) return;
  std::set<std::pair<std::string, uint32_t>> holds;
  if (held)
    for (auto& r : *held) holds.insert({r.instance_id, r.attempt});
  for (auto& r : d->second)
    if ((!held || holds.count(r)) && w.proxy) self->send(w.proxy, cancel_run_atom::value, r.first);
  log::info("worker heard from again: the attempts ended with it are cancelled there",
            {{"actor", "router"}, {"worker_id", w.info.id}});
  st.term.dead.erase(d);
}

/// Rebuilds the view from committed state after winning leadership: task
/// definitions, then pending runs (queued) and in-flight ones (adopted).
void rebuild(self_ptr self, uint64_t epoch) {
  auto alive = [=] { return self->state.lead.current(epoch); };
  auto on_tasks = [=](schedule_page& page) {
    for (auto& t : page.tasks) self->state.term.tasks.put(t);
  };
  auto on_active = [=](schedule_page& page) {
    auto& st = self->state;
    for (auto& x : page.active) {
      // A commit observed since the rebuild began that is further along than
      // this page's view of the run wins (a stale page once re-adopted an
      // ended attempt over its retry, which then waited pending for good).
      if (auto s = st.term.seen_in_rebuild.find(x.id);
          s != st.term.seen_in_rebuild.end() && s->second > run_step(x))
        continue;
      if (x.state == instance_state::pending) {
        enqueue(st, x);
      } else if (x.state == instance_state::dispatched || x.state == instance_state::running) {
        // In flight under the previous leader: hold its capacity and hand it
        // to its worker again (dedup there makes a second delivery safe) if
        // the worker holds it; a native worker that registered in this term
        // without it lost it. Otherwise it waits for its worker's registration.
        st.term.in_flight[x.id] = x;
        hold_limits(st, x);
        auto* w = find_worker(st, x.worker_id);
        auto h = st.term.held.find(x.worker_id);
        if (w && w->info.protocol == worker_protocol::http) {
          adopt(self, x);
        } else if (w && h != st.term.held.end() && h->second.epoch == st.lead.epoch) {
          auto sorted = sort_in_flight({x}, x.worker_id, h->second.runs);
          for (auto& y : sorted.adopt) adopt(self, y);
          place_again(self, sorted.replace);
          report_lost(self, std::move(sorted.lost), obs::get().attempts_lost_restarted);
        } else {
          st.term.orphans.push_back(x);
        }
      }
    }
  };
  auto done = [=] {
    if (!self->state.lead.rebuilt(epoch)) return;
    self->state.term.seen_in_rebuild.clear();
    schedule_dispatch(self);
  };
  auto scan = [=] {
    storage::scan_tasks(self, self->state.store, 0, alive, on_tasks, [=] {
      storage::scan_active(self, self->state.store, "", alive, on_active, done);
    });
  };
  // Pool sizes first: runs of a pool this leader did not know would wait.
  self->request(self->state.store, request_timeout, controls_atom::value, std::string{})
      .then(
          [=](controls& c) {
            if (!alive()) return;
            for (auto& p : c.pools) self->state.term.limits.set_pool(p);
            scan();
          },
          [=](caf::error& err) {
            // Runs of pools then wait ("pool ... does not exist") until the
            // pool's next change; everything else dispatches as before.
            log::warn("router rebuild: reading the pools failed",
                      {{"actor", "router"}, {"error", caf::to_string(err)}});
            if (alive()) scan();
          });
}

}  // namespace aisched::router
