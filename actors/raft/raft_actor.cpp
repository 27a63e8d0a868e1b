// Behaviour of the raft actor; see raft_actor.hpp.
#include "actors/raft/raft_actor.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <caf/sum_type.hpp>

#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/counted.hpp"
#include "actors/raft/membership_links.hpp"
#include "actors/raft/peer_links.hpp"
#include "actors/raft/raft_status.hpp"
#include "obs/metrics.hpp"
#include "common/cluster_link.hpp"
#include "proto/errors.hpp"
#include "common/log.hpp"
#include "storage/format_version.hpp"
#include "storage/health.hpp"
#include "storage/membership_store.hpp"
#include "storage/rocks.hpp"
#include "storage/snapshot.hpp"
#include "storage/state_machine.hpp"
#include "storage/wal_sync.hpp"

namespace aisched::raft {

using namespace proto;

namespace {

using self_ptr = node_actor::stateful_pointer<raft_state>;

constexpr auto forward_timeout = std::chrono::seconds(10);
// One snapshot chunk (<= 1 MiB) is staged in memory on arrival; if its answer
// takes this long the follower is gone and the core starts over later.
constexpr auto chunk_timeout = std::chrono::seconds(10);
// Probes of a failed disk: soon at first (a transient error), then no more
// than one synced write every couple of seconds while the disk stays full.
constexpr auto first_retry = std::chrono::milliseconds(100);
constexpr auto max_retry = std::chrono::milliseconds(2000);

void process_ready(self_ptr self);
void fail(self_ptr self, const caf::error& err);

/// Milliseconds since `t` on `self`'s actor clock, for the one log line a
/// snapshot transfer writes.
long long ms_since(self_ptr self, caf::actor_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(self->clock().now() - t).count();
}

/// Answers the forwarded proposals this member has now applied (or received
/// in a snapshot).
void release_forwarded(raft_state& st) {
  auto applied = st.sm->applied_index();
  while (!st.forwarded.empty() && st.forwarded.begin()->first <= applied) {
    auto node = st.forwarded.extract(st.forwarded.begin());
    node.mapped().first.deliver(std::move(node.mapped().second));
  }
}

caf::error not_leader(const raft_state& st) {
  auto hint = st.member->leader();
  return make_error(errc::not_leader, "leader",
                    hint.empty() ? "no leader is known right now; retry shortly"
                                 : "this node does not lead; the leader is " + hint);
}

void tell_listeners(self_ptr self, const leadership& l) {
  auto& st = self->state;
  if (l.leading == st.told.leading && l.term == st.told.term && l.leader_id == st.told.leader_id)
    return;
  st.told = l;
  for (auto& listener : st.listeners) self->send(listener, leader_atom::value, l);
}

/// Updates the raft gauges, and counts elections from role changes: becoming
/// leader is a won election; a candidate that falls back, or times out into a
/// new candidacy at a higher term, lost one. Pre-votes change no term and are
/// not counted.
void observe_member(raft_state& st) {
  auto& m = obs::get();
  auto now = st.member->current_role();
  auto term = st.member->term();
  if (now == role::leader && st.observed_role != role::leader) {
    m.elections_won.inc();
    // One line per won election: aisched-chaos checks over every member's log
    // that no term ever had two leaders.
    log::info("elected leader", {{"term", std::to_string(term)}, {"leader", st.opts.node_id}});
  }
  else if (st.observed_role == role::candidate &&
           (now != role::candidate || term != st.observed_term))
    m.elections_lost.inc();
  st.observed_role = now;
  st.observed_term = term;
  m.raft_term.set(static_cast<double>(term));
  m.raft_is_leader.set(now == role::leader ? 1 : 0);
  m.raft_commit_index.set(static_cast<double>(st.member->commit_index()));
  m.raft_applied_index.set(static_cast<double>(st.sm->applied_index()));
}

// -- snapshots ---------------------------------------------------------------
// Compaction: every member compacts its own log once it applied
// `snapshot_every` entries past its last snapshot; its state machine, durable
// in RocksDB at the applied index, is the snapshot.
// Transfer: when the leader's core sends a snapshot_request, this actor
// streams a pinned export of the state machine instead, one chunk per
// request; the follower stages the chunks and steps its core with the
// snapshot_request only once all have arrived. The core then puts the
// snapshot in a ready and process_ready installs the staged state together
// with the new log base in one synced batch.

/// Installs the staged snapshot `meta` (with the hard state of the same ready).
caf::error install_snapshot(self_ptr self, const snapshot_meta& meta,
                            const std::optional<hard_state>& hard) {
  auto& st = self->state;
  // The core names a snapshot only when stepped by a complete transfer.
  if (!st.receiving || !st.receiving->complete || st.receiving->header.index != meta.index ||
      st.receiving->header.last_term != meta.term) {
    std::fprintf(stderr, "raft %s: invariant broken: snapshot %llu in ready without its state\n",
                 st.opts.node_id.c_str(), static_cast<unsigned long long>(meta.index));
    std::abort();
  }
  auto started = self->clock().now();
  auto staging = std::move(st.receiving->staging);
  st.receiving.reset();
  auto hs = hard ? storage::hard_state{hard->term, hard->voted_for, hard->commit} : st.log->state();
  if (auto err = st.log->install({meta.index, meta.term}, hs, staging->batch())) return err;
  if (auto err = st.sm->reload()) return err;
  if (st.sm->applied_index() != meta.index)
    return make_error(errc::corrupted, "installed snapshot " + std::to_string(meta.index) +
                                           " holds state of index " +
                                           std::to_string(st.sm->applied_index()));
  st.last_applied_term = meta.term;
  // Local proposals up to the snapshot were in the log that was replaced.
  for (auto it = st.waiting.begin(); it != st.waiting.end() && it->first <= meta.index;) {
    it->second.promise.deliver(not_leader(st));
    it = st.waiting.erase(it);
  }
  std::fprintf(stderr, "raft %s: installed snapshot at index %llu: %llu records, %llu bytes, %lld ms\n",
               st.opts.node_id.c_str(), static_cast<unsigned long long>(meta.index),
               static_cast<unsigned long long>(staging->records()),
               static_cast<unsigned long long>(staging->bytes()), ms_since(self, started));
  return {};
}

/// Compacts the log behind the applied index when it has grown enough.
caf::error maybe_compact(raft_state& st) {
  auto every = st.opts.snapshot_every;
  auto& m = *st.member;
  if (every == 0 || m.applied_index() < m.snapshot().index + every) return {};
  // A tail stays for followers that are only a little behind (etcd keeps one too):
  // they catch up by entries rather than by a whole snapshot.
  auto index = m.applied_index() - every / 10;
  auto term = m.term_at(index);
  if (!term) return make_error(errc::internal, "compaction point outside the log");
  if (auto err = st.log->compact(index, *term)) return err;
  m.compact(index);
  return {};
}

void send_chunk(self_ptr self, const std::string& peer) {
  auto& st = self->state;
  auto it = st.sending.find(peer);
  if (it == st.sending.end()) return;
  auto& tr = it->second;
  auto p = st.peers.find(peer);
  // Abandoned when leadership or the peer is lost; the core asks again if needed.
  if (st.member->current_role() != role::leader || st.member->term() != tr.next.term ||
      p == st.peers.end() || !p->second.handle) {
    st.sending.erase(it);
    return;
  }
  auto data = tr.source->next_chunk(st.opts.snapshot_chunk_bytes);
  if (!data) {
    std::fprintf(stderr, "raft %s: snapshot export failed: %s\n", st.opts.node_id.c_str(),
                 view(data.error()).message.c_str());
    st.sending.erase(it);
    return;
  }
  auto chunk = tr.next;
  chunk.data = std::move(*data);
  chunk.last = tr.source->done();
  ++tr.next.seq;
  auto id = tr.id;
  self->request(p->second.handle, chunk_timeout, snap_chunk_atom::value, std::move(chunk))
      .then(
          [=](uint64_t next) {
            auto& st = self->state;
            auto i = st.sending.find(peer);
            if (i == st.sending.end() || i->second.id != id) return;  // an older transfer's answer
            if (next == i->second.next.seq) return send_chunk(self, peer);
            if (next == snapshot_complete)
              std::fprintf(stderr,
                           "raft %s: sent snapshot at index %llu to %s: %llu records, %llu bytes, "
                           "%lld ms\n",
                           st.opts.node_id.c_str(),
                           static_cast<unsigned long long>(i->second.next.index), peer.c_str(),
                           static_cast<unsigned long long>(i->second.source->records()),
                           static_cast<unsigned long long>(i->second.source->bytes()),
                           ms_since(self, i->second.started));
            st.sending.erase(i);
          },
          [=](caf::error&) {
            auto& st = self->state;
            auto i = st.sending.find(peer);
            if (i != st.sending.end() && i->second.id == id) st.sending.erase(i);
          });
}

/// Starts streaming a snapshot to `peer` in place of the core's `req`.
void start_snapshot(self_ptr self, const std::string& peer, const snapshot_request& req) {
  auto& st = self->state;
  // One transfer per follower: the core asks again whenever the follower has
  // been silent for a while, and a large state takes longer than that.
  if (st.sending.count(peer) != 0) return;
  auto source = storage::snapshot_export::open(*st.db);
  if (!source) {
    std::fprintf(stderr, "raft %s: cannot open a snapshot: %s\n", st.opts.node_id.c_str(),
                 view(source.error()).message.c_str());
    return;
  }
  // The state machine has moved past the core's compaction point; the export
  // is of exactly its applied index, which is committed and at or above that
  // point, so it is as good a base (the follower acks up to it).
  auto index = (*source)->applied_index();
  auto term = st.member->term_at(index);
  if (!term || index < req.last_index) {
    std::fprintf(stderr, "raft %s: invariant broken: snapshot export at %llu below the log base\n",
                 st.opts.node_id.c_str(), static_cast<unsigned long long>(index));
    std::abort();
  }
  auto& tr = st.sending[peer];
  tr.id = ++st.transfers;
  tr.source = std::shared_ptr<storage::snapshot_export>(std::move(*source));
  tr.next = snapshot_chunk{peer, st.opts.node_id, req.term, index, *term, 0, false, {},
                          st.member->membership_at(index), storage::current_format};
  tr.started = self->clock().now();
  send_chunk(self, peer);
}

/// Steps the core with the snapshot_request that `c` carries, and acts on it.
void step_snapshot(self_ptr self, const snapshot_chunk& c) {
  auto& st = self->state;
  st.member->step(message{st.opts.node_id, c.from,
                          snapshot_request{c.term, c.from, c.index, c.last_term, c.members}});
  process_ready(self);
}

/// Follower side: stages `c`; returns the next seq wanted or snapshot_complete.
caf::result<uint64_t> receive_chunk(self_ptr self, snapshot_chunk& c) {
  auto& st = self->state;
  if (c.to != st.opts.node_id)
    return make_error(errc::invalid_argument, "to", "snapshot chunk for member " + c.to);
  if (c.format != storage::current_format)
    return make_error(errc::forbidden, "format",
                      "snapshot from " + c.from + " in data format " + std::to_string(c.format) +
                          ", member " + st.opts.node_id + " reads format " +
                          std::to_string(storage::current_format) + ": nothing of it is installed");
  if (c.term < st.member->term())
    return make_error(errc::not_leader, "term", "snapshot from the leader of an older term");
  if (c.seq == 0) {
    st.receiving.reset();
    if (c.index <= st.sm->applied_index()) {
      // Nothing to install: the core answers as it does to any stale snapshot.
      step_snapshot(self, c);
      return snapshot_complete;
    }
    auto header = c;
    header.data.clear();
    st.receiving = raft_state::incoming_snapshot{
        std::move(header), std::make_shared<storage::snapshot_staging>(*st.db), false};
  }
  auto& in = st.receiving;
  if (!in || in->header.from != c.from || in->header.term != c.term ||
      in->header.index != c.index || in->header.seq != c.seq)
    return make_error(errc::invalid_argument, "seq", "snapshot chunk out of order");
  if (auto err = in->staging->add(c.data)) {
    st.receiving.reset();
    return err;
  }
  ++in->header.seq;
  if (!c.last) return in->header.seq;
  in->complete = true;
  step_snapshot(self, c);  // installs through process_ready, unless not needed after all
  st.receiving.reset();
  return snapshot_complete;
}

// -- the ready loop ------------------------------------------------------------

/// Whether `m` may leave before this member's entries of the same ready are
/// durable: a leader's appends may (it writes its log in parallel with its
/// followers, Raft thesis 10.2.1; it counts itself only in a later ready, by
/// when the write is synced). Acknowledgements and votes may not.
bool sendable_before_sync(const message& m) {
  return caf::holds_alternative<append_request>(m.body);
}

/// Sends `m` to its peer (a snapshot request starts a transfer instead).
void send_message(self_ptr self, const message& m) {
  auto& st = self->state;
  if (auto* req = caf::get_if<snapshot_request>(&m.body)) return start_snapshot(self, m.to, *req);
  auto p = st.peers.find(m.to);
  if (p != st.peers.end() && p->second.handle)
    self->send(p->second.handle, peer_msg_atom::value, m);
}

/// Persists, sends and applies everything the core has ready, in that order;
/// a ready that only adds entries has them synced while the state machine
/// computes its batch (storage/wal_sync.hpp): nothing is written to the state
/// machine, acknowledged or answered before the entries are durable.
void process_ready(self_ptr self) {
  auto& st = self->state;
  while (st.member->has_ready()) {
    auto rd = st.member->take_ready();
    if (rd.snapshot) {
      if (auto err = install_snapshot(self, *rd.snapshot, rd.hard)) return fail(self, err);
    }
    // 1. Persist. Entries and votes must be durable before anyone hears of
    //    them; a commit index alone may lag (it is re-learnt from the leader).
    //    A new term or vote, or a truncation, is synced before anything else
    //    happens; new entries alone are synced in the background (step 3).
    caf::actor_clock::duration_type append_took{};  // on the actor clock
    if (!rd.entries.empty() || rd.hard || rd.truncate_from) {
      auto hs = rd.hard ? storage::hard_state{rd.hard->term, rd.hard->voted_for, rd.hard->commit}
                        : st.log->state();
      bool vote_changed =
          hs.term != st.log->state().term || hs.voted_for != st.log->state().voted_for;
      bool later = !rd.entries.empty() && !vote_changed && !rd.truncate_from && !rd.snapshot;
      bool sync = !later && (!rd.entries.empty() || rd.truncate_from || vote_changed);
      auto started = self->clock().now();
      if (auto err = st.log->append(rd.entries, hs, rd.truncate_from, sync))
        return fail(self, err);
      append_took = self->clock().now() - started;
      if (later) st.syncer->start();
    }
    // 2. Send what may go before the sync.
    for (auto& m : rd.messages)
      if (!st.syncer->started() || sendable_before_sync(m)) send_message(self, m);
    // 3. Apply: compute the batch, wait for the sync, write it. Then send the
    //    rest, answer local proposals and tell listeners.
    bool synced_later = st.syncer->started();
    auto synced = [&]() -> caf::error {
      if (!st.syncer->started()) return {};
      if (auto err = st.syncer->wait()) return err;
      for (auto& m : rd.messages)
        if (!sendable_before_sync(m)) send_message(self, m);
      return {};
    };
    caf::expected<std::vector<caf::expected<applied>>> results{
        std::vector<caf::expected<applied>>{}};
    if (!rd.committed.empty()) results = st.sm->apply(rd.committed, synced);
    if (auto err = synced()) return fail(self, err);  // when apply wrote nothing
    if (!results) return fail(self, results.error());
    if (synced_later) append_took += st.syncer->last_duration();
    if (!rd.entries.empty())
      obs::get().raft_append_latency_seconds.observe(
          std::chrono::duration<double>(append_took).count());
    if (!rd.committed.empty()) {
      for (size_t i = 0; i < rd.committed.size(); ++i) {
        auto& e = rd.committed[i];
        auto& r = (*results)[i];
        auto w = st.waiting.find(e.index);
        if (r && r->index != 0 && !st.listeners.empty()) {
          // One message for every listener, shared copy-on-write (they read it
          // only): an `applied` can carry thousands of instances. It takes
          // the result itself unless a local proposal waits for it too (a
          // follower's entries: no copy).
          bool answered = w != st.waiting.end() && w->second.term == e.term;
          auto msg = answered ? caf::make_message(committed_atom::value, *r)
                              : caf::make_message(committed_atom::value, std::move(*r));
          for (auto& l : st.listeners) caf::anon_send(caf::actor_cast<caf::actor>(l), msg);
        }
        if (w != st.waiting.end()) {
          if (w->second.term != e.term)
            w->second.promise.deliver(not_leader(st));  // our entry was replaced
          else if (r)
            w->second.promise.deliver(std::move(*r));
          else
            w->second.promise.deliver(r.error());
          st.waiting.erase(w);
        }
        st.last_applied_term = e.term;
      }
    }
    release_forwarded(st);
    st.member->advance(rd);
    // Tell the leader-only actors who leads. A new leader's view of the state
    // is complete once an entry of its own term (its no-op) has been applied.
    auto term = st.member->term();
    if (st.member->current_role() == role::leader) {
      if (st.last_applied_term == term)
        tell_listeners(self, leadership{true, term, st.opts.node_id});
    } else {
      tell_listeners(self, leadership{false, term, st.member->leader()});
    }
  }
  if (auto err = maybe_compact(st)) return fail(self, err);
  sync_links(self);
  observe_member(st);
}

void schedule_flush(self_ptr self) {
  auto& st = self->state;
  if (st.flush_scheduled) return;
  // Proposals already queued behind this one join the same batch (one fsync).
  st.flush_scheduled = true;
  self->send(self, flush_atom::value);
}

// -- storage faults ------------------------------------------------------------
// A member that cannot persist must not take part: it would acknowledge
// appends or grant votes it may forget. On a failed write it fences itself
// (raft_state::fault) and probes storage with backoff; once writes succeed it
// rebuilds its member from disk, exactly as a restart would, and rejoins.

void schedule_retry(self_ptr self) {
  auto& st = self->state;
  self->delayed_send(self, st.retry_delay, storage_retry_atom::value, st.fault_generation);
}

/// Fences this member after the storage failure `err`.
void fence(self_ptr self, const caf::error& err) {
  auto& st = self->state;
  bool was_leader = st.member->current_role() == role::leader;
  st.fault = err;
  ++st.fault_generation;
  st.retry_delay = first_retry;
  // A proposal whose entry failed to persist is refused (it was sent to no one:
  // process_ready persists before it sends). One whose entry is durable but not
  // applied may still commit, after recovery or under another leader: its
  // outcome is unknown, and 507 would invite a duplicate.
  auto v = view(err);
  for (auto& [index, w] : st.waiting)
    w.promise.deliver(index <= st.log->last_index()
                          ? make_error(errc::outcome_unknown,
                                       "the write is in the log but was not applied when this "
                                       "member's storage failed (" + v.message +
                                           "): it may still take effect; read before resending")
                          : err);
  st.waiting.clear();
  // Forwarded proposals committed at the leader: that answer stands.
  for (auto& [index, f] : st.forwarded) f.first.deliver(std::move(f.second));
  st.forwarded.clear();
  st.sending.clear();
  st.receiving.reset();
  tell_listeners(self, leadership{false, st.member->term(), ""});
  obs::get().raft_is_leader.set(0);
  log::error("storage write failed: this member stops taking part in the group (no votes, no "
             "acks, no proposals) until writes succeed again",
             {{"error", v.message},
              {"code", to_string(v.code)},
              {"role", was_leader ? "leader" : to_string(st.member->current_role())},
              {"term", std::to_string(st.member->term())}});
  schedule_retry(self);
}

/// A failure while processing a ready: storage faults fence this member; any
/// other error (corruption, a broken invariant) ends the actor, and with it
/// the node (runtime/scheduler_node.cpp).
void fail(self_ptr self, const caf::error& err) {
  if (is_storage_fault(view(err).code)) return fence(self, err);
  auto& st = self->state;
  auto v = view(err);
  log::error("the state cannot be read or applied (corrupted or a broken invariant): this member "
             "stops rather than diverge from the group",
             {{"error", v.message}, {"code", to_string(v.code)}});
  for (auto& [index, w] : st.waiting) w.promise.deliver(err);
  st.waiting.clear();
  self->quit(err);
}

/// The retry timer of a fenced member: probes storage; on success restarts
/// the member from disk.
void retry_storage(self_ptr self, uint64_t generation) {
  auto& st = self->state;
  if (!st.fault || generation != st.fault_generation) return;
  auto restored = [&]() -> caf::expected<member_parts> {
    if (auto err = st.db->recover()) return err;
    if (auto err = st.sm->reload()) return err;  // as applied on disk
    return open_member(*st.db, *st.sm, st.opts);
  }();
  if (!restored) {
    if (!is_storage_fault(view(restored.error()).code)) {
      log::error("storage recovery failed for good", {{"error", view(restored.error()).message}});
      return self->quit(restored.error());
    }
    st.fault = restored.error();
    st.retry_delay = std::min<std::chrono::milliseconds>(st.retry_delay * 2, max_retry);
    return schedule_retry(self);
  }
  log::info("storage writes succeed again: this member restarts from disk and rejoins",
            {{"applied_index", std::to_string(st.sm->applied_index())},
             {"term", std::to_string(restored->log->state().term)}});
  st.fault = caf::error{};
  st.log = std::move(restored->log);
  st.member = std::move(restored->member);
  schedule_flush(self);  // a group of one has its new election ready
}

/// Hands a request to the leader; answers with the leader's answer once this
/// member has applied the entry too (so the client reads its write here), or
/// at once unless `wait_local` (a member asking for its own removal may never
/// receive the entry).
template <class... Ts>
caf::result<applied> forward_to_leader(self_ptr self, bool wait_local, Ts&&... xs) {
  auto& st = self->state;
  auto p = st.peers.find(st.member->leader());
  if (p == st.peers.end() || !p->second.handle) return not_leader(st);
  auto rp = self->make_response_promise<applied>();
  self->request(caf::actor_cast<proto::raft_actor>(p->second.handle), forward_timeout,
                std::forward<Ts>(xs)...)
      .then(
          [=](applied& a) mutable {
            auto& st = self->state;
            if (!wait_local || st.sm->applied_index() >= a.index)
              rp.deliver(std::move(a));
            else
              st.forwarded.emplace(a.index, std::make_pair(rp, std::move(a)));
          },
          [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

/// Answers once the entry at `index` (appended by this leader) commits and applies.
caf::result<applied> await_commit(self_ptr self, caf::expected<uint64_t> index) {
  if (!index) return index.error();
  auto& st = self->state;
  auto rp = self->make_response_promise<applied>();
  st.waiting.emplace(*index, raft_state::waiter{st.member->term(), rp});
  schedule_flush(self);
  return rp;
}

}  // namespace

caf::expected<std::unique_ptr<core>> restore(storage::raft_log& log, storage::state_machine& sm,
                                             const raft_options& opts,
                                             proto::membership base_members) {
  config cfg;
  cfg.id = opts.node_id;
  if (!opts.join) {  // a joiner starts with no members at all
    cfg.peers.push_back(opts.node_id);
    for (auto& p : opts.peers) cfg.peers.push_back(p.id);
  }
  cfg.election_ticks = opts.election_ticks;
  cfg.replicate_bootstrap = true;
  if (auto err = validate(cfg)) return err;
  auto base = log.base();
  auto entries = log.read(base.index + 1, log.last_index());
  if (!entries) return entries.error();
  if (!entries->empty() && entries->front().index != base.index + 1)
    return make_error(errc::corrupted, "raft log does not continue its snapshot base");
  const auto& hs = log.state();
  auto applied = sm.applied_index();
  if (applied < base.index)
    return make_error(errc::corrupted, "state machine applied " + std::to_string(applied) +
                                           " entries but the log was compacted up to " +
                                           std::to_string(base.index));
  if (applied > log.last_index())
    return make_error(errc::corrupted, "state machine applied " + std::to_string(applied) +
                                           " entries but the raft log ends at " +
                                           std::to_string(log.last_index()));
  hard_state hard{hs.term, hs.voted_for, std::max(hs.commit, applied)};
  hard.commit = std::min(hard.commit, log.last_index());
  auto seed = opts.seed;
  if (seed == 0) {
    std::random_device rd;
    seed = (uint64_t{rd()} << 32) | rd();
  }
  // The initial membership with addresses, so that a member added later can
  // reach every member from the change that adds it.
  if (base_members.empty()) base_members = initial_members(opts);
  auto member = std::make_unique<core>(cfg, hard,
                                       snapshot_meta{base.index, base.term, std::move(base_members)},
                                       std::move(*entries), applied, seed);
  if (opts.peers.empty() && !opts.join) member->campaign();  // a group of one leads at once
  return member;
}

caf::expected<member_parts> open_member(storage::rocks& db, storage::state_machine& sm,
                                        raft_options opts) {
  auto log = storage::raft_log::open(db);
  if (!log) return log.error();
  auto shared_log = std::make_shared<storage::raft_log>(std::move(*log));
  // The membership as of the applied index, if one was ever applied (or came
  // with a snapshot); membership entries after it are in the log.
  auto base_members = storage::read_membership(db);
  if (!base_members) return base_members.error();
  auto member = restore(*shared_log, sm, opts, base_members->value_or(proto::membership{}));
  if (!member) return member.error();
  return member_parts{std::move(opts), std::move(shared_log), std::move(*member)};
}

node_actor::behavior_type raft_actor_impl(self_ptr self, raft_options opts,
                                          std::shared_ptr<storage::rocks> db,
                                          std::shared_ptr<storage::state_machine> sm,
                                          std::shared_ptr<storage::raft_log> log,
                                          std::shared_ptr<core> member) {
  auto& st = self->state;
  st.opts = opts;
  st.db = std::move(db);
  st.sm = std::move(sm);
  st.log = std::move(log);
  st.member = std::move(member);
  st.syncer = std::make_shared<storage::wal_sync>(*st.db);
  sync_links(self);  // links to every member of the restored membership
  self->set_down_handler([=](const caf::down_msg& dm) {
    for (auto& [id, p] : self->state.peers)
      if (p.handle && p.handle.address() == dm.source) {
        std::fprintf(stderr, "raft %s: lost %s (%s)\n", self->state.opts.node_id.c_str(),
                     id.c_str(), self->system().render(dm.reason).c_str());
        p.handle = nullptr;
        proto::forget_member(self->system(), address_of(p.addr));
        self->state.member->peer_restarted(id);
        connect(self, id);  // only if this member dials it; else its hello comes
      }
  });
  self->send(self, caf::tick_atom::value);
  schedule_flush(self);  // a group of one has its election result ready
  return inspector::counted(self, {
      [=](inspect_atom) { return inspector::summary_of(self, details_of(self->state)); },
      [=](propose_atom, command& cmd) -> caf::result<applied> {
        auto& st = self->state;
        if (st.fault) return st.fault;  // fenced: storage_full (507) or storage_unavailable
        if (st.member->current_role() != role::leader) {
          // Decisions of a leader (fire, dispatch, ...) carry its term and are never
          // forwarded: a deposed leader's late decisions must not reach the log.
          if (fenced_by_leader(cmd)) return not_leader(st);
          // Not the leader: hand the proposal to the leader, transparently.
          return forward_to_leader(self, true, propose_atom::value, std::move(cmd));
        }
        return await_commit(self, st.member->propose(std::move(cmd)));
      },
      [=](change_members_atom, membership_change& change) -> caf::result<applied> {
        auto& st = self->state;
        if (st.fault) return st.fault;
        if (st.member->current_role() != role::leader)
          return forward_to_leader(self, false, change_members_atom::value, std::move(change));
        return await_commit(self, propose_change(*st.member, change));
      },
      [=](flush_atom) {
        self->state.flush_scheduled = false;
        if (!self->state.fault) process_ready(self);
      },
      [=](peer_msg_atom, const message& m) {
        auto& st = self->state;
        // Snapshots arrive only as complete chunk streams (receive_chunk). A
        // fenced member hears nothing: it could not persist what it answers.
        if (st.fault || m.to != st.opts.node_id ||
            caf::holds_alternative<snapshot_request>(m.body))
          return;
        if (!accept_from(self, m.from, self->current_sender())) return;
        st.member->step(m);
        schedule_flush(self);
      },
      [=](caf::tick_atom) {
        auto& st = self->state;
        if (!st.fault) {
          st.member->tick();
          process_ready(self);
        }
        self->delayed_send(self, std::chrono::milliseconds(st.opts.tick), caf::tick_atom::value);
      },
      [=](reconnect_atom, const std::string& id) {
        auto p = self->state.peers.find(id);
        if (p != self->state.peers.end() && !p->second.handle) connect(self, id);
      },
      [=](hello_atom, const std::string& id, const std::string& cluster, uint32_t format,
          const caf::actor& raft, const caf::actor& endpoint) -> caf::result<std::string> {
        auto answer = accept_hello(self, id, cluster, format, raft, endpoint);
        if (!answer) return answer.error();
        return *answer;
      },
      [=](raft_status_atom) { return status_of(self->state); },
      [=](snap_chunk_atom, snapshot_chunk& c) -> caf::result<uint64_t> {
        if (self->state.fault) return self->state.fault;
        if (!accept_from(self, c.from, self->current_sender()))
          return make_error(errc::forbidden, "from", "not a member this one links to: " + c.from);
        return receive_chunk(self, c);
      },
      [=](storage_retry_atom, uint64_t generation) { retry_storage(self, generation); },
      [=](subscribe_atom, commit_listener_actor listener) {
        auto& st = self->state;
        self->send(listener, leader_atom::value, st.told);
        st.listeners.push_back(std::move(listener));
      },
  });
}

}  // namespace aisched::raft
