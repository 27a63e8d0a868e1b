// Links that follow the membership; see membership_links.hpp.
#include "actors/raft/membership_links.hpp"

#include <cstdio>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/raft/peer_links.hpp"
#include "common/cluster_link.hpp"
#include "proto/errors.hpp"

namespace aisched::raft {

namespace {

std::optional<peer_address> parse_address(const std::string& id, const std::string& addr) {
  auto colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  auto port = std::strtoul(addr.c_str() + colon + 1, nullptr, 10);
  if (port == 0 || port > 65535) return std::nullopt;
  return peer_address{id, addr.substr(0, colon), static_cast<uint16_t>(port)};
}

void drop_link(node_actor::stateful_pointer<raft_state> self, const std::string& id) {
  auto& st = self->state;
  auto it = st.peers.find(id);
  if (it == st.peers.end()) return;
  if (it->second.handle) {
    self->demonitor(it->second.handle.address());
    if (!it->second.addr.host.empty())
      proto::forget_member(self->system(), address_of(it->second.addr));
  }
  st.peers.erase(it);
  st.sending.erase(id);
  std::fprintf(stderr, "raft %s: %s is no longer a member\n", st.opts.node_id.c_str(), id.c_str());
}

}  // namespace

proto::membership initial_members(const raft_options& opts) {
  proto::membership out;
  if (opts.join) return out;
  out.push_back(proto::member_info{opts.node_id, true, opts.cluster_addr, {}});
  for (auto& p : opts.peers) out.push_back(proto::member_info{p.id, true, address_of(p), {}});
  return out;
}

std::optional<peer_address> address_for(const proto::member_info& m, const raft_options& opts) {
  if (auto a = parse_address(m.id, m.cluster_addr)) return a;
  for (auto& p : opts.peers)
    if (p.id == m.id) return p;
  return std::nullopt;
}

void sync_links(node_actor::stateful_pointer<raft_state> self) {
  auto& st = self->state;
  const auto& now = st.member->membership();
  if (now == st.linked_members) return;
  auto before = std::move(st.linked_members);
  st.linked_members = now;
  for (auto& m : before)
    if (m.id != st.opts.node_id && proto::find_member(now, m.id) == nullptr) drop_link(self, m.id);
  for (auto& m : now) {
    if (m.id == st.opts.node_id) continue;
    auto& p = st.peers[m.id];
    if (auto a = address_for(m, st.opts); a && p.addr.host.empty()) {
      p.addr = *a;
      // Linked before we knew where it listens (a member that joins hears its
      // peers first): the gateway's views reach it by that address.
      if (p.endpoint) proto::remember_member(self->system(), address_of(p.addr), p.endpoint);
    } else if (p.addr.id.empty()) {
      p.addr.id = m.id;
    }
    if (!p.handle) connect(self, m.id);  // only if this member dials it
  }
}

caf::expected<uint64_t> propose_change(core& member, const proto::membership_change& change) {
  if (change.member.id.empty())
    return make_error(errc::invalid_argument, "id", "the member id must not be empty");
  if (!change.add) return member.remove_member(change.member.id);
  if (!address_for(change.member, raft_options{}))
    return make_error(errc::invalid_argument, "cluster_addr",
                      "a new member needs its cluster address as HOST:PORT");
  return member.add_learner(change.member);
}

}  // namespace aisched::raft
