// Flow control for one follower; see progress.hpp.
#include "actors/raft/progress.hpp"

#include <algorithm>

namespace aisched::raft {

const char* to_string(progress_state x) {
  switch (x) {
    case progress_state::probe:
      return "probe";
    case progress_state::replicate:
      return "replicate";
    case progress_state::snapshot:
      return "snapshot";
  }
  return "?";
}

void progress::become_probe() {
  state = progress_state::probe;
  next = match + 1;
  probe_sent = false;
  inflight.clear();
  pending_snapshot = 0;
  stall_ticks = 0;
}

void progress::become_replicate() {
  state = progress_state::replicate;
  next = match + 1;
  probe_sent = false;
  inflight.clear();
  pending_snapshot = 0;
  stall_ticks = 0;
}

void progress::forget_match() {
  become_probe();
  match = 0;
}

void progress::become_snapshot(uint64_t index) {
  state = progress_state::snapshot;
  pending_snapshot = index;
  probe_sent = false;
  inflight.clear();
  stall_ticks = 0;
}

bool progress::paused(size_t max_inflight) const {
  switch (state) {
    case progress_state::probe:
      return probe_sent;
    case progress_state::replicate:
      return inflight.size() >= max_inflight;
    case progress_state::snapshot:
      return true;
  }
  return true;
}

void progress::sent(uint64_t last) {
  switch (state) {
    case progress_state::probe:
      probe_sent = true;
      break;
    case progress_state::replicate:
      // Optimistic: assume the append lands and continue after it. An empty
      // append (last == next - 1) takes no window slot.
      if (last >= next) {
        next = last + 1;
        inflight.push_back(last);
      }
      break;
    case progress_state::snapshot:
      break;
  }
}

bool progress::maybe_update(uint64_t index) {
  if (index <= match) return false;
  match = index;
  next = std::max(next, index + 1);
  while (!inflight.empty() && inflight.front() <= index) inflight.pop_front();
  probe_sent = false;
  stall_ticks = 0;
  return true;
}

bool progress::maybe_decrease(uint64_t rejected, uint64_t hint) {
  // The follower holds at least `match` and at most `hint` of our prefix, so
  // the next probe starts no lower than match + 1 and no higher than hint + 1.
  auto backoff = [&] { return std::max(match + 1, std::min(rejected, hint + 1)); };
  switch (state) {
    case progress_state::replicate:
      // A rejection at or below `match` answers an append older than what the
      // follower already confirmed: stale.
      if (rejected <= match) return false;
      become_probe();
      next = backoff();
      return true;
    case progress_state::probe:
      // Only the answer to the probe we are waiting for moves `next`; any other
      // rejection is a duplicate or answers an earlier probe.
      if (rejected != next - 1) return false;
      next = backoff();
      probe_sent = false;
      return true;
    case progress_state::snapshot:
      return false;
  }
  return false;
}

}  // namespace aisched::raft
