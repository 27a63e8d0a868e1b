// Behaviour of the router actor; see router_actor.hpp.
#include "actors/router/router_actor.hpp"

#include <algorithm>
#include <chrono>
#include <functional>

#include <caf/stateful_actor.hpp>
#include <caf/to_string.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/counted.hpp"
#include "actors/router/adoption.hpp"
#include "actors/router/leader_forward.hpp"
#include "actors/router/run_request.hpp"
#include "actors/router/waiting.hpp"
#include "actors/worker_proxy/worker_proxy_actor.hpp"
#include "obs/metrics.hpp"
#include "common/log.hpp"
#include "proto/cluster_link.hpp"
#include "proto/errors.hpp"
#include "actors/store/store_scan.hpp"

namespace aisched::router {

using namespace proto;

namespace {

using self_ptr = router_actor::stateful_pointer<router_state>;

constexpr auto request_timeout = std::chrono::seconds(10);
constexpr size_t max_batch = 4096;  // runs placed per dispatch proposal
constexpr size_t scan_limit = 4 * max_batch;  // queued runs looked at per dispatch round

worker_entry* find_worker(router_state& st, const std::string& id) { return st.workers.find(id); }

void schedule_dispatch(self_ptr self) {
  auto& st = self->state;
  if (st.dispatch_scheduled || !st.lead.leading || !st.lead.ready) return;
  st.dispatch_scheduled = true;
  self->send(self, wake_atom::value, static_cast<uint64_t>(wake_reason::dispatch));
}

void release(self_ptr self, const std::string& run_id) {
  auto& st = self->state;
  st.limits.release(run_id);
  auto i = st.assigned.find(run_id);
  if (i == st.assigned.end()) return;
  if (auto* w = find_worker(st, i->second); w && w->c.reserved > 0) w->c.reserved -= 1;
  st.assigned.erase(i);
}

void reserve(router_state& st, worker_entry& w, const std::string& run_id) {
  st.assigned[run_id] = w.info.id;
  w.c.reserved += 1;
  w.c.uses += 1;
  w.c.last_used = now_ms();
}

/// Run `x` (dispatched or running) holds a slot of its task's and pool's limits.
void hold_limits(router_state& st, const instance& x) {
  if (auto* t = st.tasks.terms(x.task_id)) st.limits.hold(x.id, *t);
}

void enqueue(router_state& st, const instance& x) {
  if (st.assigned.count(x.id)) return;
  st.queue.push(x);
}

/// Commits run `x`'s attempt as failed: it could not be sent (`why`).
void fail_unsent(self_ptr self, const instance& x, const caf::error& why) {
  auto& st = self->state;
  log::warn("run not sent", {{"actor", "router"}, {"instance_id", x.id},
                             {"error", view(why).message}});
  report_results cmd{st.lead.term, now_ms(), {unsendable(x, why)}};
  self->request(st.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
      .then([](applied&) {}, [](caf::error&) {});  // uncommitted: the deadline times it out
}

/// Hands run `x` of `t` to its worker's proxy with its secrets' values; a run
/// that cannot be sent (a secret it names is gone) ends failed instead. A run
/// no longer assigned to that worker (cancelled or ended meanwhile) is not sent.
void send_run(self_ptr self, const task& t, const instance& x) {
  auto& st = self->state;
  auto a = st.assigned.find(x.id);
  auto* w = find_worker(st, x.worker_id);
  if (a == st.assigned.end() || a->second != x.worker_id || !w || !w->proxy) return;
  auto req = make_request(t, x, st.opts.reveal_secrets);
  if (req) return self->send(w->proxy, execute_atom::value, std::move(*req));
  fail_unsent(self, x, req.error());
}

/// Sends run `x` (dispatched or adopted) with its task's definition: the
/// cached one, or one read from the store first. Runs of a task whose read is
/// under way wait for that read; a task gone meanwhile fails them (not sent).
void deliver(self_ptr self, const instance& x) {
  auto& st = self->state;
  if (auto* t = st.tasks.definition(x.task_id)) return send_run(self, *t, x);
  auto& waiting = st.reading[x.task_id];
  waiting.push_back(x);
  if (waiting.size() > 1) return;  // its read is under way
  auto epoch = st.lead.epoch;
  auto id = x.task_id;
  auto take = [=] {
    auto& st = self->state;
    auto i = st.reading.find(id);
    if (i == st.reading.end()) return std::vector<instance>{};
    auto runs = std::move(i->second);
    st.reading.erase(i);
    return runs;
  };
  self->request(st.store, request_timeout, get_task_atom::value, std::string{}, id)
      .then(
          [=](task& t) {
            if (!self->state.lead.current(epoch)) return;
            self->state.tasks.cache(t);
            for (auto& y : take()) send_run(self, t, y);
          },
          [=](caf::error& err) {
            if (!self->state.lead.current(epoch)) return;
            for (auto& y : take())
              if (self->state.assigned.count(y.id)) fail_unsent(self, y, err);
          });
}

void start_proxies(self_ptr self) {
  auto& st = self->state;
  for (auto& w : st.workers.entries()) {
    if (w.proxy) continue;
    if (w.info.protocol == worker_protocol::http)
      w.proxy = self->spawn<caf::linked>(worker_proxy::http_worker_proxy_impl, w.info.id,
                                         w.info.address, st.opts.report_base, st.opts.http_pool,
                                         st.raft, st.lead.term);
    else
      w.proxy = self->spawn<caf::linked>(worker_proxy::worker_proxy_impl, w.info.id, w.handle,
                                         st.raft, st.lead.term);
  }
}

/// Adds or refreshes a worker entry; the old proxy (if any) is replaced.
worker_entry& upsert_worker(self_ptr self, proto::worker info) {
  auto& st = self->state;
  if (auto* old = find_worker(st, info.id); old && old->proxy) {
    self->unlink_from(old->proxy);
    self->send_exit(old->proxy, caf::exit_reason::user_shutdown);
    old->proxy = nullptr;
  }
  return st.workers.upsert(std::move(info), now_ms());
}

void stop_proxies(self_ptr self) {
  for (auto& w : self->state.workers.entries()) {
    if (w.proxy) {
      self->unlink_from(w.proxy);
      self->send_exit(w.proxy, caf::exit_reason::user_shutdown);
      w.proxy = nullptr;
    }
  }
}

void rebuild_ring(router_state& st) {
  std::vector<std::string> ids;
  for (auto& w : st.workers.entries())
    if (w.c.status == worker_status::online) ids.push_back(w.info.id);
  st.ring.rebuild(ids);
}

/// The set of workers taking runs changed: rebuild the hash ring and tell the
/// trigger (broadcast tasks fan out to the online matching workers).
void workers_changed(self_ptr self) {
  auto& st = self->state;
  rebuild_ring(st);
  double by_status[3] = {0, 0, 0};  // indexed by worker_status
  for (auto& w : st.workers.entries()) by_status[static_cast<size_t>(w.c.status)] += 1;
  obs::get().workers_online.set(by_status[0]);
  obs::get().workers_offline.set(by_status[1]);
  obs::get().workers_draining.set(by_status[2]);
  if (!st.census_to) return;
  std::vector<const worker_entry*> online;
  for (auto& w : st.workers.entries())
    if (w.c.status == worker_status::online) online.push_back(&w);
  std::sort(online.begin(), online.end(),
            [](auto* a, auto* b) { return a->c.order < b->c.order; });
  worker_census census;
  for (auto* w : online) census.push_back(w->info.labels);
  self->send(st.census_to, census_atom::value, std::move(census));
}

/// Moves a worker to `s`; a reachable worker that is drained (by an operator
/// or itself) is `draining`: its runs finish, nothing new goes there.
void set_status(self_ptr self, worker_entry& w, worker_status s) {
  if (s == worker_status::online && (w.drained || w.draining_itself)) s = worker_status::draining;
  if (w.c.status == s) return;
  w.c.status = w.info.status = s;
  workers_changed(self);
  if (s == worker_status::online) schedule_dispatch(self);
}

/// Places queued runs on workers and commits one dispatch batch.
void dispatch(self_ptr self) {
  auto& st = self->state;
  st.dispatch_scheduled = false;
  // Backpressure defers firing (the trigger's part), never the drain: only
  // dispatching lowers the backlog, so holding it at red would hold it forever.
  if (!st.lead.leading || !st.lead.ready || st.queue.empty()) return;
  std::vector<candidate> cands;
  for (auto& w : st.workers.entries()) cands.push_back(w.c);
  // Free slots over the online workers: once they are taken nothing else fits,
  // so the rest of the queue is not looked at (a backlog far larger than the
  // workers' capacity would otherwise be rescanned on every finished run).
  uint64_t free_slots = 0;
  for (auto& c : cands)
    if (c.status == worker_status::online && c.has_capacity()) free_slots += c.max_load - c.load();
  if (free_slots == 0) return;  // a finished run or a new worker wakes us
  auto now = now_ms();
  // The dispatch rate limit: at most this many runs leave now.
  auto budget =
      st.bucket->take(std::min<uint64_t>({st.queue.size(), max_batch, free_slots}), now);
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
  auto task_of = [&](uint64_t id) { return st.tasks.terms(id); };
  auto round = place(st.queue, task_of, cands, budget, scan_limit, st.pick, st.limits);
  for (auto& id : round.orphaned) {
    // The task was deleted: nothing to run it with.
    cancel c{"", id, now_ms(), "task deleted before the run was dispatched"};
    self->request(st.raft, request_timeout, propose_atom::value, command{std::move(c)})
        .then([](applied&) {}, [](caf::error&) {});
  }
  proto::dispatch cmd{st.lead.term, now, std::move(round.placed)};
  for (auto& e : cmd.entries)
    if (auto* w = find_worker(st, e.worker_id)) reserve(st, *w, e.instance_id);
  if (cmd.entries.empty()) return;
  auto epoch = st.lead.epoch;
  auto entries = cmd.entries;
  self->request(st.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
      .then(
          [=](applied& a) {
            auto& st = self->state;
            if (!st.lead.current(epoch)) return;
            std::unordered_set<std::string> placed;
            for (auto& x : a.instances)
              if (x.state == instance_state::dispatched) placed.insert(x.id);
            obs::get().dispatch_ok.inc(static_cast<double>(placed.size()));
            obs::get().dispatch_refused.inc(static_cast<double>(entries.size() - placed.size()));
            // Runs the state machine refused (cancelled meanwhile) give capacity back.
            for (auto& e : entries)
              if (!placed.count(e.instance_id)) release(self, e.instance_id);
            for (auto& x : a.instances) {
              if (x.state != instance_state::dispatched) continue;
              log::info("run dispatched", {{"actor", "router"},
                                           {"task_id", std::to_string(x.task_id)},
                                           {"instance_id", x.id},
                                           {"trace_id", x.trace_id},
                                           {"worker_id", x.worker_id},
                                           {"attempt", std::to_string(x.attempt)}});
              deliver(self, x);
            }
            if (!st.queue.empty()) schedule_dispatch(self);
          },
          [=](caf::error&) {
            // Not committed: give the capacity back; the runs are still pending.
            obs::get().dispatch_error.inc(static_cast<double>(entries.size()));
            auto& st = self->state;
            if (!st.lead.current(epoch)) return;
            for (auto& e : entries) release(self, e.instance_id);
            self->delayed_send(self, std::chrono::milliseconds(200), wake_atom::value,
                               static_cast<uint64_t>(wake_reason::dispatch));
          });
  if (!st.queue.empty()) schedule_dispatch(self);
}

bool is_active_in_flight(instance_state s) {
  return s == instance_state::dispatched || s == instance_state::running;
}

/// Applies one committed instance state to the queue and reservations.
void observe(self_ptr self, const instance& x) {
  auto& st = self->state;
  if (is_active_in_flight(x.state)) {
    st.in_flight[x.id] = x;
    hold_limits(st, x);
  } else {
    st.in_flight.erase(x.id);
  }
  switch (x.state) {
    case instance_state::pending:
      // Placed, its dispatch not committed yet: a note_waiting that commits
      // meanwhile reports it pending, and must not give its slots back.
      if (st.assigned.count(x.id)) break;
      release(self, x.id);  // a retry comes back as pending
      enqueue(st, x);
      break;
    case instance_state::dispatched:
    case instance_state::running:
      break;
    case instance_state::cancelled: {
      auto i = st.assigned.find(x.id);
      if (i != st.assigned.end())
        if (auto* w = find_worker(st, i->second); w && w->proxy)
          self->send(w->proxy, cancel_run_atom::value, x.id);
      release(self, x.id);
      break;
    }
    default:  // success, failed, timed_out, retry_waiting: capacity is free again
      release(self, x.id);
      break;
  }
  if (!is_active_in_flight(x.state) && !st.orphans.empty()) {
    auto& o = st.orphans;
    o.erase(std::remove_if(o.begin(), o.end(), [&](const instance& y) { return y.id == x.id; }),
            o.end());
  }
}

/// Takes over a run in flight on its (registered) worker: holds its capacity
/// and hands it over again; the worker's dedup makes a second delivery safe.
void adopt(self_ptr self, const instance& x) {
  auto& st = self->state;
  auto* w = find_worker(st, x.worker_id);
  if (!w) return;
  auto a = st.assigned.find(x.id);
  if (a != st.assigned.end() && a->second != w->info.id) return;
  if (a == st.assigned.end()) reserve(st, *w, x.id);
  deliver(self, x);
}

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

/// Forgets every worker: the registry belongs to the leader, and workers
/// register again with whoever leads next.
void forget_workers(self_ptr self) {
  auto& st = self->state;
  stop_proxies(self);
  for (auto& w : st.workers.entries())
    if (w.handle) self->demonitor(w.handle.address());
  st.workers.clear();
  st.held.clear();
  workers_changed(self);
}

/// The router's part of aisched-inspect: leadership, each worker as
/// "status load/max" (drained: by an operator), the queue and the tokens left.
std::map<std::string, std::string> details_of(self_ptr self) {
  auto& st = self->state;
  std::map<std::string, std::string> d{
      {"leading", inspector::text(st.lead.leading)},
      {"ready", inspector::text(st.lead.ready)},
      {"term", std::to_string(st.lead.term)},
      {"workers", std::to_string(st.workers.entries().size())},
      {"queue", std::to_string(st.queue.size())},
      {"in_flight", std::to_string(st.assigned.size())},
      {"orphans", std::to_string(st.orphans.size())},
      {"pressure", inspector::text(st.load.level)},
      {"tokens", st.bucket->unlimited() ? "unlimited"
                                        : std::to_string(static_cast<uint64_t>(
                                              st.bucket->tokens(now_ms())))}};
  for (auto& w : st.workers.entries())
    d["worker." + w.info.id] = std::string(name_of(w.c.status)) + " " +
                               std::to_string(w.c.load()) + "/" + std::to_string(w.c.max_load) +
                               (w.drained ? " drained" : "");
  return d;
}

/// An external worker's report, checked against the registry: the credential
/// must be the one issued to `r.worker_id`, and the report must name its
/// attempt (the state machine then refuses it unless that attempt is the
/// run's current one, dispatched to that worker).
caf::result<applied> verified_report(self_ptr self, run_result r, const std::string& credential) {
  auto& st = self->state;
  if (!st.workers.verify(r.worker_id, credential))
    return make_error(errc::forbidden, "credential",
                      "the worker credential does not belong to worker '" + r.worker_id + "'");
  if (r.attempt == 0)
    return make_error(errc::invalid_argument, "attempt", "attempt: required");
  // The worker's proxy proposes it, as it does a native worker's reports.
  auto* w = find_worker(st, r.worker_id);
  if (!w || !w->proxy)
    return make_error(errc::unavailable, "worker_id",
                      "this leader is still loading its workers; resend the report");
  auto rp = self->make_response_promise<applied>();
  self->request(w->proxy, request_timeout, report_atom::value, std::move(r), settle_atom::value)
      .then([=](applied& a) mutable { rp.deliver(std::move(a)); },
            [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

}  // namespace

router_actor::behavior_type router_actor_impl(self_ptr self, raft_actor raft, store_actor store,
                                              router_options opts) {
  self->state.raft = std::move(raft);
  self->state.store = std::move(store);
  self->state.opts = std::move(opts);
  self->state.bucket = std::make_unique<backpressure::token_bucket>(
      self->state.opts.dispatch_rate, self->state.opts.dispatch_burst, now_ms());
  self->delayed_send(self, std::chrono::seconds(1), caf::tick_atom::value);
  self->set_down_handler([=](const caf::down_msg& dm) {
    for (auto& w : self->state.workers.entries())
      if (w.handle && w.handle.address() == dm.source) set_status(self, w, worker_status::offline);
  });
  return inspector::counted(self, {
      [=](inspect_atom) { return inspector::summary_of(self, details_of(self)); },
      [=](leader_atom, const leadership& l) {
        auto& st = self->state;
        st.lead.change(l.leading, l.term);
        st.queue.clear();
        st.limits.clear();
        st.assigned.clear();
        st.noted.clear();
        st.orphans.clear();
        st.in_flight.clear();
        st.held.clear();  // said to the previous term's router, or before it
        st.tasks.clear();
        st.reading.clear();
        for (auto& w : st.workers.entries()) w.c.reserved = 0;
        st.leader_router = nullptr;
        stop_proxies(self);
        if (!l.leading) return forget_workers(self);
        start_proxies(self);
        rebuild(self, st.lead.epoch);
      },
      [=](committed_atom, const applied& a) {
        auto& st = self->state;
        if (!st.lead.leading) return;
        for (auto& p : a.pools) st.limits.set_pool(p);
        for (auto& t : a.tasks) st.tasks.put(t);
        for (auto id : a.deleted_tasks) st.tasks.erase(id);
        for (auto& x : a.instances) {
          if (x.state != instance_state::pending) st.noted.erase(x.id);
          observe(self, x);
        }
        schedule_dispatch(self);
      },
      [=](pressure_atom, const pressure& p) {
        self->state.load = p;
        schedule_dispatch(self);
      },
      [=](register_atom, proto::worker& info, worker_actor handle) {
        auto& st = self->state;
        if (!st.lead.leading) return;  // its registrar finds the leader and registers there
        info.protocol = worker_protocol::native;
        st.held[info.id] = {st.lead.epoch, info.held};
        if (auto* known = find_worker(st, info.id); known && known->handle == handle) {
          // A periodic re-registration of the same worker: a heartbeat. Its
          // runs waiting as orphans (registered before this term's rebuild
          // found them) are settled by what it holds now.
          if (std::any_of(st.orphans.begin(), st.orphans.end(),
                          [&](const instance& x) { return x.worker_id == info.id; }))
            settle(self, info.id, false);
          known->info.last_heartbeat = now_ms();
          bool relabelled = known->info.labels != info.labels;
          known->info.labels = known->c.labels = info.labels;
          known->info.max_load = info.max_load;
          known->info.cpu_percent = info.cpu_percent;
          known->info.memory_percent = info.memory_percent;
          known->c.max_load = info.max_load;
          known->draining_itself = info.status == worker_status::draining;
          set_status(self, *known, worker_status::online);
          if (relabelled) workers_changed(self);
          return;
        }
        auto& w = upsert_worker(self, std::move(info));
        w.handle = handle;
        w.credential.clear();  // a cluster member: its link is its proof
        self->monitor(handle);
        workers_changed(self);
        if (self->state.lead.leading) start_proxies(self);
        settle(self, w.info.id, true);  // new, or restarted: it may have lost runs
        schedule_dispatch(self);
      },
      [=](register_atom, proto::worker& info) -> caf::result<proto::worker> {
        if (!self->state.lead.leading)
          return forward_to_leader<proto::worker>(self, register_atom::value, std::move(info));
        if (auto* known = find_worker(self->state, info.id); known && known->handle)
          return make_error(errc::already_exists, "id",
                            "worker id " + info.id + " is a cluster member's worker");
        info.protocol = worker_protocol::http;
        // Shared only as the cluster admin marked it (share_worker, read by the
        // gateway from the store): the registration's own claim is not enough.
        auto& w = upsert_worker(self, std::move(info));
        w.handle = nullptr;
        w.credential = make_credential();
        workers_changed(self);
        if (self->state.lead.leading) start_proxies(self);
        adopt_orphans(self, w.info.id);
        schedule_dispatch(self);
        auto reply = w.info;
        reply.credential = w.credential;  // the one answer that carries it
        return reply;
      },
      [=](heartbeat_atom, const worker_heartbeat& hb) -> caf::result<bool> {
        if (!self->state.lead.leading) return forward_to_leader<bool>(self, heartbeat_atom::value, hb);
        auto* w = find_worker(self->state, hb.id);
        if (!w) return false;  // unknown (e.g. after a leader change): register again
        if (w->info.protocol == worker_protocol::http &&
            !self->state.workers.verify(hb.id, hb.credential))
          return make_error(errc::forbidden, "credential",
                            "the worker credential does not belong to worker '" + hb.id + "'");
        w->c.reported = hb.load;
        w->info.load = hb.load;
        w->info.cpu_percent = hb.cpu_percent;
        w->info.memory_percent = hb.memory_percent;
        w->info.last_heartbeat = now_ms();
        w->draining_itself = hb.draining;
        set_status(self, *w, worker_status::online);
        return true;
      },
      [=](drain_atom, const std::string& id, bool drain) -> caf::result<proto::worker> {
        if (!self->state.lead.leading)
          return forward_to_leader<proto::worker>(self, drain_atom::value, id, drain);
        auto* w = find_worker(self->state, id);
        if (!w) return make_error(errc::not_found, "id", "no worker '" + id + "'");
        w->drained = drain;
        if (w->c.status != worker_status::offline) set_status(self, *w, worker_status::online);
        auto info = w->info;
        info.load = w->c.load();
        return info;
      },
      [=](share_atom, const std::string& id, const std::string& tenant,
          bool shared) -> caf::result<bool> {
        // The mark itself is replicated (share_worker); this applies it to the
        // worker registered now, if it registered from the marked tenant.
        if (!self->state.lead.leading)
          return forward_to_leader<bool>(self, share_atom::value, id, tenant, shared);
        auto* w = find_worker(self->state, id);
        if (!w || w->handle || w->info.tenant != tenant) return false;
        w->info.shared = w->c.shared = shared;
        workers_changed(self);
        schedule_dispatch(self);
        return true;
      },
      [=](remove_atom, const std::string& id) -> caf::result<bool> {
        if (!self->state.lead.leading) return forward_to_leader<bool>(self, remove_atom::value, id);
        // Its runs in flight keep their deadline: the retry actor times them out
        // and they run again elsewhere, so removing a worker loses no run.
        auto* w = find_worker(self->state, id);
        if (!w) return make_error(errc::not_found, "id", "no worker '" + id + "'");
        if (w->proxy) {
          self->unlink_from(w->proxy);
          self->send_exit(w->proxy, caf::exit_reason::user_shutdown);
        }
        if (w->handle) self->demonitor(w->handle.address());
        self->state.workers.remove(id);
        workers_changed(self);
        return true;
      },
      [=](output_atom, const std::string& instance_id,
          const caf::actor& follower) -> caf::result<bool> {
        auto& st = self->state;
        if (!st.lead.leading)
          return forward_to_leader<bool>(self, output_atom::value, instance_id, follower);
        auto i = st.assigned.find(instance_id);
        auto* w = i == st.assigned.end() ? nullptr : find_worker(st, i->second);
        if (!w || !w->handle) return false;  // not running here, or an HTTP worker
        auto rp = self->make_response_promise<bool>();
        self->request(w->handle, request_timeout, output_atom::value, instance_id, follower)
            .then([=](bool following) mutable { rp.deliver(following); },
                  [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return rp;
      },
      [=](caf::tick_atom) {
        // External workers that went silent are offline: nothing new goes there,
        // and their in-flight runs time out at their deadline and are retried.
        auto now = now_ms();
        for (auto& w : self->state.workers.entries())
          if (w.info.protocol == worker_protocol::http &&
              now - w.info.last_heartbeat > self->state.opts.heartbeat_timeout)
            set_status(self, w, worker_status::offline);
        obs::get().dispatch_tokens.set(self->state.bucket->tokens(now));  // refills while idle
        explain_waiting(self, scan_limit);
        self->delayed_send(self, std::chrono::seconds(1), caf::tick_atom::value);
      },
      [=](report_atom, run_result& r) {
        // A native worker re-sending a report it never got acknowledged: its
        // proxy commits it. (External workers report with their credential.)
        auto* w = find_worker(self->state, r.worker_id);
        if (w && w->proxy && w->handle) self->send(w->proxy, report_atom::value, std::move(r));
      },
      [=](report_atom, run_result& r, const std::string& credential) -> caf::result<applied> {
        if (!self->state.lead.leading)
          return forward_to_leader<applied>(self, report_atom::value, std::move(r), credential);
        return verified_report(self, std::move(r), credential);
      },
      [=](list_workers_atom) -> caf::result<worker_list> {
        if (!self->state.lead.leading) return forward_to_leader<worker_list>(self, list_workers_atom::value);
        return self->state.workers.list("");
      },
      [=](subscribe_atom, trigger_actor trigger) {
        self->state.census_to = std::move(trigger);
        workers_changed(self);
      },
      [=](wake_atom, uint64_t reason) {
        if (static_cast<wake_reason>(reason) == wake_reason::tokens_refilled)
          self->state.waiting_for_tokens = false;
        dispatch(self);
      },
  });
}

}  // namespace aisched::router
