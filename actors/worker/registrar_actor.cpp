// Behaviour of the registrar; see registrar_actor.hpp.
#include "actors/worker/registrar_actor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <caf/actor_system.hpp>

#include "common/cluster_link.hpp"
#include "proto/errors.hpp"

namespace aisched::worker {

using namespace proto;

namespace {

using self_ptr = caf::stateful_actor<registrar_state>*;
using reconnect_atom = caf::atom_constant<caf::atom("reconnect")>;

constexpr auto ask_timeout = std::chrono::seconds(3);
constexpr auto retry_after = std::chrono::milliseconds(500);
constexpr auto tick_every = std::chrono::seconds(1);  // the leadership check
constexpr uint32_t heartbeat_ticks = 5;               // a registration every 5 s
constexpr int max_hops = 3;  // "ask X, X names the leader Y, ask Y ..." at most this often

/// Says once per distinct reason why the cluster cannot be reached (wrong
/// address, no leader yet, TLS credentials rejected: CAF reports a refused
/// handshake only to us), so an operator sees it without a line a second.
void report_unreachable(self_ptr self, const std::string& address, const std::string& why) {
  auto& st = self->state;
  auto line = address + ": " + why;
  if (line == st.last_error) return;
  st.last_error = line;
  std::fprintf(stderr, "registrar %s: cannot register with the cluster at %s; retrying\n",
               st.info().id.c_str(), line.c_str());
}

void unbind(self_ptr self) {
  auto& st = self->state;
  if (st.router) self->demonitor(st.router.address());
  st.router = nullptr;
  st.leader = nullptr;
}

/// Gives up on this attempt; the next one asks the next member known.
void retry_later(self_ptr self) {
  auto& st = self->state;
  unbind(self);
  st.next_seed = (st.next_seed + 1) % st.opts.seeds.size();
  self->delayed_send(self, retry_after, reconnect_atom::value, ++st.generation);
}

/// Remembers the members a status names, so the leader can be found again
/// from any of them when the one joined first is gone.
void learn(self_ptr self, const raft_status& s) {
  auto& st = self->state;
  auto& seeds = st.opts.seeds;
  for (auto& p : s.peers) {
    if (p.address.empty() || std::find(seeds.begin(), seeds.end(), p.address) != seeds.end())
      continue;
    if (st.opts.own_endpoint && p.id == st.info().id) continue;  // ourselves, under another name
    seeds.push_back(p.address);
  }
}

/// Registering again is the heartbeat (idempotent at the router); it carries
/// the machine's load, whether the worker drains and the runs the worker
/// holds, asked of it first: a leader declares an attempt it believes in
/// flight here lost when the worker does not hold it. Without that answer
/// nothing is sent (a registration without it would lose every run); the
/// first registration then starts over, a heartbeat waits for the next one.
void send_heartbeat(self_ptr self, bool first = false) {
  auto& st = self->state;
  st.info().cpu_percent = st.stats.cpu_percent();
  st.info().memory_percent = host_stats::memory_percent();
  auto gen = st.generation;
  self->request(st.opts.worker, ask_timeout, held_atom::value, st.leader_term,
                st.leader_cluster)
      .then(
          [=](std::vector<held_run>& held, std::string& outbox_fault) {
            auto& st = self->state;
            if (gen != st.generation || !st.router) return;
            st.info().held = std::move(held);
            // A worker whose outbox failed still registers (the leader must see
            // it and the runs it holds) but with no capacity: no run is placed
            // on it. The worker itself logged why.
            if (!outbox_fault.empty()) st.info().max_load = 0;
            self->send(st.router, register_atom::value, st.info(), st.opts.worker);
          },
          [=](caf::error& e) {
            if (gen != self->state.generation || !first) return;
            report_unreachable(self, "the local worker", self->system().render(e));
            retry_later(self);
          });
}

void bind(self_ptr self, endpoint_actor leader, router_actor router, uint64_t term,
          std::string cluster) {
  auto& st = self->state;
  st.last_error.clear();
  st.leader = std::move(leader);
  st.leader_term = term;
  st.leader_cluster = std::move(cluster);
  st.router = std::move(router);
  st.ticks = 0;
  self->monitor(st.router);
  send_heartbeat(self, true);
  // Unacknowledged reports of the worker go to this router now.
  self->send(st.opts.worker, subscribe_atom::value, caf::actor_cast<caf::actor>(st.router));
}

void ask(self_ptr self, uint64_t gen, endpoint_actor ep, const std::string& address, int hops);

/// Reaches the member at `address` (this node's own endpoint without dialing).
void reach(self_ptr self, uint64_t gen, const std::string& address, int hops) {
  auto& st = self->state;
  if (st.opts.own_endpoint && address == st.opts.seeds.front())
    return ask(self, gen, st.opts.own_endpoint, address, hops);
  if (st.opts.resolve_member) {
    auto ep = st.opts.resolve_member(address);
    if (!ep) {
      report_unreachable(self, address, "no member is there");
      return retry_later(self);
    }
    return ask(self, gen, std::move(ep), address, hops);
  }
  proto::reach_endpoint(self, address, std::chrono::duration_cast<std::chrono::milliseconds>(ask_timeout),
                        [=](caf::expected<endpoint_actor> ep) {
                          if (gen != self->state.generation) return;
                          if (!ep) {
                            report_unreachable(self, address, self->system().render(ep.error()));
                            return retry_later(self);
                          }
                          ask(self, gen, std::move(*ep), address, hops);
                        });
}

/// Acts on what the member at `address` says about leadership: registers
/// there if it leads, else follows it to the leader it names.
void follow(self_ptr self, uint64_t gen, endpoint_actor ep, const std::string& address, int hops,
            const raft_status& s) {
  learn(self, s);
  if (s.role == "leader") {
    self->request(ep, ask_timeout, handles_atom::value)
        .then(
            [=](router_actor router, caf::actor&) {
              if (gen == self->state.generation) bind(self, ep, std::move(router), s.term, s.cluster_id);
            },
            [=](caf::error& e) {
              if (gen != self->state.generation) return;
              report_unreachable(self, address, self->system().render(e));
              retry_later(self);
            });
    return;
  }
  auto p = std::find_if(s.peers.begin(), s.peers.end(),
                        [&](const peer_status& x) { return x.id == s.leader_id; });
  if (p == s.peers.end() || p->address.empty() || hops >= max_hops) {
    report_unreachable(self, address,
                       s.leader_id.empty() ? "no leader elected yet"
                                           : "its leader " + s.leader_id + " cannot be reached");
    return retry_later(self);
  }
  reach(self, gen, p->address, hops + 1);
}

void ask(self_ptr self, uint64_t gen, endpoint_actor ep, const std::string& address, int hops) {
  self->request(ep, ask_timeout, raft_status_atom::value)
      .then(
          [=](raft_status& s) {
            if (gen == self->state.generation) follow(self, gen, ep, address, hops, s);
          },
          [=](caf::error& e) {
            if (gen != self->state.generation) return;
            report_unreachable(self, address, self->system().render(e));
            retry_later(self);
          });
}

void find_leader(self_ptr self) {
  auto& st = self->state;
  reach(self, ++st.generation, st.opts.seeds[st.next_seed], 0);
}

/// Once a second while registered: a heartbeat every few ticks, and a check
/// that the endpoint registered with still leads.
void check(self_ptr self) {
  auto& st = self->state;
  if (!st.router) return;
  if (++st.ticks >= heartbeat_ticks) {
    st.ticks = 0;
    send_heartbeat(self);
  }
  auto gen = st.generation;
  auto leader = st.leader;
  self->request(leader, ask_timeout, raft_status_atom::value)
      .then(
          [=](raft_status& s) {
            if (gen != self->state.generation || s.role == "leader") return;
            // Deposed: the member that led knows (or will know) who leads now.
            unbind(self);
            auto next = ++self->state.generation;
            follow(self, next, leader, "the former leader", 0, s);
          },
          [=](caf::error&) {
            if (gen == self->state.generation) retry_later(self);
          });
}

}  // namespace

caf::behavior registrar_actor_impl(self_ptr self, registrar_options opts) {
  self->state.opts = std::move(opts);
  if (self->state.opts.seeds.empty()) self->state.opts.seeds.emplace_back();
  self->set_down_handler([=](const caf::down_msg& dm) {
    if (self->state.router && dm.source == self->state.router.address()) retry_later(self);
  });
  find_leader(self);
  self->delayed_send(self, tick_every, caf::tick_atom::value);
  return {
      [=](reconnect_atom, uint64_t gen) {
        if (gen == self->state.generation) find_leader(self);
      },
      [=](caf::tick_atom) {
        check(self);
        self->delayed_send(self, tick_every, caf::tick_atom::value);
      },
      [=](drain_atom) {
        self->state.info().status = worker_status::draining;
        if (self->state.router) send_heartbeat(self);
      },
  };
}

}  // namespace aisched::worker
