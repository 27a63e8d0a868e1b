// raft::core's membership (Ongaro's thesis §4, single-server changes): which
// membership is in effect (the latest in the log, taking effect when
// appended), the leader's rules for accepting a change, the leader's progress
// for added and removed members, promotion of caught-up learners, and the step
// down of a leader whose removal committed; see core.hpp.
#include <algorithm>
#include <optional>
#include <utility>

#include "actors/raft/core.hpp"
#include "actors/raft/core_assert.hpp"
#include "proto/errors.hpp"
#include "proto/invariant.hpp"

namespace aisched::raft {

namespace {

/// The membership entry `e` holds, if it is one. Every member decodes the
/// same bytes, so one that does not decode is a broken log: it aborts.
std::optional<proto::set_membership> membership_of(const proto::log_entry& e) {
  if (!proto::holds<proto::set_membership>(e.cmd)) return std::nullopt;
  auto x = proto::command_as<proto::set_membership>(e.cmd);
  AISCHED_INVARIANT(x.has_value(), "a membership entry that does not decode");
  return x;
}

caf::error invalid(std::string msg) {
  return make_error(errc::invalid_argument, "members", std::move(msg));
}

}  // namespace

// -- which membership is in effect ---------------------------------------------

proto::membership core::initial_membership() const {
  proto::membership out;
  for (auto& id : cfg_.peers) out.push_back(proto::member_info{id, true, {}, {}});
  return out;
}

proto::membership core::membership_at(uint64_t index) const {
  AISCHED_RAFT_ASSERT(index >= snap_.index && index <= last_index(),
                      "membership asked outside the log");
  for (auto i = index; i > snap_.index; --i)
    if (auto x = membership_of(entry_at(i))) return x->members;
  return snap_.members;
}

void core::recompute_membership() {
  for (auto i = last_index(); i > snap_.index; --i) {
    if (auto x = membership_of(entry_at(i))) {
      members_ = x->members;
      members_index_ = i;
      sync_progress();
      return;
    }
  }
  members_ = snap_.members;
  members_index_ = snap_.index;
  sync_progress();
}

void core::on_membership_entry(const proto::log_entry& e) {
  auto x = membership_of(e);
  if (!x) return;
  members_ = x->members;
  members_index_ = e.index;
  sync_progress();
}

bool core::can_campaign() const {
  if (is_voter(id())) return true;
  return members_index_ > commit_ && proto::is_voter(membership_at(members_index_ - 1), id());
}

size_t core::voter_count() const {
  return static_cast<size_t>(
      std::count_if(members_.begin(), members_.end(), [](auto& m) { return m.voter; }));
}

void core::sync_progress() {
  if (role_ != role::leader) return;
  for (auto it = progress_.begin(); it != progress_.end();) {
    if (proto::find_member(members_, it->first) == nullptr)
      it = progress_.erase(it);
    else
      ++it;
  }
  for (auto& m : members_) {
    if (m.id == id() || progress_.count(m.id) != 0) continue;
    // A new member starts from a probe of our last entry (the change that
    // added it, when called on append); its rejection's hint walks next back
    // to what it holds, or to a snapshot.
    progress_[m.id].next = std::max(last_index(), snap_.index + 1);
  }
}

// -- the leader's rules --------------------------------------------------------

caf::error core::check_membership_change(const proto::membership& next) const {
  if (role_ != role::leader) return make_error(errc::not_leader, "members", "not the leader");
  // The fix to single-server changes (raft-dev, 2015): a leader first commits
  // an entry of its own term, so a change of a deposed leader that never
  // committed cannot combine with ours into two disjoint majorities. (The
  // first leader's entry may be the bootstrap membership: still 503, not 409.)
  if (term_at(commit_) != term_)
    return make_error(errc::unavailable, "members",
                      "the new leader has not committed an entry of its term yet; retry shortly");
  if (members_index_ > commit_)
    return make_error(errc::version_conflict, "members",
                      "another membership change (log index " + std::to_string(members_index_) +
                          ") is still in progress");
  size_t added = 0;
  size_t removed = 0;
  size_t promoted = 0;
  size_t voters = 0;
  for (size_t i = 0; i < next.size(); ++i) {
    auto& m = next[i];
    if (m.id.empty()) return invalid("member ids must not be empty");
    for (size_t j = i + 1; j < next.size(); ++j)
      if (next[j].id == m.id) return invalid("member " + m.id + " is listed twice");
    if (m.voter) ++voters;
    auto* old = proto::find_member(members_, m.id);
    if (old == nullptr) {
      if (m.voter) return invalid("a new member joins as a learner (voter = false)");
      ++added;
    } else if (*old != m) {
      if (old->voter || !m.voter || old->cluster_addr != m.cluster_addr ||
          old->http_addr != m.http_addr)
        return invalid("member " + m.id + " may only change from learner to voter");
      // A voter far behind would hold up every commit that needs it (§4.2.1).
      auto pr = progress_.find(m.id);
      auto match = pr == progress_.end() ? 0 : pr->second.match;
      if (match + cfg_.promote_gap < last_index())
        return make_error(errc::unavailable, "members",
                          "learner " + m.id + " has not caught up yet (it holds " +
                              std::to_string(match) + " of " + std::to_string(last_index()) +
                              " entries)");
      ++promoted;
    }
  }
  for (auto& m : members_)
    if (proto::find_member(next, m.id) == nullptr) ++removed;
  if (added + removed + promoted != 1)
    return invalid("a change adds, promotes or removes exactly one member");
  if (voters == 0) return invalid("the group must keep at least one voter");
  return {};
}

caf::expected<uint64_t> core::add_learner(proto::member_info m) {
  if (proto::find_member(members_, m.id) != nullptr)
    return make_error(errc::already_exists, "id", "member " + m.id + " already exists");
  m.voter = false;
  auto next = members_;
  next.push_back(std::move(m));
  return propose(proto::set_membership{std::move(next)});
}

caf::expected<uint64_t> core::promote(const std::string& member) {
  auto next = members_;
  auto it = std::find_if(next.begin(), next.end(), [&](auto& m) { return m.id == member; });
  if (it == next.end() || it->voter)
    return make_error(errc::not_found, "id", "no learner " + member);
  it->voter = true;
  return propose(proto::set_membership{std::move(next)});
}

caf::expected<uint64_t> core::remove_member(const std::string& member) {
  auto next = members_;
  auto it = std::find_if(next.begin(), next.end(), [&](auto& m) { return m.id == member; });
  if (it == next.end()) return make_error(errc::not_found, "id", "no member " + member);
  next.erase(it);
  return propose(proto::set_membership{std::move(next)});
}

// -- leader housekeeping -------------------------------------------------------

void core::maybe_promote() {
  if (!cfg_.auto_promote || members_index_ > commit_ || term_at(commit_) != term_) return;
  for (auto& m : members_) {
    if (m.voter) continue;
    auto it = progress_.find(m.id);
    if (it == progress_.end() || it->second.match + cfg_.promote_gap < last_index()) continue;
    auto learner = m.id;  // promote() replaces members_
    auto res = promote(learner);  // one change at a time: the next waits for this one's commit
    AISCHED_RAFT_ASSERT(static_cast<bool>(res), "an allowed promotion was refused");
    return;
  }
}

void core::step_down_if_removed() {
  // A leader that removed itself manages the group until the change commits
  // (thesis §4.2.2), then hands over: tell everyone the commit index first, so
  // the remaining voters learn the change committed and one of them times out.
  if (role_ != role::leader || is_voter(id()) || members_index_ > commit_) return;
  broadcast_heartbeats();
  become_follower(term_, "");
}

}  // namespace aisched::raft
