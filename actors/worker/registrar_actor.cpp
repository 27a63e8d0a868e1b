// Behaviour of the registrar; see registrar_actor.hpp.
#include "actors/worker/registrar_actor.hpp"

#include <chrono>
#include <cstdio>

#include <caf/actor_system.hpp>

#include "proto/cluster_link.hpp"
#include "proto/errors.hpp"

namespace aisched::worker {

using namespace proto;

namespace {

using self_ptr = caf::stateful_actor<registrar_state>*;
using connect_atom = caf::connect_atom;
using reconnect_atom = caf::atom_constant<caf::atom("reconnect")>;

constexpr auto connect_timeout = std::chrono::seconds(3);
constexpr auto retry_after = std::chrono::seconds(1);
constexpr auto heartbeat_every = std::chrono::seconds(5);

/// Registering again is the heartbeat (idempotent at the router); it carries
/// the machine's load and whether the worker drains.
void send_heartbeat(self_ptr self) {
  auto& st = self->state;
  st.info.cpu_percent = st.stats.cpu_percent();
  st.info.memory_percent = host_stats::memory_percent();
  self->send(st.router, register_atom::value, st.info, st.worker);
}

/// Says once per distinct reason why the cluster cannot be reached (wrong
/// address, scheduler down, TLS credentials rejected: CAF reports a refused
/// handshake only to us), so an operator sees it without a line a second.
void report_unreachable(self_ptr self, const std::string& why) {
  auto& st = self->state;
  if (why == st.last_error) return;
  st.last_error = why;
  std::fprintf(stderr, "registrar %s: cannot register with the cluster at %s:%u: %s; retrying\n",
               st.info.id.c_str(), st.host.c_str(), unsigned(st.port), why.c_str());
}

void retry_later(self_ptr self) {
  self->state.router = nullptr;
  self->delayed_send(self, retry_after, reconnect_atom::value, ++self->state.generation);
}

void connect(self_ptr self) {
  auto& st = self->state;
  auto gen = ++st.generation;
  auto mm = proto::cluster_connector(self->system());  // TLS when configured
  self->request(mm, connect_timeout, connect_atom::value, st.host, st.port)
      .then(
          [=](const caf::node_id&, caf::strong_actor_ptr& ptr,
              const std::set<std::string>& ifs) {
            if (gen != self->state.generation) return;
            if (!ptr || !self->system().assignable<endpoint_actor>(ifs)) {
              report_unreachable(self, "no endpoint published there");
              return retry_later(self);
            }
            auto ep = caf::actor_cast<endpoint_actor>(std::move(ptr));
            self->request(ep, connect_timeout, handles_atom::value)
                .then(
                    [=](router_actor router, caf::actor&) {
                      if (gen != self->state.generation) return;
                      auto& st = self->state;
                      st.last_error.clear();
                      st.router = router;
                      self->monitor(router);
                      send_heartbeat(self);
                      // Unacknowledged reports of the worker go to this router now.
                      self->send(st.worker, subscribe_atom::value,
                                 caf::actor_cast<caf::actor>(router));
                      self->delayed_send(self, heartbeat_every, caf::tick_atom::value, gen);
                    },
                    [=](caf::error& e) {
                      if (gen != self->state.generation) return;
                      report_unreachable(self, self->system().render(e));
                      retry_later(self);
                    });
          },
          [=](caf::error& e) {
            if (gen != self->state.generation) return;
            report_unreachable(self, self->system().render(e));
            retry_later(self);
          });
}

}  // namespace

caf::behavior registrar_actor_impl(self_ptr self, std::string host, uint16_t port, proto::worker info,
                                   worker_actor worker) {
  auto& st = self->state;
  st.host = std::move(host);
  st.port = port;
  st.info = std::move(info);
  st.worker = std::move(worker);
  self->set_down_handler([=](const caf::down_msg& dm) {
    if (self->state.router && dm.source == self->state.router.address()) retry_later(self);
  });
  connect(self);
  return {
      [=](reconnect_atom, uint64_t gen) {
        if (gen == self->state.generation) connect(self);
      },
      [=](caf::tick_atom, uint64_t gen) {
        auto& st = self->state;
        if (gen != st.generation || !st.router) return;
        send_heartbeat(self);
        self->delayed_send(self, heartbeat_every, caf::tick_atom::value, gen);
      },
      [=](drain_atom) {
        self->state.info.status = worker_status::draining;
        if (self->state.router) send_heartbeat(self);
      },
  };
}

caf::behavior local_registrar_impl(self_ptr self, router_actor router, proto::worker info,
                                   worker_actor worker) {
  auto& st = self->state;
  st.router = std::move(router);
  st.info = std::move(info);
  st.worker = std::move(worker);
  send_heartbeat(self);
  self->send(st.worker, subscribe_atom::value, caf::actor_cast<caf::actor>(st.router));
  self->delayed_send(self, heartbeat_every, caf::tick_atom::value, st.generation);
  return {
      [=](caf::tick_atom, uint64_t gen) {
        send_heartbeat(self);
        self->delayed_send(self, heartbeat_every, caf::tick_atom::value, gen);
      },
      [=](drain_atom) {
        self->state.info.status = worker_status::draining;
        send_heartbeat(self);
      },
  };
}

}  // namespace aisched::worker
