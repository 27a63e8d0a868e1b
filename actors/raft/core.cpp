// The pure Raft state machine; see core.hpp for the contract. Sections follow
// a member's life: restore, time, the message dispatcher, elections, the
// follower side of replication, the leader side, and the ready/advance
// hand-off to the driver (the log itself: core_log.cpp). Paper references: Ongaro & Ousterhout, "In Search of
// an Understandable Consensus Algorithm" (§5.x, Figure 8) and Ongaro's thesis
// (§9.6 pre-vote, §6.2 check-quorum); flow control follows etcd-raft.
#include "actors/raft/core.hpp"

#include <algorithm>
#include <caf/sum_type.hpp>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "actors/raft/core_assert.hpp"
#include "proto/errors.hpp"


namespace aisched::raft {

// -- free functions ----------------------------------------------------------

const char* to_string(role x) {
  switch (x) {
    case role::follower:
      return "follower";
    case role::pre_candidate:
      return "pre_candidate";
    case role::candidate:
      return "candidate";
    case role::leader:
      return "leader";
  }
  return "?";
}

caf::error validate(const config& cfg) {
  auto bad = [](const char* field, const char* msg) {
    return make_error(errc::invalid_argument, field, msg);
  };
  if (cfg.id.empty()) return bad("id", "the member id must not be empty");
  // No peers: a member that joins a running group and learns it from the leader.
  if (!cfg.peers.empty() && std::find(cfg.peers.begin(), cfg.peers.end(), cfg.id) == cfg.peers.end())
    return bad("peers", "the members must include this member's id");
  for (size_t i = 0; i < cfg.peers.size(); ++i) {
    if (cfg.peers[i].empty()) return bad("peers", "member ids must not be empty");
    if (std::find(cfg.peers.begin() + i + 1, cfg.peers.end(), cfg.peers[i]) != cfg.peers.end())
      return bad("peers", "member ids must be unique");
  }
  if (cfg.heartbeat_ticks < 1) return bad("heartbeat_ticks", "must be at least 1");
  if (cfg.election_ticks <= cfg.heartbeat_ticks)
    return bad("election_ticks", "must be greater than heartbeat_ticks");
  if (cfg.max_entries_per_append < 1) return bad("max_entries_per_append", "must be at least 1");
  if (cfg.max_inflight_appends < 1) return bad("max_inflight_appends", "must be at least 1");
  return {};
}

uint64_t term_of(const payload& x) {
  return caf::visit([](const auto& m) { return m.term; }, x);
}

const char* kind_of(const payload& x) {
  static constexpr const char* names[] = {"vote_request", "vote_response", "append_request",
                                          "append_response", "snapshot_request"};
  return names[x.index()];
}

namespace {

// The sender as named inside the payload; must agree with the envelope.
const std::string& sender_of(const payload& x) {
  if (auto* m = caf::get_if<vote_request>(&x)) return m->candidate;
  if (auto* m = caf::get_if<vote_response>(&x)) return m->from;
  if (auto* m = caf::get_if<append_request>(&x)) return m->leader;
  if (auto* m = caf::get_if<append_response>(&x)) return m->from;
  return caf::get<snapshot_request>(x).leader;
}

bool same(const role_change& x, const role_change& y) {
  return x.role == y.role && x.term == y.term && x.leader == y.leader;
}

}  // namespace

// -- constructors ------------------------------------------------------------

core::core(raft::config cfg, hard_state hard, snapshot_meta snap, std::vector<proto::log_entry> log,
           uint64_t applied, uint64_t rng_seed)
    : cfg_(std::move(cfg)), rng_(rng_seed) {
  if (auto err = validate(cfg_)) {
    auto v = view(err);
    std::fprintf(stderr, "aisched raft: invalid config: %s: %s\n", v.field.c_str(),
                 v.message.c_str());
    std::abort();
  }
  term_ = hard.term;
  voted_for_ = hard.voted_for;
  snap_ = snap;
  // Paired check (TigerStyle): what was checked before writing is checked
  // again after reading it back.
  for (auto& e : log) {
    AISCHED_RAFT_ASSERT(e.index == last_index() + 1, "restored log is not contiguous");
    AISCHED_RAFT_ASSERT(e.term >= last_term(), "restored log terms decrease");
    AISCHED_RAFT_ASSERT(e.term <= term_, "restored entry from a term after the hard state's");
    log_.push_back(std::move(e));
  }
  AISCHED_RAFT_ASSERT(snap_.term <= term_, "restored snapshot from a term after the hard state's");
  AISCHED_RAFT_ASSERT(snap_.index <= applied, "the state machine is behind the snapshot");
  AISCHED_RAFT_ASSERT(applied <= last_index(), "applied index beyond the restored log");
  AISCHED_RAFT_ASSERT(hard.commit <= last_index(), "restored commit index beyond the log");
  if (snap_.members.empty()) snap_.members = initial_membership();
  recompute_membership();
  // Whatever was applied or compacted was committed, whether or not the hard
  // state recorded the commit index at the time.
  commit_ = std::max({hard.commit, applied, snap_.index});
  applied_ = handed_commit_ = applied;
  unstable_ = last_index() + 1;
  reported_hard_ = hard;
  reported_role_ = current_role_change();
  reset_randomized_timeout();
}

core::core(raft::config cfg, uint64_t rng_seed)
    : core(std::move(cfg), hard_state{}, snapshot_meta{}, {}, 0, rng_seed) {
  // nop
}

// -- time --------------------------------------------------------------------

void core::tick() {
  if (role_ == role::leader) {
    tick_leader();
    return;
  }
  if (++election_elapsed_ >= randomized_timeout_) {
    if (can_campaign())
      campaign();
    else
      election_elapsed_ = cfg_.election_ticks;  // a non-voter never campaigns; stay out of lease
  }
}

void core::tick_leader() {
  ++election_elapsed_;
  ++heartbeat_elapsed_;
  for (auto& [peer, pr] : progress_)
    if (pr.match < last_index()) ++pr.stall_ticks;
  if (election_elapsed_ >= cfg_.election_ticks) {
    election_elapsed_ = 0;
    // Check-quorum (thesis §6.2): a leader cut off from a majority steps down
    // instead of accepting proposals that can never commit.
    bool active = quorum_active();
    if (cfg_.check_quorum && !active) {
      become_follower(term_, "");
      return;
    }
  }
  if (heartbeat_elapsed_ >= cfg_.heartbeat_ticks) {
    heartbeat_elapsed_ = 0;
    broadcast_heartbeats();
    maybe_promote();
  }
}

bool core::quorum_active() {
  // Also starts the next round: recent_active means "heard from within the
  // last election timeout".
  size_t active = is_voter(id()) ? 1 : 0;  // a leader being removed does not count
  for (auto& [peer, pr] : progress_) {
    if (pr.recent_active && is_voter(peer)) ++active;
    pr.recent_active = false;
  }
  return active >= quorum();
}

bool core::in_lease() const { return !leader_.empty() && election_elapsed_ < cfg_.election_ticks; }

void core::reset_randomized_timeout() {
  // Raw modulo instead of std::uniform_int_distribution: the latter differs
  // between standard libraries, and a seed must replay the same run anywhere.
  auto base = static_cast<uint64_t>(cfg_.election_ticks);
  randomized_timeout_ = static_cast<int>(base + rng_() % base);
}

// -- the message dispatcher --------------------------------------------------

void core::step(const message& m) {
  AISCHED_RAFT_ASSERT(m.to == id(), "message addressed to another member");
  if (m.from == id() || sender_of(m.body) != m.from) return;
  auto t = term_of(m.body);
  auto* vreq = caf::get_if<vote_request>(&m.body);
  // A removed member that never learnt of its removal campaigns with ever
  // higher terms: while a leader is heard from, campaigns of non-members are
  // ignored (thesis §4.2.3; with check_quorum every campaign is, below).
  // Without a leader they are heard: this member's view may be stale (a
  // joiner knows nobody) and refusing could leave the group without one.
  // Anything else from a non-member is fine: a new member hears from a
  // leader it does not know.
  if (vreq != nullptr && in_lease() && proto::find_member(members_, m.from) == nullptr) return;
  auto* vresp = caf::get_if<vote_response>(&m.body);
  bool from_leader = caf::holds_alternative<append_request>(m.body) ||
                     caf::holds_alternative<snapshot_request>(m.body);
  if (t > term_) {
    if (vreq != nullptr) {
      // Leader lease: a member that heard from a leader within the election
      // timeout ignores campaigns of higher terms, so a member that rejoins
      // with an inflated term cannot depose a healthy leader.
      if (cfg_.check_quorum && in_lease()) return;
      // A pre-vote asks about a future term; it never moves ours.
      if (vreq->pre_vote) {
        on_vote_request(*vreq);
        return;
      }
    }
    // A granted pre-vote echoes the term we would campaign in; we move there
    // only when we actually campaign.
    if (vresp == nullptr || !vresp->pre_vote || !vresp->granted) {
      // A campaign moves our term but restarts our timeout only if we grant
      // the vote (on_vote_request): a candidate that cannot win (a removed
      // member that never learnt it, whose log is behind) would otherwise
      // keep every member that could from ever timing out.
      auto elapsed = election_elapsed_;
      become_follower(t, from_leader ? m.from : std::string{});
      if (vreq != nullptr) election_elapsed_ = elapsed;
    }
  } else if (t < term_) {
    // A stale sender. Refuse with our term (§5.1) so that a deposed leader or
    // a lagging pre-candidate catches up: under check-quorum nothing else
    // might tell them, since our own higher-term campaigns may be ignored
    // within their lease. Other stale messages are dropped.
    if (from_leader)
      send(m.from, append_response{term_, id(), false, 0, 0, 0});
    else if (vreq != nullptr && vreq->pre_vote)
      send(m.from, vote_response{term_, id(), false, true});
    return;
  }
  // Now t == term_, or t == term_ + 1 in a pre-vote exchange.
  if (role_ == role::leader) {
    if (auto it = progress_.find(m.from); it != progress_.end()) it->second.recent_active = true;
  }
  if (vreq != nullptr)
    on_vote_request(*vreq);
  else if (vresp != nullptr)
    poll(*vresp);
  else if (auto* x = caf::get_if<append_request>(&m.body))
    on_append_request(*x);
  else if (auto* x = caf::get_if<snapshot_request>(&m.body))
    on_snapshot_request(*x);
  else if (auto* x = caf::get_if<append_response>(&m.body); x != nullptr && role_ == role::leader)
    on_append_response(*x);
}

// -- elections ---------------------------------------------------------------

void core::campaign() {
  if (role_ == role::leader || !can_campaign()) return;
  if (cfg_.pre_vote)
    become_pre_candidate();
  else
    become_candidate();
}

void core::reset(uint64_t term) {
  if (term != term_) {
    AISCHED_RAFT_ASSERT(term > term_, "term moved backwards");
    term_ = term;
    voted_for_.clear();
  }
  leader_.clear();
  election_elapsed_ = 0;
  heartbeat_elapsed_ = 0;
  reset_randomized_timeout();
  votes_.clear();
  progress_.clear();
}

void core::become_follower(uint64_t term, const std::string& leader) {
  reset(term);
  role_ = role::follower;
  leader_ = leader;
}

void core::become_pre_candidate() {
  // Term and vote stay: a pre-candidate changes nothing durable (§9.6).
  reset(term_);
  role_ = role::pre_candidate;
  start_election(true);
}

void core::become_candidate() {
  AISCHED_RAFT_ASSERT(role_ != role::leader, "a leader cannot become a candidate");
  reset(term_ + 1);
  role_ = role::candidate;
  voted_for_ = id();
  start_election(false);
}

void core::start_election(bool pre_vote) {
  votes_[id()] = true;  // counts only if this member votes (it may be campaigning to leave)
  if (quorum() == 1 && is_voter(id())) {  // a group of one wins at once
    if (pre_vote)
      become_candidate();
    else
      become_leader();
    return;
  }
  auto term = pre_vote ? term_ + 1 : term_;
  // Learners are asked too, though their answers do not count: one may have
  // been promoted by entries we lack, and only this request tells it our
  // term (a stale campaign of its own is dropped unanswered), without which it
  // could trail our term forever and never win the votes it needs.
  for (auto& peer : members_)
    if (peer.id != id())
      send(peer.id, vote_request{term, id(), last_index(), last_term(), pre_vote});
}

void core::on_vote_request(const vote_request& r) {
  // §5.4.1: vote only for candidates whose log is at least as up to date.
  bool log_ok = up_to_date(r.last_log_index, r.last_log_term);
  if (r.pre_vote) {
    // Grant iff a real election in r.term could be won on our account: the
    // term is new to us, the log is complete enough, and no leader was heard
    // from within the election timeout (§9.6).
    bool grant = r.term > term_ && log_ok && !in_lease();
    send(r.candidate, vote_response{grant ? r.term : term_, id(), grant, true});
    return;
  }
  AISCHED_RAFT_ASSERT(r.term == term_, "vote request of another term reached the handler");
  // One vote per term (§5.2); a follower that knows this term's leader votes
  // for nobody else.
  bool can_vote = voted_for_ == r.candidate || (voted_for_.empty() && leader_.empty());
  bool grant = can_vote && log_ok;
  if (grant) {
    voted_for_ = r.candidate;
    election_elapsed_ = 0;  // give the candidate a full timeout to win
  }
  send(r.candidate, vote_response{term_, id(), grant, false});
}

void core::poll(const vote_response& r) {
  bool pre = role_ == role::pre_candidate;
  if ((!pre && role_ != role::candidate) || r.pre_vote != pre)
    return;  // answers a campaign we are no longer running
  if (pre && r.granted && r.term != term_ + 1) return;  // a grant for an older pre-campaign
  votes_.emplace(r.from, r.granted);                    // the first answer of each member counts
  size_t granted = 0;
  size_t rejected = 0;
  for (auto& [peer, yes] : votes_)
    if (is_voter(peer)) ++(yes ? granted : rejected);
  if (granted >= quorum()) {
    if (pre)
      become_candidate();
    else
      become_leader();
  } else if (rejected >= quorum()) {
    become_follower(term_, "");
  }
}

bool core::up_to_date(uint64_t last_index_of_other, uint64_t last_term_of_other) const {
  return last_term_of_other > last_term() ||
         (last_term_of_other == last_term() && last_index_of_other >= last_index());
}

void core::become_leader() {
  AISCHED_RAFT_ASSERT(role_ == role::candidate, "only a candidate can become leader");
  AISCHED_RAFT_ASSERT(voted_for_ == id(), "a leader votes for itself");
  reset(term_);
  role_ = role::leader;
  leader_ = id();
  sync_progress();
  // A no-op of the new term lets entries of earlier terms commit (§5.4.2):
  // they may only commit together with an entry of the leader's own term. The
  // first leader of a group makes it the bootstrap membership instead.
  if (cfg_.replicate_bootstrap && members_index_ == 0 && !members_.empty())
    append_local(proto::log_entry{last_index() + 1, term_,
                                  proto::set_membership{members_}});
  else
    append_local(proto::log_entry{last_index() + 1, term_, proto::noop{}});
  for (auto& [peer, pr] : progress_) send_append(peer, true);
  maybe_commit();
}

// -- follower side of replication -------------------------------------------

void core::on_append_request(const append_request& r) {
  AISCHED_RAFT_ASSERT(role_ != role::leader, "two leaders in one term");
  AISCHED_RAFT_ASSERT(leader_.empty() || leader_ == r.leader, "two leaders in one term");
  if (role_ != role::follower || leader_.empty()) become_follower(term_, r.leader);
  election_elapsed_ = 0;
  for (size_t i = 0; i < r.entries.size(); ++i) {
    AISCHED_RAFT_ASSERT(r.entries[i].index == r.prev_index + 1 + i,
                        "append_request entries are not contiguous");
    AISCHED_RAFT_ASSERT(r.entries[i].term <= r.term, "append_request entry from a future term");
  }
  // Our log up to commit_ is committed, hence a prefix of the leader's log
  // (Leader Completeness): skip what the request repeats of it.
  uint64_t prev = r.prev_index;
  uint64_t prev_term = r.prev_term;
  size_t first = 0;
  if (prev < commit_) {
    if (r.prev_index + r.entries.size() <= commit_) {
      send(r.leader, append_response{term_, id(), true, commit_, 0, 0});
      return;
    }
    first = commit_ - prev;
    prev = commit_;
    prev_term = r.entries[first - 1].term;
    AISCHED_RAFT_ASSERT(term_at(prev) == prev_term,
                        "the leader's log disagrees with a committed entry");
  }
  // The consistency check (§5.3).
  if (term_at(prev) != prev_term) {
    auto hint = reject_hint(r.prev_index, r.prev_term);
    send(r.leader, append_response{term_, id(), false, r.prev_index, hint, *term_at(hint)});
    return;
  }
  for (size_t i = first; i < r.entries.size(); ++i) {
    auto& e = r.entries[i];
    if (e.index <= last_index()) {
      if (term_at(e.index) == e.term)
        continue;  // already there (a duplicate or overlapping append)
      // A conflicting suffix goes; entries only ever conflict above commit_.
      AISCHED_RAFT_ASSERT(e.index > commit_, "a committed entry would be truncated");
      truncate_local(e.index);
    }
    append_local(e);
  }
  uint64_t last_new = r.prev_index + r.entries.size();
  commit_to(std::min(r.leader_commit, last_new));
  send(r.leader, append_response{term_, id(), true, last_new, 0, 0});
}

uint64_t core::reject_hint(uint64_t prev_index, uint64_t prev_term) const {
  // The leader's terms up to prev_index are <= prev_term, so none of our
  // entries with a higher term can match at their index: skip them all in one
  // round trip instead of one index per round trip. Stops at commit_, which
  // always matches.
  uint64_t i = std::min(prev_index, last_index());
  while (i > commit_ && *term_at(i) > prev_term) --i;
  return i;
}

void core::on_snapshot_request(const snapshot_request& r) {
  AISCHED_RAFT_ASSERT(role_ != role::leader, "two leaders in one term");
  AISCHED_RAFT_ASSERT(leader_.empty() || leader_ == r.leader, "two leaders in one term");
  if (role_ != role::follower || leader_.empty()) become_follower(term_, r.leader);
  election_elapsed_ = 0;
  if (r.last_index <= commit_) {  // nothing new for us
    send(r.leader, append_response{term_, id(), true, commit_, 0, 0});
    return;
  }
  if (term_at(r.last_index) == r.last_term) {
    // We hold that entry, hence the leader's whole prefix up to it (Log
    // Matching): committing it is all the snapshot would have done.
    commit_to(r.last_index);
    send(r.leader, append_response{term_, id(), true, r.last_index, 0, 0});
    return;
  }
  // Everything we hold above commit_ is uncommitted and replaced.
  log_.clear();
  snap_ = snapshot_meta{r.last_index, r.last_term, r.members};
  recompute_membership();
  commit_ = r.last_index;
  handed_commit_ = r.last_index;  // the state machine jumps; nothing in between is applied
  pending_snapshot_ = snap_;
  truncate_from_.reset();
  unstable_ = last_index() + 1;
  send(r.leader, append_response{term_, id(), true, r.last_index, 0, 0});
}

// -- leader side of replication ----------------------------------------------

caf::expected<uint64_t> core::propose(proto::command cmd) {
  if (role_ != role::leader) {
    return make_error(errc::not_leader, leader_.empty()
                                            ? "no leader known in term " + std::to_string(term_)
                                            : "the leader is " + leader_);
  }
  if (proto::holds<proto::set_membership>(cmd)) {
    auto x = proto::command_as<proto::set_membership>(cmd);
    if (!x) return make_error(errc::invalid_argument, "members", "a membership that does not decode");
    if (auto err = check_membership_change(x->members)) return err;
  }
  append_local(proto::log_entry{last_index() + 1, term_, std::move(cmd)});
  for (auto& [peer, pr] : progress_) send_append(peer, false);
  maybe_commit();  // a group of one commits at once
  return last_index();
}

bool core::send_append(const std::string& peer, bool send_if_empty) {
  auto& pr = progress_.at(peer);
  if (pr.paused(cfg_.max_inflight_appends)) return false;
  auto prev = pr.next - 1;
  auto prev_term = term_at(prev);
  if (!prev_term) {  // compacted away: only a snapshot can catch the follower up
    send_snapshot(peer);
    return true;
  }
  auto last = std::min(last_index(), prev + cfg_.max_entries_per_append);
  if (last == prev && !send_if_empty) return false;
  send(peer, append_request{term_, id(), prev, *prev_term, slice(prev + 1, last), commit_});
  pr.sent(last);
  return true;
}

void core::send_snapshot(const std::string& peer) {
  progress_.at(peer).become_snapshot(snap_.index);
  send(peer, snapshot_request{term_, id(), snap_.index, snap_.term, snap_.members});
}

void core::send_heartbeat(const std::string& peer) {
  // An empty append at the follower's match index always passes the
  // consistency check, whatever is in flight or reordered, and lets it commit
  // up to what it is known to hold.
  auto& pr = progress_.at(peer);
  auto prev = pr.match >= snap_.index ? pr.match : snap_.index;
  send(peer, append_request{term_, id(), prev, *term_at(prev), {}, std::min(commit_, prev)});
}

void core::broadcast_heartbeats() {
  // A follower whose match has not moved for a while although entries are
  // outstanding lost an append, a probe, a snapshot or an answer somewhere:
  // nothing else would resend it (heartbeat answers are no help when the
  // heartbeat itself is refused). Restart its flow from match + 1, which
  // always matches. Data goes only to a follower heard from within the last
  // election timeout (the probe doubles as its heartbeat); a silent one,
  // likely down, gets heartbeats until it answers, not batches every round.
  int stall_limit = std::max(2 * cfg_.heartbeat_ticks, cfg_.election_ticks / 2);
  for (auto& [peer, pr] : progress_) {
    if (pr.stall_ticks >= stall_limit) {
      pr.become_probe();
      if (pr.recent_active) {
        send_append(peer, true);
        continue;
      }
    }
    send_heartbeat(peer);
  }
}

void core::on_append_response(const append_response& r) {
  auto it = progress_.find(r.from);
  if (it == progress_.end()) return;
  auto& pr = it->second;
  if (!r.success) {
    // The follower skipped its entries of terms above the rejected prev_term;
    // skip ours above the term of its hint likewise: none of them can match.
    auto hint = std::min(r.reject_hint, last_index());
    while (hint > std::max(pr.match, snap_.index) && *term_at(hint) > r.reject_hint_term) --hint;
    if (pr.maybe_decrease(r.match_index, hint)) send_append(r.from, true);
    return;
  }
  AISCHED_RAFT_ASSERT(r.match_index <= last_index(), "a follower claims entries the leader lacks");
  if (pr.maybe_update(r.match_index)) {
    if (pr.state == progress_state::probe ||
        (pr.state == progress_state::snapshot && pr.match >= pr.pending_snapshot))
      pr.become_replicate();
    bool committed = maybe_commit();
    if (role_ != role::leader) return;  // it was removed and stepped down
    while (send_append(r.from, false)) {
      // fill the pipeline
    }
    if (committed) {
      // Tell idle followers the new commit index now rather than at the next
      // heartbeat; busy ones learn it from their next append.
      for (auto& [peer, other] : progress_)
        if (other.state == progress_state::replicate && other.inflight.empty())
          send_heartbeat(peer);
    }
  } else if (pr.state == progress_state::probe && pr.match < last_index()) {
    // Answer to a heartbeat (or a stale append): the follower is reachable,
    // so probe again rather than wait for a lost probe's answer.
    pr.probe_sent = false;
    send_append(r.from, true);
  }
}

bool core::maybe_commit() {
  // Only voters count; a leader that is being removed does not count itself.
  std::vector<uint64_t> matches;
  matches.reserve(members_.size());
  if (is_voter(id())) matches.push_back(last_index());
  for (auto& [peer, pr] : progress_)
    if (is_voter(peer)) matches.push_back(pr.match);
  if (matches.size() < quorum()) return false;
  std::sort(matches.begin(), matches.end(), std::greater<>{});
  auto index = matches[quorum() - 1];  // held by a majority
  // Only an entry of the current term commits by counting replicas; earlier
  // ones commit with it (§5.4.2, Figure 8).
  if (index <= commit_ || term_at(index) != term_) return false;
  commit_to(index);
  step_down_if_removed();
  return true;
}

// -- ready / advance ---------------------------------------------------------

bool core::has_ready() const {
  return pending_snapshot_ || truncate_from_ || unstable_ <= last_index() || !msgs_.empty() ||
         commit_ > handed_commit_ || current_hard_state() != reported_hard_ ||
         !same(current_role_change(), reported_role_);
}

ready core::take_ready() {
  AISCHED_RAFT_ASSERT(!ready_outstanding_, "take_ready() before advance() of the previous ready");
  ready rd;
  rd.snapshot = std::exchange(pending_snapshot_, std::nullopt);
  rd.truncate_from = std::exchange(truncate_from_, std::nullopt);
  rd.entries = slice(unstable_, last_index());
  unstable_ = last_index() + 1;
  if (auto hs = current_hard_state(); hs != reported_hard_) {
    rd.hard = hs;
    reported_hard_ = hs;
  }
  rd.messages = std::move(msgs_);
  msgs_.clear();
  if (commit_ > handed_commit_) {
    rd.committed = slice(handed_commit_ + 1, commit_);
    handed_commit_ = commit_;
  }
  if (auto rc = current_role_change(); !same(rc, reported_role_)) {
    rd.role = rc;
    reported_role_ = std::move(rc);
  }
  ready_outstanding_ = true;
  return rd;
}

void core::advance(const ready& rd) {
  AISCHED_RAFT_ASSERT(ready_outstanding_, "advance() without a ready");
  ready_outstanding_ = false;
  if (rd.snapshot) applied_ = std::max(applied_, rd.snapshot->index);
  if (!rd.committed.empty()) {
    AISCHED_RAFT_ASSERT(rd.committed.front().index == applied_ + 1,
                        "applied entries do not continue the applied index");
    applied_ = rd.committed.back().index;
  }
}

// -- helpers -----------------------------------------------------------------

void core::send(const std::string& to, payload body) {
  msgs_.push_back(message{to, id(), std::move(body)});
}

void core::check_invariants() const {
  AISCHED_RAFT_ASSERT(commit_ <= last_index(), "commit index beyond the log");
  AISCHED_RAFT_ASSERT(snap_.index <= handed_commit_ && handed_commit_ <= commit_,
                      "applied index out of order");
  AISCHED_RAFT_ASSERT(applied_ <= handed_commit_, "applied more than was handed out");
  AISCHED_RAFT_ASSERT(snap_.index < unstable_ && unstable_ <= last_index() + 1,
                      "persistence cursor outside the log");
  AISCHED_RAFT_ASSERT(last_term() <= term_, "log holds an entry from a future term");
  switch (role_) {
    case role::leader:
      AISCHED_RAFT_ASSERT(leader_ == id() && voted_for_ == id(), "a leader leads and votes itself");
      AISCHED_RAFT_ASSERT(progress_.size() + (proto::find_member(members_, id()) ? 1 : 0) ==
                              members_.size(),
                          "a leader tracks every other member");
      for (auto& [peer, pr] : progress_) {
        AISCHED_RAFT_ASSERT(proto::find_member(members_, peer) != nullptr,
                            "a leader tracks a non-member");
        AISCHED_RAFT_ASSERT(pr.match < pr.next && pr.next <= last_index() + 1,
                            "progress out of range");
        AISCHED_RAFT_ASSERT(pr.inflight.size() <= cfg_.max_inflight_appends,
                            "more appends in flight than allowed");
      }
      break;
    case role::candidate:
      AISCHED_RAFT_ASSERT(voted_for_ == id(), "a candidate votes for itself");
      [[fallthrough]];
    case role::pre_candidate:
      AISCHED_RAFT_ASSERT(leader_.empty(), "a candidate knows no leader");
      [[fallthrough]];
    case role::follower:
      AISCHED_RAFT_ASSERT(progress_.empty(), "only a leader tracks progress");
      break;
  }
}

void core::fail(const char* expr, const char* what, int line) const {
  std::fprintf(stderr, "aisched raft [%s term %llu %s]: invariant broken: %s (%s) at %s:%d\n",
               cfg_.id.c_str(), static_cast<unsigned long long>(term_), to_string(role_), what,
               expr, __FILE__, line);
  std::fflush(stderr);
  std::abort();
}

}  // namespace aisched::raft
