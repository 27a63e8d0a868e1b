// Connections between members; see peer_links.hpp.
#include "actors/raft/peer_links.hpp"

#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "proto/cluster_link.hpp"
#include "proto/errors.hpp"

namespace aisched::raft {

using namespace proto;

namespace {

using self_ptr = node_actor::stateful_pointer<raft_state>;

constexpr auto connect_timeout = std::chrono::seconds(2);
constexpr auto reconnect_after = std::chrono::milliseconds(500);

/// Dialer side, once `raft` (the peer's raft actor) and `endpoint` (its node's,
/// invalid in groups without a middleman) are at hand: introduces this member;
/// the peer counts as connected only when it has our handle too.
void say_hello(self_ptr self, const std::string& id, uint64_t gen, node_actor raft,
               endpoint_actor endpoint) {
  auto retry = [=] { self->delayed_send(self, reconnect_after, reconnect_atom::value, id); };
  auto local = proto::local_endpoint(self->system());
  // Our endpoint is published right after this actor starts; the peer needs it.
  if (!local && !self->state.opts.resolve_peer) return retry();
  self->request(raft, connect_timeout, hello_atom::value, self->state.opts.node_id,
                caf::actor_cast<caf::actor>(self), caf::actor_cast<caf::actor>(local))
      .then(
          [=](bool accepted) {
            auto& p = self->state.peers[id];
            if (gen != p.generation) return;
            if (!accepted) return retry();
            p.handle = raft;
            self->monitor(p.handle);
            if (endpoint) proto::remember_member(self->system(), address_of(p.addr), endpoint);
            std::fprintf(stderr, "raft %s: connected to %s\n", self->state.opts.node_id.c_str(),
                         id.c_str());
          },
          [=](caf::error&) {
            if (gen == self->state.peers[id].generation) retry();
          });
}

/// Whether member `self_id` was refused admission by `peer_id` for the first
/// time (per process: the pair retries every reconnect_after).
bool first_refusal(const std::string& self_id, const std::string& peer_id) {
  static std::mutex mtx;
  static std::set<std::pair<std::string, std::string>> seen;
  std::lock_guard<std::mutex> guard(mtx);
  return seen.insert({self_id, peer_id}).second;
}

}  // namespace

bool dials(const std::string& self_id, const std::string& peer_id) { return self_id < peer_id; }

std::string address_of(const peer_address& a) { return a.host + ":" + std::to_string(a.port); }

void connect(self_ptr self, const std::string& id) {
  auto& st = self->state;
  auto it = st.peers.find(id);
  if (it == st.peers.end() || !dials(st.opts.node_id, id)) return;
  auto gen = ++it->second.generation;
  auto addr = it->second.addr;
  auto retry = [=] {
    self->delayed_send(self, reconnect_after, reconnect_atom::value, id);
  };
  if (st.opts.resolve_peer) {
    auto raft = st.opts.resolve_peer(id);
    if (!raft) return retry();
    return say_hello(self, id, gen, std::move(raft), endpoint_actor{});
  }
  // The dialer passes the peer's gatekeeper (TLS and the cluster secret when
  // configured); only then do we learn its endpoint and raft actor.
  auto dialer = proto::spawn_dialer(self->system(), connect_timeout);
  self->request(dialer, connect_timeout * 2, cluster_dial_atom::value, addr.host, addr.port)
      .then(
          [=](endpoint_actor& ep) {
            auto& p = self->state.peers[id];
            if (gen != p.generation) return;
            self->request(ep, connect_timeout, handles_atom::value)
                .then(
                    [=](router_actor&, caf::actor& raft) {
                      if (gen != self->state.peers[id].generation) return;
                      say_hello(self, id, gen, caf::actor_cast<node_actor>(raft), ep);
                    },
                    [=](caf::error&) { retry(); });
          },
          [=](caf::error& e) {
            // Refused admission is a configuration error: say so once per peer.
            auto& me = self->state.opts.node_id;
            if (view(e).code == errc::unauthenticated && first_refusal(me, id))
              std::fprintf(stderr, "raft %s: cannot connect to %s: %s\n",
                           me.c_str(), id.c_str(), view(e).message.c_str());
            retry();
          });
}

bool accept_hello(self_ptr self, const std::string& id, const caf::actor& raft,
                  const caf::actor& endpoint) {
  auto& st = self->state;
  if (!raft || dials(st.opts.node_id, id)) return false;
  // An unknown dialer is a member this one has not heard of yet: a member
  // that joins learns the membership only from the leader, over this link.
  auto p = st.peers.try_emplace(id).first;
  if (p->second.addr.id.empty()) p->second.addr.id = id;
  auto handle = caf::actor_cast<node_actor>(raft);
  if (p->second.handle == handle) return true;
  if (p->second.handle) {
    // The dialer came back (restarted, or reconnected) before we saw it go.
    self->demonitor(p->second.handle.address());
    st.member->peer_restarted(id);
  }
  p->second.handle = std::move(handle);
  self->monitor(p->second.handle);
  if (endpoint && !p->second.addr.host.empty())
    proto::remember_member(self->system(), address_of(p->second.addr),
                           caf::actor_cast<endpoint_actor>(endpoint));
  std::fprintf(stderr, "raft %s: %s connected\n", st.opts.node_id.c_str(), id.c_str());
  return true;
}

void adopt_sender(self_ptr self, const std::string& id, const caf::strong_actor_ptr& sender) {
  auto& st = self->state;
  auto p = st.peers.find(id);
  if (!sender || p == st.peers.end() || p->second.handle || dials(st.opts.node_id, id)) return;
  p->second.handle = caf::actor_cast<node_actor>(sender);
  self->monitor(p->second.handle);
  std::fprintf(stderr, "raft %s: %s reachable again\n", st.opts.node_id.c_str(), id.c_str());
}

}  // namespace aisched::raft
