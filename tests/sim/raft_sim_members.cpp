// Membership chaos and checks for the raft simulation; see raft_sim_members.hpp.
#include "tests/sim/raft_sim_members.hpp"

#include <caf/sum_type.hpp>

#include "proto/errors.hpp"

namespace aisched::raft::sim {

proto::membership latest_membership(const std::vector<proto::log_entry>& entries,
                                    const proto::membership& base) {
  for (auto i = entries.rbegin(); i != entries.rend(); ++i)
    if (auto x = proto::command_as<proto::set_membership>(i->cmd)) return x->members;
  return base;
}

bool could_campaign(const std::vector<proto::log_entry>& entries, uint64_t base_index,
                    const proto::membership& base, uint64_t commit, const std::string& id) {
  auto latest = latest_membership(entries, base);
  if (proto::is_voter(latest, id)) return true;
  for (size_t i = entries.size(); i-- > 0;) {
    if (!proto::holds<proto::set_membership>(entries[i].cmd)) continue;
    if (base_index + 1 + i <= commit) return false;
    std::vector<proto::log_entry> before(entries.begin(), entries.begin() + static_cast<long>(i));
    return proto::is_voter(latest_membership(before, base), id);
  }
  return false;  // the membership is the snapshot's: committed
}

change_outcome propose_random_change(core& leader, const std::vector<std::string>& all_ids,
                                     size_t min_voters, uint64_t roll_kind, uint64_t roll_pick) {
  auto& members = leader.membership();
  std::vector<std::string> outside;
  std::vector<std::string> learners;
  std::vector<std::string> removable;
  size_t voters = 0;
  for (auto& id : all_ids)
    if (proto::find_member(members, id) == nullptr) outside.push_back(id);
  for (auto& m : members) {
    if (m.voter) ++voters;
    if (!m.voter) learners.push_back(m.id);
  }
  for (auto& m : members)
    if (!m.voter || voters > min_voters) removable.push_back(m.id);
  change_outcome out;
  caf::expected<uint64_t> res{caf::error{}};
  switch (roll_kind % 3) {
    case 0:
      if (outside.empty()) return out;
      out.what = "add learner " + outside[roll_pick % outside.size()];
      res = leader.add_learner(proto::member_info{outside[roll_pick % outside.size()], false,
                                                  "", ""});
      break;
    case 1:
      if (learners.empty()) return out;
      out.what = "promote " + learners[roll_pick % learners.size()];
      res = leader.promote(learners[roll_pick % learners.size()]);
      break;
    default:
      if (removable.empty()) return out;
      out.what = "remove " + removable[roll_pick % removable.size()];
      out.removes_leader = removable[roll_pick % removable.size()] == leader.id();
      res = leader.remove_member(removable[roll_pick % removable.size()]);
      break;
  }
  if (res) {
    out.proposed = true;
    return out;
  }
  auto code = view(res.error()).code;
  if (code != errc::version_conflict && code != errc::unavailable)
    out.what = "refused " + out.what + ": " + view(res.error()).message;
  return out;
}

std::string check_one_uncommitted_change(const core& c, uint64_t committed) {
  size_t uncommitted = 0;
  auto base = c.snapshot().index;
  for (size_t i = 0; i < c.entries().size(); ++i)
    if (base + 1 + i > committed && proto::holds<proto::set_membership>(c.entries()[i].cmd))
      ++uncommitted;
  if (uncommitted <= 1) return {};
  return c.id() + " holds " + std::to_string(uncommitted) + " uncommitted membership changes";
}

}  // namespace aisched::raft::sim
