// Finding the leader's router; see leader_forward.hpp.
#include "actors/router/leader_forward.hpp"

#include <algorithm>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/cluster_link.hpp"
#include "proto/errors.hpp"

namespace aisched::router {

using namespace proto;

/// The leader's router, for a follower: the worker registry lives on the
/// leader only, so a follower hands registry requests (from its gateway) on.
/// Found through this node's raft (who leads, at which address) and the
/// leader's endpoint over the raft connection; cached until leadership moves.
void with_leader_router(router_self self, std::function<void(caf::expected<router_actor>)> then) {
  auto& st = self->state;
  if (st.term.leader_router) return then(st.term.leader_router);
  auto epoch = st.lead.epoch;
  self->request(st.raft, forward_timeout, raft_status_atom::value)
      .then(
          [=](raft_status& s) {
            auto p = std::find_if(s.peers.begin(), s.peers.end(),
                                  [&](const peer_status& x) { return x.id == s.leader_id; });
            if (s.leader_id.empty() || p == s.peers.end())
              return then(make_error(errc::unavailable, "leader", "no leader elected yet"));
            auto ep = proto::known_member(self->system(), p->address);
            if (!ep)
              return then(make_error(errc::unavailable, "leader",
                                     "leader " + s.leader_id + " is not connected to this member"));
            self->request(ep, forward_timeout, handles_atom::value)
                .then(
                    [=](router_actor& r, caf::actor&) {
                      if (self->state.lead.current(epoch)) self->state.term.leader_router = r;
                      then(r);
                    },
                    [=](caf::error& e) { then(std::move(e)); });
          },
          [=](caf::error& e) { then(std::move(e)); });
}

}  // namespace aisched::router
