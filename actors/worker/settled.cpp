// The settled outcomes of the worker's dedup cache; see settled.hpp.
#include "actors/worker/settled.hpp"

#include <algorithm>
#include <functional>

namespace aisched::worker {
namespace {

uint64_t hash_of(std::string_view key) { return std::hash<std::string_view>{}(key); }

}  // namespace

size_t settled_outcomes::probe_for(uint64_t hash, std::string_view key) const {
  if (index_.empty()) return index_.size();
  auto mask = index_.size() - 1;
  for (auto i = hash & mask;; i = (i + 1) & mask) {
    auto& s = index_[i];
    if (s.seq == 0) return index_.size();
    if (s.hash == hash && ring_[s.seq - first_seq_].key == key) return i;
  }
}

const settled_outcomes::outcome* settled_outcomes::find(std::string_view key) const {
  auto i = probe_for(hash_of(key), key);
  return i == index_.size() ? nullptr : &ring_[index_[i].seq - first_seq_].o;
}

void settled_outcomes::place(uint64_t hash, uint64_t seq) {
  auto mask = index_.size() - 1;
  auto i = hash & mask;
  while (index_[i].seq != 0) i = (i + 1) & mask;
  index_[i] = {hash, seq};
}

void settled_outcomes::grow() {
  std::vector<slot> old(std::max<size_t>(64, index_.size() * 2));
  index_.swap(old);
  for (size_t i = 0; i < ring_.size(); ++i) place(ring_[i].hash, first_seq_ + i);
}

void settled_outcomes::add(const std::string& key, const outcome& o, unix_ms at) {
  auto hash = hash_of(key);
  if (probe_for(hash, key) != index_.size()) return;  // kept already
  if ((ring_.size() + 1) * 2 > index_.size()) grow();
  ring_.push_back({key, hash, o, at});
  place(hash, first_seq_ + ring_.size() - 1);
  while (ring_.size() > cap_) drop_oldest();
}

void settled_outcomes::forget_before(unix_ms cutoff) {
  while (!ring_.empty() && ring_.front().at < cutoff) drop_oldest();
}

void settled_outcomes::drop_oldest() {
  // Its slot, then the slots after it shifted back over the gap (so that every
  // probe still finds its entry before an empty slot).
  auto mask = index_.size() - 1;
  auto i = ring_.front().hash & mask;
  while (index_[i].seq != first_seq_) i = (i + 1) & mask;
  for (auto j = (i + 1) & mask; index_[j].seq != 0; j = (j + 1) & mask) {
    auto home = index_[j].hash & mask;
    // Slot j may move to the gap at i unless its home lies in (i, j], cyclically.
    bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    index_[i] = index_[j];
    i = j;
  }
  index_[i] = slot{};
  ring_.pop_front();
  ++first_seq_;
}

}  // namespace aisched::worker
