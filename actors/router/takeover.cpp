// Taking over runs in flight; see takeover.hpp.
#include "actors/router/takeover.hpp"

#include <algorithm>
#include <vector>

#include <caf/stateful_actor.hpp>
#include <caf/to_string.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/router/adoption.hpp"
#include "actors/router/dispatching.hpp"
#include "actors/store/store_scan.hpp"
#include "common/log.hpp"

namespace aisched::router {

using namespace proto;

namespace {

/// Takes over a run in flight on its (registered) worker: holds its capacity
/// and hands it over again; the worker's dedup makes a second delivery safe.
void adopt(self_ptr self, const instance& x) {
  auto& st = self->state;
  auto* w = find_worker(st, x.worker_id);
  if (!w) return;
  auto a = st.assigned.find(x.id);
  if (a != st.assigned.end() && a->second.worker != w->info.id) return;
  if (a == st.assigned.end()) {
    auto* t = st.tasks.terms(x.task_id);
    reserve(st, *w, x.id, t && t->noop);
  }
  deliver(self, x);
}

/// Commits the end of attempts lost with their worker; the state machine
/// retries each per its task's policy. Not committed (leadership moved, a
/// timeout): those still in flight wait as orphans for the worker's next
/// registration, which decides again.
void report_lost(self_ptr self, std::vector<run_result> lost) {
  auto& st = self->state;
  if (lost.empty()) return;
  for (auto& r : lost)
    log::warn("run lost with its worker", {{"actor", "router"},
                                           {"instance_id", r.instance_id},
                                           {"worker_id", r.worker_id},
                                           {"attempt", std::to_string(r.attempt)}});
  auto epoch = st.lead.epoch;
  report_results cmd{st.lead.term, now_ms(), lost};
  self->request(st.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
      .then([](applied&) {},
            [=](caf::error&) {
              auto& st = self->state;
              if (!st.lead.current(epoch)) return;
              for (auto& r : lost)
                if (auto i = st.in_flight.find(r.instance_id);
                    i != st.in_flight.end() && i->second.attempt == r.attempt)
                  st.orphans.push_back(i->second);
            });
}

}  // namespace

/// A worker (re)registered: adopt the in-flight runs that were waiting for it.
void adopt_orphans(self_ptr self, const std::string& worker_id) {
  auto& st = self->state;
  if (!st.lead.leading) return;
  std::vector<instance> waiting;
  for (auto& x : st.orphans) {
    if (x.worker_id == worker_id) adopt(self, x);
    else waiting.push_back(std::move(x));
  }
  st.orphans = std::move(waiting);
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
    for (auto& [id, x] : st.in_flight)
      if (x.worker_id == worker_id) runs.push_back(x);
  } else {
    for (auto& x : st.orphans)
      if (x.worker_id == worker_id) runs.push_back(x);
  }
  auto& o = st.orphans;
  o.erase(std::remove_if(o.begin(), o.end(),
                         [&](const instance& y) { return y.worker_id == worker_id; }),
          o.end());
  auto h = sort_in_flight(runs, worker_id, st.held[worker_id].runs);
  for (auto& x : h.adopt) adopt(self, x);
  report_lost(self, std::move(h.lost));
}

/// Rebuilds the view from committed state after winning leadership: task
/// definitions, then pending runs (queued) and in-flight ones (adopted).
void rebuild(self_ptr self, uint64_t epoch) {
  auto alive = [=] { return self->state.lead.current(epoch); };
  auto on_tasks = [=](schedule_page& page) {
    for (auto& t : page.tasks) self->state.tasks.put(t);
  };
  auto on_active = [=](schedule_page& page) {
    auto& st = self->state;
    for (auto& x : page.active) {
      if (x.state == instance_state::pending) {
        enqueue(st, x);
      } else if (x.state == instance_state::dispatched || x.state == instance_state::running) {
        // In flight under the previous leader: hold its capacity and hand it
        // to its worker again (dedup there makes a second delivery safe) if
        // the worker holds it; a native worker that registered in this term
        // without it lost it. Otherwise it waits for its worker's registration.
        st.in_flight[x.id] = x;
        hold_limits(st, x);
        auto* w = find_worker(st, x.worker_id);
        auto h = st.held.find(x.worker_id);
        if (w && w->info.protocol == worker_protocol::http) {
          adopt(self, x);
        } else if (w && h != st.held.end() && h->second.epoch == st.lead.epoch) {
          auto sorted = sort_in_flight({x}, x.worker_id, h->second.runs);
          for (auto& y : sorted.adopt) adopt(self, y);
          report_lost(self, std::move(sorted.lost));
        } else {
          st.orphans.push_back(x);
        }
      }
    }
  };
  auto done = [=] {
    if (self->state.lead.rebuilt(epoch)) schedule_dispatch(self);
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
            for (auto& p : c.pools) self->state.limits.set_pool(p);
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
