// Behaviour of the router actor; see router_actor.hpp.
#include "actors/router/router_actor.hpp"

#include <algorithm>
#include <caf/stateful_actor.hpp>
#include <caf/to_string.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <chrono>
#include <functional>

#include "actors/router/dispatching.hpp"
#include "actors/router/leader_forward.hpp"
#include "actors/router/run_request.hpp"
#include "actors/router/takeover.hpp"
#include "actors/router/waiting.hpp"
#include "actors/router/withdrawal.hpp"
#include "actors/router/workers.hpp"
#include "common/counted.hpp"
#include "common/log.hpp"
#include "obs/metrics.hpp"
#include "common/cluster_link.hpp"
#include "proto/errors.hpp"

namespace aisched::router {

using namespace proto;

namespace {

/// The router's part of aisched-inspect: leadership, each worker as
/// "status load/max" (drained: by an operator), the queue and the tokens left.
std::map<std::string, std::string> details_of(self_ptr self) {
  auto& st = self->state;
  std::map<std::string, std::string> d{
      {"leading", inspector::text(st.lead.leading)},
      {"ready", inspector::text(st.lead.ready)},
      {"term", std::to_string(st.lead.term)},
      {"workers", std::to_string(st.workers.entries().size())},
      {"queue", std::to_string(st.term.queue.size())},
      {"in_flight", std::to_string(st.term.assigned.size())},
      {"orphans", std::to_string(st.term.orphans.size())},
      {"pressure", inspector::text(st.load.level)},
      {"tokens", st.bucket->unlimited() ? "unlimited"
                                        : std::to_string(static_cast<uint64_t>(
                                              st.bucket->tokens(now_of(self))))}};
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
  self->state.clock = self->state.opts.clock;
  self->state.bucket = std::make_unique<token_bucket>(
      self->state.opts.dispatch_rate, self->state.opts.dispatch_burst, now_of(self));
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
        st.term = term_state{now_of(self)};  // the last term's view goes whole
        // The slots reserved on the workers were the last term's assignments
        // (term.assigned), so they go too. Their counts live in the registry's
        // entries, which outlive the term, because placement takes its
        // candidates from there (worker_entry::c): hence this one loop.
        for (auto& w : st.workers.entries()) w.c.reserved = 0;
        stop_proxies(self);
        if (!l.leading) return forget_workers(self);
        start_proxies(self);
        rebuild(self, st.lead.epoch);
      },
      [=](committed_atom, const applied& a) {
        auto& st = self->state;
        if (!st.lead.leading) return;
        for (auto& p : a.pools) st.term.limits.set_pool(p);
        for (auto& t : a.tasks) st.term.tasks.put(t);
        for (auto id : a.deleted_tasks) st.term.tasks.erase(id);
        for (auto& x : a.instances) {
          // A note's own commit says what was noted; any other (a newer
          // attempt, pending again with its last attempt's error) is not noted.
          if (auto n = st.term.noted.find(x.id);
              n != st.term.noted.end() && (x.state != instance_state::pending || x.error != n->second))
            st.term.noted.erase(n);
          if (!st.lead.ready) {
            auto& seen = st.term.seen_in_rebuild[x.id];
            seen = std::max(seen, run_step(x));
          }
          observe(self, x);
        }
        follow_task_changes(self, a);
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
        st.term.held[info.id] = {st.lead.epoch, info.held};
        // The same actor over the same link. A worker node whose link dropped
        // (stopped, cut off) and came back registers a handle equal to the old
        // one but another object: CAF makes a proxy per connection, and the
        // old one reaches nothing. That is a new registration.
        auto same_link = [](const worker_actor& a, const worker_actor& b) {
          return caf::actor_cast<caf::strong_actor_ptr>(a).get() ==
                 caf::actor_cast<caf::strong_actor_ptr>(b).get();
        };
        if (auto* known = find_worker(st, info.id); known && same_link(known->handle, handle)) {
          // A periodic re-registration of the same worker: a heartbeat. Its
          // runs waiting as orphans (registered before this term's rebuild
          // found them) are settled by what it holds now.
          if (std::any_of(st.term.orphans.begin(), st.term.orphans.end(),
                          [&](const instance& x) { return x.worker_id == info.id; }))
            settle(self, info.id, false);
          known->info.last_heartbeat = now_of(self);
          bool relabelled = known->info.labels != info.labels;
          known->info.labels = known->c.labels = info.labels;
          known->info.max_load = info.max_load;
          known->info.cpu_percent = info.cpu_percent;
          known->info.memory_percent = info.memory_percent;
          known->c.max_load = info.max_load;
          known->draining_itself = info.status == worker_status::draining;
          revive(self, *known, &info.held);
          if (known->unanswered) probe_worker(self, *known);
          else set_status(self, *known, worker_status::online);
          if (relabelled) workers_changed(self);
          return;
        }
        auto& w = upsert_worker(self, std::move(info));
        w.handle = handle;
        w.credential.clear();  // a cluster member: its link is its proof
        self->monitor(handle);
        workers_changed(self);
        if (self->state.lead.leading) start_proxies(self);
        revive(self, w, &st.term.held[w.info.id].runs);
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
        revive(self, w, nullptr);
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
        w->info.last_heartbeat = now_of(self);
        w->draining_itself = hb.draining;
        revive(self, *w, nullptr);
        if (w->unanswered) probe_worker(self, *w);
        else set_status(self, *w, worker_status::online);
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
        // Its runs in flight end at once as lost with it (cancelled there first,
        // through its proxy) and are retried per their policy.
        auto* w = find_worker(self->state, id);
        if (!w) return make_error(errc::not_found, "id", "no worker '" + id + "'");
        end_removed(self, id);
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
        auto i = st.term.assigned.find(instance_id);
        auto* w = i == st.term.assigned.end() ? nullptr : find_worker(st, i->second.worker);
        if (!w || !w->handle) return false;  // not running here, or an HTTP worker
        auto rp = self->make_response_promise<bool>();
        self->request(w->handle, request_timeout, output_atom::value, instance_id, follower)
            .then([=](bool following) mutable { rp.deliver(following); },
                  [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return rp;
      },
      [=](caf::tick_atom) {
        // External workers that went silent are offline: nothing new goes there.
        // Any worker silent for dead_after is dead: its runs end worker_lost.
        auto now = now_of(self);
        for (auto& w : self->state.workers.entries())
          if (w.info.protocol == worker_protocol::http &&
              now - w.info.last_heartbeat > self->state.opts.heartbeat_timeout)
            set_status(self, w, worker_status::offline);
        bury_silent(self, now);
        obs::get().dispatch_tokens.set(self->state.bucket->tokens(now));  // refills while idle
        explain_waiting(self, scan_limit);
        self->delayed_send(self, std::chrono::seconds(1), caf::tick_atom::value);
      },
      [=](not_taken_atom, const std::vector<run_result>& refused) {
        place_refused(self, refused);
      },
      [=](unanswered_atom, const std::string& worker_id) {
        // From the worker's current proxy only: an old one's request may time
        // out after the worker registered again.
        auto* w = find_worker(self->state, worker_id);
        if (!self->state.lead.leading || !w ||
            caf::actor_cast<caf::strong_actor_ptr>(w->proxy) != self->current_sender())
          return;
        if (!w->unanswered)
          log::warn("worker did not answer a dispatch: nothing new goes there until it answers",
                    {{"actor", "router"}, {"worker_id", worker_id}});
        // A native worker is probed over its link (probe_worker); one without
        // (never the sender today) comes back with its next heartbeat.
        w->unanswered = static_cast<bool>(w->handle);
        set_status(self, *w, worker_status::offline);
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
      [=](propose_atom, fire& f) -> caf::result<applied> {
        auto rp = self->make_response_promise<applied>();
        propose_fire(self, std::move(f), rp);
        return rp;
      },
      [=](wake_atom, uint64_t reason) {
        if (static_cast<wake_reason>(reason) == wake_reason::tokens_refilled)
          self->state.waiting_for_tokens = false;
        dispatch(self);
      },
  });
}

}  // namespace aisched::router
