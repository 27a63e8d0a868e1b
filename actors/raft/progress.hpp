// Leader-side replication flow control for one follower (etcd-raft's tracker/
// progress.go + inflights.go): what the leader knows the follower holds
// (`match`), what it sends next (`next`), and how many appends may be in flight.
// Owned by raft::core while it leads; pure bookkeeping, no messages, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace aisched::raft {

/// How the leader currently talks to one follower.
enum class progress_state : uint8_t {
  /// The leader does not know where the follower's log matches its own: one
  /// append at a time, backing `next` off on each rejection.
  probe,
  /// The follower's log matches up to `match`: appends are pipelined
  /// optimistically, up to a window of unacknowledged appends.
  replicate,
  /// The follower needs entries the leader has compacted away; a snapshot of
  /// index `pending_snapshot` is on its way. Nothing else is sent until it lands.
  snapshot,
};

const char* to_string(progress_state x);

/// The leader's view of one follower. Invariant: `match < next`.
struct progress {
  /// Highest index known to be identical on the follower and on the leader.
  uint64_t match = 0;
  /// Index of the next entry to send.
  uint64_t next = 1;
  progress_state state = progress_state::probe;
  /// probe: an append is in flight, wait for its answer (or the next heartbeat
  /// answer) before sending another.
  bool probe_sent = false;
  /// replicate: last index of each append in flight, ascending.
  std::deque<uint64_t> inflight;
  /// snapshot: the index of the snapshot sent.
  uint64_t pending_snapshot = 0;
  /// Whether the follower answered since the last check-quorum round.
  bool recent_active = false;
  /// Ticks since `match` last moved while the follower lagged behind; a flow
  /// that stays stalled for long is restarted from match + 1 (a lost append or
  /// probe leaves no other trace).
  int stall_ticks = 0;

  /// Restarts from `match + 1`, one append at a time.
  void become_probe();
  /// Pipelines from `match + 1`.
  void become_replicate();
  /// Waits for the follower to install the snapshot at `index`.
  void become_snapshot(uint64_t index);
  /// The follower may have lost what it acknowledged (it restarted, perhaps
  /// on an empty data dir): probe from `match + 1` as usual, but count on
  /// nothing until it answers. Lowering `match` never commits anything.
  void forget_match();

  /// True if no append may be sent now (flow control).
  bool paused(size_t max_inflight) const;

  /// Records that an append ending at `last` (with `last >= next - 1`) was sent.
  void sent(uint64_t last);

  /// Handles a successful answer saying the follower matches up to `index`.
  /// Returns false for stale or duplicate answers that tell nothing new.
  bool maybe_update(uint64_t index);

  /// Handles a rejection of the append whose previous index was `rejected`;
  /// `hint` is the follower's guess of the last index that may match. Returns
  /// false if the rejection is stale (answers an append no longer relevant).
  bool maybe_decrease(uint64_t rejected, uint64_t hint);
};

}  // namespace aisched::raft
