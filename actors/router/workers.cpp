// The leader's worker set as the router changes it; see workers.hpp.
#include "actors/router/workers.hpp"

#include <chrono>
#include <string>
#include <vector>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/router/dispatching.hpp"
#include "actors/worker_proxy/worker_proxy_actor.hpp"
#include "common/log.hpp"
#include "obs/metrics.hpp"

namespace aisched::router {

using namespace proto;

namespace {

/// How long a probe of a worker that left a dispatch unanswered waits: its
/// heartbeat period (registrar_actor.hpp), after which the next one asks again.
constexpr auto probe_timeout = std::chrono::seconds(5);

void rebuild_ring(router_state& st) {
  std::vector<std::string> ids;
  for (auto& w : st.workers.entries())
    if (w.c.status == worker_status::online) ids.push_back(w.info.id);
  st.ring.rebuild(ids);
}

}  // namespace

void start_proxies(self_ptr self) {
  auto& st = self->state;
  for (auto& w : st.workers.entries()) {
    if (w.proxy) continue;
    if (w.info.protocol == worker_protocol::http)
      w.proxy = self->spawn<caf::linked>(worker_proxy::http_worker_proxy_impl, w.info.id,
                                         w.info.address, st.opts.report_base, st.opts.http_pool,
                                         st.raft, st.lead.term, st.clock);
    else
      w.proxy = self->spawn<caf::linked>(worker_proxy::worker_proxy_impl, w.info.id, w.handle,
                                         caf::actor_cast<not_taken_sink>(self), st.raft,
                                         st.lead.term, st.clock);
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
  return st.workers.upsert(std::move(info), now_of(self));
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

/// The set of workers taking runs changed: rebuild the hash ring and the
/// workers_* gauges.
void workers_changed(self_ptr self) {
  auto& st = self->state;
  rebuild_ring(st);
  double by_status[3] = {0, 0, 0};  // indexed by worker_status
  for (auto& w : st.workers.entries()) by_status[static_cast<size_t>(w.c.status)] += 1;
  obs::get().workers_online.set(by_status[0]);
  obs::get().workers_offline.set(by_status[1]);
  obs::get().workers_draining.set(by_status[2]);
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

void probe_worker(self_ptr self, worker_entry& w) {
  if (w.probing || !w.handle) return;
  w.probing = true;
  auto id = w.info.id;
  auto asked = w.handle;
  auto epoch = self->state.lead.epoch;
  auto answered = [=](bool ok) {
    auto& st = self->state;
    auto* x = find_worker(st, id);
    // Its registration was replaced meanwhile (a new link): that one decides.
    if (!st.lead.current(epoch) || !x || caf::actor_cast<caf::strong_actor_ptr>(x->handle) !=
                                             caf::actor_cast<caf::strong_actor_ptr>(asked))
      return;
    x->probing = false;
    if (!ok || !x->unanswered) return;
    x->unanswered = false;
    log::info("worker answered the leader again: it takes runs again",
              {{"actor", "router"}, {"worker_id", id}});
    set_status(self, *x, worker_status::online);
  };
  self->request(asked, probe_timeout, inspect_atom::value)
      .then([=](actor_summary&) { answered(true); }, [=](caf::error&) { answered(false); });
}

/// Forgets every worker: the registry belongs to the leader, and workers
/// register again with whoever leads next.
void forget_workers(self_ptr self) {
  auto& st = self->state;
  stop_proxies(self);
  for (auto& w : st.workers.entries())
    if (w.handle) self->demonitor(w.handle.address());
  st.workers.clear();
  workers_changed(self);
}

}  // namespace aisched::router
