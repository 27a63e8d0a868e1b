// The pure Raft state machine behind the raft actor (etcd-raft style): no CAF
// actors, no I/O, no threads, no clocks. The driver feeds it logical ticks,
// peer messages and proposals, and drains `ready` batches telling it what to
// persist, send and apply. Leader election with pre-vote and check-quorum,
// pipelined log replication with fast backtracking, commit by majority of
// current-term entries, and log compaction with snapshot hand-off.
//
// Driving loop (one actor handler = one turn):
//
//   core.step(msg) / core.tick() / core.propose(cmd)   // any number of calls
//   while (core.has_ready()) {
//     auto rd = core.take_ready();
//     persist(rd);          // snapshot, truncate_from, entries, hard — one synced batch
//     send(rd.messages);    // only after the batch is durable
//     apply(rd.committed);  // in order; record the applied index with the state
//     core.advance(rd);
//   }
//
// Durability contract: nothing in `messages` may leave before the batch is
// synced (a vote or an ack promises durable state). On restart, construct the
// core from exactly what the batches made durable — hard state, snapshot base,
// log entries after it — and the state machine's applied index; anything taken
// from a ready but not yet synced is simply lost, as if never received.
#pragma once

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/variant.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "actors/raft/progress.hpp"
#include "proto/commands.hpp"
#include "proto/field.hpp"

namespace aisched::raft {

// -- configuration and durable state -----------------------------------------

struct config {
  /// This member's id ("n1", ...); must be one of `peers` unless they are empty.
  std::string id;
  /// The voters the group was started with, including this one: the
  /// membership until a snapshot or a `set_membership` entry in the log says
  /// otherwise. Empty for a member that joins a running group: it waits as a
  /// non-voter until the leader's appends (or snapshot) tell it the membership.
  std::vector<std::string> peers;
  /// Base election timeout in ticks; the actual timeout is drawn per term from
  /// [election_ticks, 2 * election_ticks). Also the leader's check-quorum period
  /// and the lease in which votes for others are refused.
  int election_ticks = 10;
  /// A leader sends heartbeats every this many ticks (< election_ticks).
  int heartbeat_ticks = 1;
  /// Run a pre-vote round (no term bump) before every election (thesis §9.6),
  /// so a node that was cut off cannot disrupt a healthy leader on return.
  bool pre_vote = true;
  /// A leader that has not heard from a majority within election_ticks steps
  /// down; followers that heard from a leader within election_ticks ignore
  /// vote requests of higher terms.
  bool check_quorum = true;
  /// Most entries carried by one append_request.
  size_t max_entries_per_append = 1024;
  /// Most unacknowledged appends per follower in replicate state.
  size_t max_inflight_appends = 4;
  /// A leader promotes a learner to voter by itself once the learner's log is
  /// within `promote_gap` entries of its own (thesis §4.2.1: a new server
  /// votes only once caught up, so it cannot stall commits).
  bool auto_promote = true;
  uint64_t promote_gap = 1024;
  /// A leader whose log and snapshot hold no membership entry yet (the group's
  /// membership is still the one it was started with) makes its term's first
  /// entry a `set_membership` of that membership instead of the no-op: the
  /// bootstrap membership becomes replicated configuration, in every member's
  /// log and state (issue 41; etcd's bootstrap entries do the same). Nodes set
  /// it; the simulation's groups keep their no-ops.
  bool replicate_bootstrap = false;
};

/// Returns an `errc::invalid_argument` error naming the first bad field of
/// `cfg`, or an empty error. The core asserts on an invalid config.
caf::error validate(const config& cfg);

/// The part of the state that must be durable before any message that depends
/// on it is sent (Raft's "persistent state on all servers" plus the commit index).
struct hard_state {
  uint64_t term = 0;
  std::string voted_for;  // "" = nobody in `term`
  uint64_t commit = 0;
  friend bool operator==(const hard_state& x, const hard_state& y) {
    return x.term == y.term && x.voted_for == y.voted_for && x.commit == y.commit;
  }
  friend bool operator!=(const hard_state& x, const hard_state& y) { return !(x == y); }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, hard_state& x) {
  return f(caf::meta::type_name("aisched.raft.hard_state"), proto::field("term"), x.term,
           proto::field("voted_for"), x.voted_for, proto::field("commit"), x.commit);
}

/// The base of a compacted log: entries up to `index` (whose term was `term`)
/// live only in the state machine. {0, 0} means nothing was compacted.
/// `members` is the membership in effect at `index`; empty means the initial
/// one (config::peers), as for logs compacted before memberships could change.
struct snapshot_meta {
  uint64_t index = 0;
  uint64_t term = 0;
  proto::membership members;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, snapshot_meta& x) {
  return f(caf::meta::type_name("aisched.raft.snapshot_meta"), proto::field("index"), x.index,
           proto::field("term"), x.term, proto::field("members"), x.members);
}

enum class role : uint8_t { follower, pre_candidate, candidate, leader };

const char* to_string(role x);

// -- messages between members ------------------------------------------------
// Plain copyable structs with inspect() so the actor can ship them over CAF.
// Every message carries the sender's term; a higher term in any message makes
// the receiver a follower of that term (pre-vote traffic aside, see step()).

/// RequestVote. With `pre_vote`, `term` is the term the sender would campaign
/// in (its own term + 1) and granting it changes nothing on the voter.
struct vote_request {
  uint64_t term = 0;
  std::string candidate;
  uint64_t last_log_index = 0;
  uint64_t last_log_term = 0;
  bool pre_vote = false;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, vote_request& x) {
  return f(caf::meta::type_name("aisched.raft.vote_request"), proto::field("term"), x.term,
           proto::field("candidate"), x.candidate, proto::field("last_log_index"), x.last_log_index,
           proto::field("last_log_term"), x.last_log_term, proto::field("pre_vote"), x.pre_vote);
}

/// Answer to a vote_request. A granted pre-vote echoes the requested term.
struct vote_response {
  uint64_t term = 0;
  std::string from;
  bool granted = false;
  bool pre_vote = false;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, vote_response& x) {
  return f(caf::meta::type_name("aisched.raft.vote_response"), proto::field("term"), x.term,
           proto::field("from"), x.from, proto::field("granted"), x.granted,
           proto::field("pre_vote"), x.pre_vote);
}

/// AppendEntries; with no entries it doubles as the heartbeat. `entries` are
/// contiguous from prev_index + 1.
struct append_request {
  uint64_t term = 0;
  std::string leader;
  uint64_t prev_index = 0;
  uint64_t prev_term = 0;
  std::vector<proto::log_entry> entries;
  uint64_t leader_commit = 0;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, append_request& x) {
  return f(caf::meta::type_name("aisched.raft.append_request"), proto::field("term"), x.term,
           proto::field("leader"), x.leader, proto::field("prev_index"), x.prev_index,
           proto::field("prev_term"), x.prev_term, proto::field("entries"), x.entries,
           proto::field("leader_commit"), x.leader_commit);
}

/// Answer to an append_request or snapshot_request.
/// - success: the follower's log matches the leader's up to `match_index`.
/// - rejection: `match_index` is the rejected prev_index (so the leader can
///   tell stale rejections apart, as etcd's MsgAppResp.Index does);
///   `reject_hint` is the follower's highest index that may still match (its
///   last index, or its last entry whose term is not above the rejected
///   prev_term) and `reject_hint_term` the term of that entry, with which the
///   leader skips its own entries of later terms (fast backtracking both ways).
struct append_response {
  uint64_t term = 0;
  std::string from;
  bool success = false;
  uint64_t match_index = 0;
  uint64_t reject_hint = 0;
  uint64_t reject_hint_term = 0;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, append_response& x) {
  return f(caf::meta::type_name("aisched.raft.append_response"), proto::field("term"), x.term,
           proto::field("from"), x.from, proto::field("success"), x.success,
           proto::field("match_index"), x.match_index, proto::field("reject_hint"), x.reject_hint,
           proto::field("reject_hint_term"), x.reject_hint_term);
}

/// InstallSnapshot, payload elided: tells a follower whose needed entries were
/// compacted to make its state machine jump to `last_index`. The follower's
/// driver fetches the state itself (ready::snapshot); answered by an
/// append_response with match_index = last_index.
struct snapshot_request {
  uint64_t term = 0;
  std::string leader;
  uint64_t last_index = 0;
  uint64_t last_term = 0;
  proto::membership members;  // the membership at last_index (explicit, never empty)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, snapshot_request& x) {
  return f(caf::meta::type_name("aisched.raft.snapshot_request"), proto::field("term"), x.term,
           proto::field("leader"), x.leader, proto::field("last_index"), x.last_index,
           proto::field("last_term"), x.last_term, proto::field("members"), x.members);
}

/// caf::variant rather than std::variant: CAF 0.17 can only serialize the
/// former, and the envelope goes over the wire unchanged.
using payload =
    caf::variant<vote_request, vote_response, append_request, append_response, snapshot_request>;

/// The envelope: one message from member `from` to member `to`.
struct message {
  std::string to;
  std::string from;
  payload body;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, message& x) {
  return f(caf::meta::type_name("aisched.raft.message"), proto::field("to"), x.to,
           proto::field("from"), x.from, proto::field("body"), x.body);
}

/// The term a message was sent in.
uint64_t term_of(const payload& x);

/// Short name of the payload kind, for logs and metrics.
const char* kind_of(const payload& x);

// -- output ------------------------------------------------------------------

/// Who leads now, as seen by this member.
struct role_change {
  raft::role role = raft::role::follower;
  uint64_t term = 0;
  std::string leader;  // "" = unknown
};

/// What the driver must do, in this order: persist (snapshot, truncate_from,
/// entries, hard — atomically and synced), then send `messages`, then apply
/// `committed`, then call advance().
struct ready {
  /// Install first: the state machine jumps to `snapshot->index` (state fetched
  /// from the leader by the driver) and the durable log is replaced by an
  /// empty log based at this snapshot. Subsumes any truncation.
  std::optional<snapshot_meta> snapshot;
  /// Delete durable entries with index >= this before appending `entries`.
  std::optional<uint64_t> truncate_from;
  /// Append to the durable log; contiguous, continuing the durable log.
  std::vector<proto::log_entry> entries;
  /// Persist if set.
  std::optional<hard_state> hard;
  /// Send after persisting. Delivery may fail, duplicate or reorder.
  std::vector<message> messages;
  /// Apply in order after persisting; continues the previously applied index.
  std::vector<proto::log_entry> committed;
  /// Set when role, term or leader differ from the last reported ones
  /// (intermediate transitions within one ready are collapsed).
  std::optional<role_change> role;
};

// -- the state machine -------------------------------------------------------

/// One member of a Raft group. Not thread-safe; deterministic given its seed
/// and the sequence of calls.
class core {
 public:
  // -- constructors ----------------------------------------------------------

  /// Restores a member from what earlier `ready`s made durable: `hard`, the
  /// compaction base `snap`, the entries after it (contiguous from
  /// snap.index + 1), and `applied`, the index the state machine has applied
  /// (snap.index <= applied <= last log index). Starts as a follower.
  /// `rng_seed` drives election timeouts, the only randomness inside.
  core(config cfg, hard_state hard, snapshot_meta snap, std::vector<proto::log_entry> log,
       uint64_t applied, uint64_t rng_seed);

  /// A fresh member with an empty log.
  core(config cfg, uint64_t rng_seed);

  // -- inputs ----------------------------------------------------------------

  /// Advances logical time by one tick: election timeout, heartbeats, check-quorum.
  void tick();

  /// Handles a message from a peer. REQUIRES: m.to == id(). Messages from
  /// non-members are ignored.
  void step(const message& m);

  /// Appends `cmd` to the log if this member leads and returns its index (the
  /// entry commits later, or never if leadership is lost first). Otherwise
  /// `errc::not_leader`; leader() is the hint ("" if unknown). A
  /// `set_membership` must also pass check_membership_change().
  caf::expected<uint64_t> propose(proto::command cmd);

  // -- membership changes (core_membership.cpp) -------------------------------

  /// Proposes adding `m` as a learner. Fails like check_membership_change(),
  /// or with `errc::already_exists` if the id is taken.
  caf::expected<uint64_t> add_learner(proto::member_info m);

  /// Proposes promoting learner `id` to voter (`errc::not_found` if no such
  /// learner).
  caf::expected<uint64_t> promote(const std::string& id);

  /// Proposes removing member `id` (`errc::not_found` if no such member). A
  /// leader that removes itself leads until the entry commits, then steps down.
  caf::expected<uint64_t> remove_member(const std::string& id);

  /// Whether a leader may append `next` now (thesis §4.1 and its fix):
  /// `errc::version_conflict` while an earlier change is uncommitted,
  /// `errc::unavailable` until the leader committed an entry of its term or
  /// while a learner to promote lags more than promote_gap entries behind,
  /// `errc::invalid_argument` unless `next` differs from the current
  /// membership by exactly one added learner, one promoted learner or one
  /// removed member, and keeps a voter.
  caf::error check_membership_change(const proto::membership& next) const;

  /// Starts an election now, as if the election timeout had fired (pre-vote
  /// first when enabled). A group of one leads at once: call this after
  /// constructing its only member. No-op for a leader.
  void campaign();

  /// Forgets log entries up to `index`: the driver holds a durable state-machine
  /// snapshot covering them and deletes them from its durable log itself.
  /// REQUIRES: index <= applied_index(). Followers that need them later get a
  /// snapshot_request.
  void compact(uint64_t index);

  /// Tells a leader that `peer` restarted (its connection dropped): it may
  /// have lost its log, so its progress starts over from a probe and, if the
  /// log is gone, a snapshot. No-op unless leading.
  void peer_restarted(const std::string& peer);

  // -- output ----------------------------------------------------------------

  /// True if take_ready() would return something to do.
  bool has_ready() const;

  /// Returns everything to persist, send and apply since the last ready.
  /// REQUIRES: the previous ready was advance()d.
  ready take_ready();

  /// Confirms that `rd` (the last take_ready()) was persisted, sent and applied.
  void advance(const ready& rd);

  // -- observers -------------------------------------------------------------

  const std::string& id() const { return cfg_.id; }
  const raft::config& configuration() const { return cfg_; }
  role current_role() const { return role_; }
  uint64_t term() const { return term_; }
  const std::string& voted_for() const { return voted_for_; }
  /// The leader of the current term as far as this member knows; "" if unknown.
  const std::string& leader() const { return leader_; }
  uint64_t commit_index() const { return commit_; }
  /// Highest index handed out for applying and confirmed by advance().
  uint64_t applied_index() const { return applied_; }
  uint64_t last_index() const { return snap_.index + log_.size(); }
  uint64_t last_term() const;
  /// Term of the entry at `index`; nullopt if compacted away or beyond the log.
  /// index 0 and the snapshot index are always known.
  std::optional<uint64_t> term_at(uint64_t index) const;
  snapshot_meta snapshot() const { return snap_; }
  /// Entries after snapshot(), in memory (persisted or not).
  const std::deque<proto::log_entry>& entries() const { return log_; }
  /// First index not yet handed out in a ready for persisting; entries from
  /// here on changed since the last take_ready().
  uint64_t unstable_index() const { return unstable_; }
  /// The leader's view of each other member; empty unless leading.
  const std::map<std::string, raft::progress>& peer_progress() const { return progress_; }
  /// The election timeout drawn for the current term, in ticks.
  int randomized_election_timeout() const { return randomized_timeout_; }
  int election_elapsed() const { return election_elapsed_; }

  /// The membership in effect: the latest in the log, else the snapshot's,
  /// else the initial one. Entries take effect when appended (thesis §4.1).
  const proto::membership& membership() const { return members_; }
  /// Index of the entry that set membership() (the snapshot index or 0 if
  /// none in the log); uncommitted while above commit_index().
  uint64_t membership_index() const { return members_index_; }
  /// The membership in effect at `index`. REQUIRES: snapshot().index <=
  /// index <= last_index().
  proto::membership membership_at(uint64_t index) const;
  bool is_voter(const std::string& member) const { return proto::is_voter(members_, member); }
  /// Whether this member may start an election: it votes in membership(), or
  /// that membership removes it but is not committed yet (it may hold entries
  /// the others need, and must be able to lead until the change commits).
  bool can_campaign() const;

  /// Aborts with a message if an internal invariant is broken (cheap: O(members)).
  void check_invariants() const;

 private:
  // -- role transitions ------------------------------------------------------

  void become_follower(uint64_t term, const std::string& leader);
  void become_pre_candidate();
  void become_candidate();
  void become_leader();
  void reset(uint64_t term);
  void start_election(bool pre_vote);
  void poll(const vote_response& r);

  // -- message handlers ------------------------------------------------------

  void on_vote_request(const vote_request& r);
  void on_append_request(const append_request& r);
  void on_snapshot_request(const snapshot_request& r);
  void on_append_response(const append_response& r);

  // -- leader ----------------------------------------------------------------

  void tick_leader();
  bool send_append(const std::string& peer, bool send_if_empty);
  void send_snapshot(const std::string& peer);
  void send_heartbeat(const std::string& peer);
  void broadcast_heartbeats();
  bool maybe_commit();
  bool quorum_active();
  size_t voter_count() const;
  size_t quorum() const { return voter_count() / 2 + 1; }

  // -- membership (core_membership.cpp) --------------------------------------

  proto::membership initial_membership() const;
  void recompute_membership();
  void on_membership_entry(const proto::log_entry& e);
  void sync_progress();
  void maybe_promote();
  void step_down_if_removed();

  // -- log -------------------------------------------------------------------

  void append_local(proto::log_entry e);
  void truncate_local(uint64_t from);
  const proto::log_entry& entry_at(uint64_t index) const;
  std::vector<proto::log_entry> slice(uint64_t from, uint64_t to) const;
  bool up_to_date(uint64_t last_index, uint64_t last_term) const;
  uint64_t reject_hint(uint64_t prev_index, uint64_t prev_term) const;
  void commit_to(uint64_t index);

  // -- helpers ---------------------------------------------------------------

  void send(const std::string& to, payload body);
  bool in_lease() const;
  void reset_randomized_timeout();
  hard_state current_hard_state() const { return {term_, voted_for_, commit_}; }
  role_change current_role_change() const { return {role_, term_, leader_}; }
  [[noreturn]] void fail(const char* expr, const char* what, int line) const;

  // -- member variables ------------------------------------------------------

  raft::config cfg_;
  std::mt19937_64 rng_;

  // persistent (via ready::hard) and volatile Raft state
  uint64_t term_ = 0;
  std::string voted_for_;
  uint64_t commit_ = 0;
  role role_ = role::follower;
  std::string leader_;

  // the log: entries after snap_, all in memory
  snapshot_meta snap_;  // snap_.members is explicit once set (see recompute_membership)
  std::deque<proto::log_entry> log_;

  // the membership in effect and the index of the entry that set it
  proto::membership members_;
  uint64_t members_index_ = 0;

  // timers (in ticks)
  int election_elapsed_ = 0;
  int heartbeat_elapsed_ = 0;
  int randomized_timeout_ = 0;

  // elections: answers received in the current (pre-)campaign
  std::map<std::string, bool> votes_;

  // leader: one entry per other member
  std::map<std::string, raft::progress> progress_;

  // what the next ready carries and what the driver has acknowledged
  std::vector<message> msgs_;
  uint64_t unstable_ = 1;                  // first index not handed out for persisting
  std::optional<uint64_t> truncate_from_;  // durable entries >= this are stale
  std::optional<snapshot_meta> pending_snapshot_;
  uint64_t handed_commit_ = 0;  // last index handed out for applying
  uint64_t applied_ = 0;        // last index the driver confirmed as applied
  hard_state reported_hard_;
  role_change reported_role_;
  bool ready_outstanding_ = false;
};

}  // namespace aisched::raft
