// Status and inspection views of the raft actor; see raft_status.hpp.
#include "actors/raft/raft_status.hpp"

#include "actors/raft/peer_links.hpp"
#include "proto/errors.hpp"
#include "storage/format_version.hpp"
#include "storage/state_machine.hpp"

namespace aisched::raft {

using namespace proto;

raft_status status_of(const raft_state& st) {
  raft_status s;
  s.node_id = st.opts.node_id;
  s.role = to_string(st.member->current_role());
  s.leader_id = st.member->leader();
  s.term = st.member->term();
  s.commit_index = st.member->commit_index();
  s.applied_index = st.sm->applied_index();
  s.last_log_index = st.member->last_index();
  s.voter = st.member->is_voter(st.opts.node_id);
  s.cluster_id = st.opts.cluster_id;
  s.version = AISCHED_VERSION;
  s.data_format = storage::current_format;
  if (!s.voter && st.member->current_role() == role::follower) {
    auto& members = st.member->membership();
    s.role = proto::find_member(members, st.opts.node_id) != nullptr ? "learner"
             : members.empty()                                       ? "joining"
                                                                     : "removed";
  }
  for (auto& m : st.member->membership()) {
    if (m.id == st.opts.node_id) continue;
    uint64_t match = 0;
    auto& progress = st.member->peer_progress();
    if (auto i = progress.find(m.id); i != progress.end()) match = i->second.match;
    auto p = st.peers.find(m.id);
    bool linked = p != st.peers.end() && p->second.handle;
    auto address = p != st.peers.end() && !p->second.addr.host.empty() ? address_of(p->second.addr)
                                                                        : m.cluster_addr;
    auto refused = p != st.peers.end() ? p->second.refused : std::string();
    s.peers.push_back(peer_status{m.id, address, linked, match, m.voter, std::move(refused)});
  }
  if (st.fault) {  // fenced: its core is frozen as it was when the write failed
    s.role = "follower";
    s.leader_id.clear();
  }
  return s;
}

std::map<std::string, std::string> details_of(const raft_state& st) {
  auto s = status_of(st);
  std::map<std::string, std::string> d{{"role", s.role},
                                       {"leader", s.leader_id.empty() ? "-" : s.leader_id},
                                       {"term", std::to_string(s.term)},
                                       {"commit_index", std::to_string(s.commit_index)},
                                       {"applied_index", std::to_string(s.applied_index)},
                                       {"last_log_index", std::to_string(s.last_log_index)},
                                       {"waiting_proposals", std::to_string(st.waiting.size())},
                                       {"listeners", std::to_string(st.listeners.size())}};
  for (auto& p : s.peers)
    d["peer." + p.id] = "match=" + std::to_string(p.match_index) +
                        (p.reachable ? " reachable" : " unreachable") + (p.voter ? "" : " learner") +
                        (p.refused.empty() ? "" : " refused: " + p.refused);
  d["cluster_id"] = s.cluster_id.empty() ? "-" : s.cluster_id;
  std::string members;
  for (auto& m : st.member->membership())
    members += (members.empty() ? "" : ",") + m.id + (m.voter ? "" : "(learner)");
  d["members"] = members + " @" + std::to_string(st.member->membership_index());
  if (st.fault) d["storage"] = "fenced: " + view(st.fault).message;
  return d;
}

}  // namespace aisched::raft
