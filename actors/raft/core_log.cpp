// raft::core's in-memory log: terms and entries by index, slices for appends,
// local appends and truncation, commit and compaction; see core.hpp.
#include "actors/raft/core.hpp"

#include <algorithm>
#include <utility>

#include "actors/raft/core_assert.hpp"

namespace aisched::raft {

// -- the log -----------------------------------------------------------------

uint64_t core::last_term() const { return log_.empty() ? snap_.term : log_.back().term; }

std::optional<uint64_t> core::term_at(uint64_t index) const {
  if (index == snap_.index) return snap_.term;
  if (index < snap_.index || index > last_index()) return std::nullopt;
  return log_[index - snap_.index - 1].term;
}

const proto::log_entry& core::entry_at(uint64_t index) const {
  AISCHED_RAFT_ASSERT(index > snap_.index && index <= last_index(), "entry outside the log");
  return log_[index - snap_.index - 1];
}

std::vector<proto::log_entry> core::slice(uint64_t from, uint64_t to) const {
  std::vector<proto::log_entry> out;
  if (from > to) return out;
  AISCHED_RAFT_ASSERT(from > snap_.index && to <= last_index(), "slice outside the log");
  out.reserve(to - from + 1);
  auto begin = log_.begin() + static_cast<std::ptrdiff_t>(from - snap_.index - 1);
  out.assign(begin, begin + static_cast<std::ptrdiff_t>(to - from + 1));
  return out;
}

void core::append_local(proto::log_entry e) {
  AISCHED_RAFT_ASSERT(e.index == last_index() + 1, "appended entry does not continue the log");
  AISCHED_RAFT_ASSERT(e.term >= last_term(),
                      "appended entry has a lower term than its predecessor");
  AISCHED_RAFT_ASSERT(e.term <= term_, "appended entry from a future term");
  log_.push_back(std::move(e));
  on_membership_entry(log_.back());
}

void core::truncate_local(uint64_t from) {
  AISCHED_RAFT_ASSERT(from > commit_, "truncating committed entries");
  AISCHED_RAFT_ASSERT(from > snap_.index && from <= last_index(), "truncating outside the log");
  log_.erase(log_.begin() + static_cast<std::ptrdiff_t>(from - snap_.index - 1), log_.end());
  // A membership entry of the removed suffix no longer applies (thesis §4.1).
  if (members_index_ >= from) recompute_membership();
  // The driver must drop the stale suffix only if some of it was handed out.
  if (from < unstable_) {
    truncate_from_ = truncate_from_ ? std::min(*truncate_from_, from) : from;
    unstable_ = from;
  }
}

void core::commit_to(uint64_t index) {
  if (index <= commit_) return;  // the commit index never moves back
  AISCHED_RAFT_ASSERT(index <= last_index(), "commit index beyond the log");
  commit_ = index;
}

void core::compact(uint64_t index) {
  AISCHED_RAFT_ASSERT(index <= applied_, "compacting entries that are not applied");
  if (index <= snap_.index) return;
  AISCHED_RAFT_ASSERT(index < unstable_, "compacting entries that are not persisted");
  auto term = entry_at(index).term;
  auto members = membership_at(index);
  log_.erase(log_.begin(), log_.begin() + static_cast<std::ptrdiff_t>(index - snap_.index));
  snap_ = snapshot_meta{index, term, std::move(members)};
}

void core::peer_restarted(const std::string& peer) {
  if (auto it = progress_.find(peer); it != progress_.end()) it->second.forget_match();
}

}  // namespace aisched::raft
