// The raft group's membership (issue #5 part 4, Ongaro's thesis §4): who takes
// part, who votes, and where the raft actors and gateways of the members are.
// Carried in the replicated log by the `set_membership` command (proto/
// commands.hpp), in snapshots, and shown by GET /api/v1/cluster. Pure data;
// the rules for changing it live in actors/raft/core_membership.cpp.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "proto/command_traits.hpp"
#include "proto/field.hpp"

namespace aisched::proto {

/// One member of the raft group. A learner (voter = false) is replicated to but
/// neither votes nor counts for commits; a new member joins as one.
struct member_info {
  std::string id;
  bool voter = true;
  std::string cluster_addr;  // host:port of its cluster endpoint ("" = from --peers)
  std::string http_addr;     // host:port of its gateway ("" = unknown)
  friend bool operator==(const member_info& x, const member_info& y) {
    return x.id == y.id && x.voter == y.voter && x.cluster_addr == y.cluster_addr &&
           x.http_addr == y.http_addr;
  }
  friend bool operator!=(const member_info& x, const member_info& y) { return !(x == y); }
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, member_info& x) {
  return f(caf::meta::type_name("aisched.member_info"), field("id"), x.id, field("voter"), x.voter,
           field("cluster_addr"), x.cluster_addr, field("http_addr"), x.http_addr,
           keep_unknown(x.unknown));
}

/// The whole membership, in the order members were added.
using membership = std::vector<member_info>;

/// The member `id` of `m`, or nullptr.
inline const member_info* find_member(const membership& m, const std::string& id) {
  auto i = std::find_if(m.begin(), m.end(), [&](const member_info& x) { return x.id == id; });
  return i == m.end() ? nullptr : &*i;
}

/// True if `id` is a voting member of `m`.
inline bool is_voter(const membership& m, const std::string& id) {
  auto* x = find_member(m, id);
  return x != nullptr && x->voter;
}

/// Replaces the group's membership by `members`. Takes effect on each member
/// as soon as the entry is in its log, committed or not (thesis §4.1); the
/// leader accepts it only as a single-server change (add one learner, promote
/// one learner, or remove one member) once the previous change committed.
struct set_membership {
  static constexpr command_traits traits{"set_membership", fencing::none, 16};
  membership members;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, set_membership& x) {
  return f(caf::meta::type_name("aisched.set_membership"), field("members"), x.members);
}

/// An operator's request to the raft actor (POST / DELETE
/// /api/v1/cluster/members): add `member` as a learner, or remove the member
/// with `member.id`. The leader turns it into a `set_membership`; a learner is
/// promoted by the leader itself once it has caught up.
struct membership_change {
  bool add = true;
  member_info member;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, membership_change& x) {
  return f(caf::meta::type_name("aisched.membership_change"), field("add"), x.add,
           field("member"), x.member);
}

}  // namespace aisched::proto
