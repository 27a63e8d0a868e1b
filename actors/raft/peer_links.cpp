// Connections between members; see peer_links.hpp.
#include "actors/raft/peer_links.hpp"

#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/log.hpp"
#include "common/cluster_link.hpp"
#include "proto/errors.hpp"
#include "storage/format_version.hpp"
#include "storage/membership_store.hpp"

namespace aisched::raft {

using namespace proto;

namespace {

using self_ptr = node_actor::stateful_pointer<raft_state>;

constexpr auto connect_timeout = std::chrono::seconds(2);
constexpr auto reconnect_after = std::chrono::milliseconds(500);
/// A member of another cluster stays one: asked again rarely, in case the
/// operator moved the right member to its address.
constexpr auto refused_retry_after = std::chrono::seconds(5);

/// Adopts `cluster` as this member's cluster id if it has none yet (a member
/// that joins learns it from the first member that says hello with one) and
/// records it, so that a restart keeps it.
caf::error adopt_cluster(self_ptr self, const std::string& cluster) {
  auto& st = self->state;
  if (!st.opts.cluster_id.empty() || cluster.empty()) return {};
  if (st.db)
    if (auto err = storage::write_cluster_id(*st.db, cluster)) return err;
  st.opts.cluster_id = cluster;
  log::info("cluster id learned", {{"node_id", st.opts.node_id}, {"cluster_id", cluster}});
  return {};
}

/// Whether member `self_id` was refused admission by `peer_id` for the first
/// time (per process: the pair retries every reconnect_after).
bool first_refusal(const std::string& self_id, const std::string& peer_id) {
  static std::mutex mtx;
  static std::set<std::pair<std::string, std::string>> seen;
  std::lock_guard<std::mutex> guard(mtx);
  return seen.insert({self_id, peer_id}).second;
}

/// Marks peer `id` refused as another cluster's member and says so once. Not
/// while we hold a link to it: then the refused process only claims its id
/// (another environment's member), and the member we link to stays linked.
/// One that is no member of ours (e.g. of the group a recovered member left)
/// is said once per process.
void refuse(self_ptr self, const std::string& id, const std::string& why) {
  auto p = self->state.peers.find(id);
  if (p != self->state.peers.end() && !p->second.handle) {
    if (p->second.refused == why) return;
    p->second.refused = why;
  } else if (!first_refusal(self->state.opts.node_id, "cluster:" + id)) {
    return;
  }
  log::error("a member of another cluster is refused",
             {{"node_id", self->state.opts.node_id}, {"peer", id}, {"why", why}});
}

/// Dialer side, once `raft` (the peer's raft actor) and `endpoint` (its node's,
/// invalid in groups without a middleman) are at hand: introduces this member;
/// the peer counts as connected only when it has our handle too.
void say_hello(self_ptr self, const std::string& id, uint64_t gen, node_actor raft,
               endpoint_actor endpoint) {
  auto retry = [=] { self->delayed_send(self, reconnect_after, reconnect_atom::value, id); };
  auto local = proto::local_endpoint(self->system());
  // Our endpoint is published right after this actor starts; the peer needs it.
  if (!local && !self->state.opts.resolve_peer) return retry();
  auto& st = self->state;
  self->request(raft, connect_timeout, hello_atom::value, st.opts.node_id, st.opts.cluster_id,
                storage::current_format, caf::actor_cast<caf::actor>(self),
                caf::actor_cast<caf::actor>(local))
      .then(
          [=](std::string& cluster) {
            auto& p = self->state.peers[id];
            if (gen != p.generation) return;
            if (!self->state.opts.cluster_id.empty() && !cluster.empty() &&
                cluster != self->state.opts.cluster_id) {
              // We had none when we asked and learned ours from another
              // member meanwhile: never link across clusters.
              refuse(self, id, "it belongs to cluster " + cluster);
              return retry();
            }
            if (auto err = adopt_cluster(self, cluster)) {
              log::error("cannot record the cluster id", {{"error", view(err).message}});
              return retry();
            }
            p.refused.clear();
            p.handle = raft;
            self->monitor(p.handle);
            if (endpoint) proto::remember_member(self->system(), address_of(p.addr), endpoint);
            std::fprintf(stderr, "raft %s: connected to %s\n", self->state.opts.node_id.c_str(),
                         id.c_str());
          },
          [=](caf::error& e) {
            if (gen != self->state.peers[id].generation) return;
            if (e == caf::sec::unexpected_message) {
              // A build whose hello differs from ours: an earlier one, from
              // before members said their format (or a later one that changed it).
              refuse(self, id,
                     "it does not understand this member's hello: it runs another build; every "
                     "member must run a build of the same format (README \"Upgrading\")");
              self->delayed_send(self, refused_retry_after, reconnect_atom::value, id);
              return;
            }
            if (view(e).code != errc::forbidden) return retry();
            refuse(self, id, view(e).message);
            self->delayed_send(self, refused_retry_after, reconnect_atom::value, id);
          });
}

}  // namespace

bool dials(const proto::membership& members, const std::string& self_id,
           const std::string& peer_id) {
  auto* self = proto::find_member(members, self_id);
  auto* peer = proto::find_member(members, peer_id);
  if (!self || !peer) return false;
  if (self->voter != peer->voter) return self->voter;
  return self_id < peer_id;
}

std::string address_of(const peer_address& a) { return a.host + ":" + std::to_string(a.port); }

void connect(self_ptr self, const std::string& id) {
  auto& st = self->state;
  auto it = st.peers.find(id);
  if (it == st.peers.end() || !dials(st.member->membership(), st.opts.node_id, id)) return;
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

caf::expected<std::string> accept_hello(self_ptr self, const std::string& id,
                                        const std::string& cluster, uint32_t format,
                                        const caf::actor& raft, const caf::actor& endpoint) {
  auto& st = self->state;
  if (!raft || dials(st.member->membership(), st.opts.node_id, id))
    return make_error(errc::invalid_argument, "id", "member " + id + " does not dial " +
                                                        st.opts.node_id);
  if (format != storage::current_format) {
    // Members exchange log entries and snapshots in their format's encoding:
    // one of another format would misread them.
    auto why = "member " + id + " speaks data format " + std::to_string(format) + ", member " +
               st.opts.node_id + " format " + std::to_string(storage::current_format) +
               ": every member must run a build of the same format (README \"Upgrading\")";
    refuse(self, id, why);
    return make_error(errc::forbidden, "format", why);
  }
  if (!cluster.empty() && !st.opts.cluster_id.empty() && cluster != st.opts.cluster_id) {
    auto why = "member " + id + " belongs to cluster " + cluster + ", member " +
               st.opts.node_id + " to cluster " + st.opts.cluster_id +
               ": members of different clusters never link (was a data directory copied "
               "from another cluster, or a --cluster-token changed?)";
    refuse(self, id, why);
    return make_error(errc::forbidden, "cluster_id", why);
  }
  if (auto err = adopt_cluster(self, cluster)) return err;
  // An unknown dialer is a member this one has not heard of yet: a member
  // that joins learns the membership only from the leader, over this link.
  auto p = st.peers.try_emplace(id).first;
  if (p->second.addr.id.empty()) p->second.addr.id = id;
  p->second.refused.clear();
  if (endpoint) p->second.endpoint = caf::actor_cast<endpoint_actor>(endpoint);
  auto handle = caf::actor_cast<node_actor>(raft);
  if (p->second.handle == handle) {
    // Said again (the dialer reconnected before we saw its link go): its
    // endpoint may be a new proxy, which the gateway's views reach it through.
    if (endpoint && !p->second.addr.host.empty())
      proto::remember_member(self->system(), address_of(p->second.addr),
                             caf::actor_cast<endpoint_actor>(endpoint));
    return st.opts.cluster_id;
  }
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
  return st.opts.cluster_id;
}

bool accept_from(self_ptr self, const std::string& id, const caf::strong_actor_ptr& sender) {
  auto& st = self->state;
  auto p = st.peers.find(id);
  if (p == st.peers.end()) return true;  // a leader this joining member does not know yet
  // CAF 0.17 gives a message no sender when the connection it came over is not
  // in its routing table (a reconnect while the old one lingers): its member
  // cannot be told from the message, and dropping it would leave that member
  // deaf to its leader, so it is acted on.
  if (!sender) return p->second.refused.empty();
  if (p->second.handle) return p->second.handle.address() == sender->address();
  if (!p->second.refused.empty()) return false;
  if (dials(st.member->membership(), st.opts.node_id, id)) return true;
  p->second.handle = caf::actor_cast<node_actor>(sender);
  self->monitor(p->second.handle);
  std::fprintf(stderr, "raft %s: %s reachable again\n", st.opts.node_id.c_str(), id.c_str());
  return true;
}

}  // namespace aisched::raft
