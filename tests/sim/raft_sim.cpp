// The Raft group simulator; see raft_sim.hpp. One seeded generator decides the
// fault profile and every event; the checkers keep global ground truth (every
// (index, term) ever logged, every committed entry, every term's leader) and
// compare each member against it after each event.
#include "tests/sim/raft_sim.hpp"

#include <unistd.h>

#include <algorithm>
#include <caf/sum_type.hpp>
#include <csignal>
#include <cstdarg>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "actors/raft/core.hpp"
#include "proto/errors.hpp"
#include "tests/sim/raft_sim_ingredients.hpp"
#include "tests/sim/raft_sim_members.hpp"

namespace aisched::raft::sim {

// -- replay reporting --------------------------------------------------------

namespace {

char g_replay[1024] = "";

// Async-signal-safe: write(2) only.
void say(const char* s, size_t n) {
  while (n > 0) {
    auto k = ::write(2, s, n);
    if (k <= 0) return;
    s += k;
    n -= static_cast<size_t>(k);
  }
}

extern "C" void on_abort(int) {
  static const char head[] = "\n*** raft simulation aborted (core invariant); replay with:\n    ";
  say(head, sizeof(head) - 1);
  say(g_replay, std::strlen(g_replay));
  say("\n", 1);
}

}  // namespace

void install_abort_reporter(const char*) { std::signal(SIGABRT, on_abort); }

std::string replay_hint(const options& opts) {
  std::ostringstream out;
  out << "AISCHED_SIM_SEED=" << opts.seed << " AISCHED_SIM_NODES=" << opts.nodes
      << " AISCHED_SIM_STEPS=" << opts.steps;
  if (opts.pre_vote) out << " AISCHED_SIM_PRE_VOTE=" << *opts.pre_vote;
  if (opts.check_quorum) out << " AISCHED_SIM_CHECK_QUORUM=" << *opts.check_quorum;
  out << " raft_sim_test --gtest_filter=raft_sim.replay"
      << "   (or: raft_soak --seed " << opts.seed << " --nodes " << opts.nodes << " --steps "
      << opts.steps << " --trace)";
  return out.str();
}

namespace {

using namespace ingredients;

// -- the simulation ----------------------------------------------------------

class simulation {
 public:
  explicit simulation(const options& opts)
      : opts_(opts), rng_(opts.seed), prof_(draw_profile(rng_, opts)) {
    for (size_t i = 0; i < opts_.nodes; ++i) prof_.cfg.peers.push_back("n" + std::to_string(i + 1));
    all_ids_ = prof_.cfg.peers;
    // Spares start empty and join when a membership change adds them.
    for (size_t i = 0; prof_.membership > 0 && i < 2; ++i)
      all_ids_.push_back("n" + std::to_string(opts_.nodes + i + 1));
    for (auto& id : all_ids_) {
      member m;
      m.id = id;
      m.c = std::make_unique<core>(config_for(id), rng_.next());
      members_.push_back(std::move(m));
    }
    liveness_bound_ =
        opts_.liveness_ticks > 0 ? opts_.liveness_ticks : 40 * prof_.cfg.election_ticks;
  }

  result run() {
    result res;
    res.profile = prof_.describe();
    trace("profile %s", res.profile.c_str());
    try {
      for (step_ = 0; step_ < opts_.steps; ++step_) {
        chaos_step();
        if (opts_.calm_every > 0 && (step_ + 1) % opts_.calm_every == 0) calm_phase();
      }
      calm_phase();
    } catch (const sim_failure& e) {
      res.ok = false;
      std::ostringstream out;
      out << e.what() << " (step " << step_ << ", tick " << now_ << ")";
      res.failure = out.str();
    }
    stats_.committed = committed_.size();
    res.stats = stats_;
    return res;
  }

 private:
  // -- helpers ---------------------------------------------------------------

  raft::config config_for(const std::string& id) const {
    auto cfg = prof_.cfg;
    cfg.id = id;
    if (std::find(cfg.peers.begin(), cfg.peers.end(), id) == cfg.peers.end()) cfg.peers.clear();
    return cfg;
  }

  __attribute__((format(printf, 2, 3))) void trace(const char* fmt, ...) {
    if (opts_.trace == nullptr) return;
    std::fprintf(opts_.trace, "[%6zu t=%4llu] ", step_, static_cast<unsigned long long>(now_));
    va_list args;
    va_start(args, fmt);
    // va_start is right above; the analyzer misreads member variadics.
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized)
    std::vfprintf(opts_.trace, fmt, args);
    va_end(args);
    std::fputc('\n', opts_.trace);
  }

  [[noreturn]] void fail(const std::string& what) { throw sim_failure(what); }

  member& by_id(const std::string& id) {
    for (auto& m : members_)
      if (m.id == id) return m;
    fail("unknown member " + id);
  }

  bool linked(const std::string& a, const std::string& b) {
    return by_id(a).group == by_id(b).group;
  }

  std::vector<size_t> due_packets() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < net_.size(); ++i)
      if (net_[i].deliver_at <= now_) out.push_back(i);
    return out;
  }

  template <class Pred>
  member* random_member(Pred pred) {
    std::vector<member*> xs;
    for (auto& m : members_)
      if (pred(m)) xs.push_back(&m);
    return xs.empty() ? nullptr : xs[rng_.below(xs.size())];
  }

  // -- chaos -----------------------------------------------------------------

  void chaos_step() {
    auto due = due_packets();
    if (!due.empty() && rng_.chance(0.85)) {
      deliver(due[rng_.below(due.size())]);
      return;
    }
    auto roll = static_cast<double>(rng_.below(1'000'000)) / 1'000'000.0;
    auto take = [&](double p) {
      if (roll < p) return true;
      roll -= p;
      return false;
    };
    if (take(prof_.crash * 10))
      crash_random();
    else if (take(0.02))
      restart_random();
    else if (take(prof_.partition * 10))
      partition();
    else if (take(prof_.partition * 20))
      heal();
    else if (take(prof_.compact * 10))
      compact_random();
    else if (take(prof_.membership * 10))
      change_membership();
    else if (take(0.25))
      propose_random();
    else if (take(0.15))
      flush_random();
    else
      tick_all();
  }

  void deliver(size_t i) {
    auto p = std::move(net_[i]);
    net_[i] = std::move(net_.back());
    net_.pop_back();
    auto& dst = by_id(p.m.to);
    if (!dst.c || !linked(p.m.from, p.m.to)) {
      ++stats_.dropped;
      return;
    }
    ++stats_.delivered;
    if (opts_.trace != nullptr)
      trace("%s -> %s %s", p.m.from.c_str(), p.m.to.c_str(), describe(p.m.body).c_str());
    dst.c->step(p.m);
    after_input(dst);
  }

  void tick_all() {
    // Time is global, but a member may miss a tick: clocks drift, processes
    // pause. Randomized timeouts alone would keep members in lockstep.
    ++now_;
    ++stats_.ticks;
    for (auto& m : members_) {
      if (!m.c || rng_.chance(prof_.tick_skip)) continue;
      m.c->tick();
      after_input(m);
    }
  }

  void propose_random() {
    // Mostly on a leader; sometimes on anyone, to check the refusal.
    auto* m = random_member([](member& x) { return x.c && x.c->current_role() == role::leader; });
    if (m == nullptr || rng_.chance(0.1))
      m = random_member([](member& x) { return x.c != nullptr; });
    if (m == nullptr) return;
    auto key = "p" + std::to_string(++proposal_seq_);
    bool leads = m->c->current_role() == role::leader;
    auto res = m->c->propose(make_command(key));
    if (leads != static_cast<bool>(res)) fail(m->id + ": propose succeeded iff leading violated");
    if (!res && view(res.error()).code != errc::not_leader)
      fail(m->id + ": a refused proposal must say not_leader");
    if (res) {
      ++stats_.proposals;
      trace("%s proposes %s at %llu", m->id.c_str(), key.c_str(),
            static_cast<unsigned long long>(*res));
    }
    after_input(*m);
  }

  void change_membership() {
    auto* m = random_member([](member& x) { return x.c && x.c->current_role() == role::leader; });
    if (m == nullptr) return;
    auto roll_kind = rng_.next();
    auto out = propose_random_change(*m->c, all_ids_, 2, roll_kind, rng_.next());
    if (out.what.rfind("refused", 0) == 0) fail(m->id + ": " + out.what);
    if (out.proposed) {
      ++stats_.membership_changes;
      if (out.removes_leader) ++stats_.leader_removals;
      trace("%s proposes: %s", m->id.c_str(), out.what.c_str());
    }
    after_input(*m);
  }

  void flush_random() {
    if (auto* m = random_member([](member& x) { return x.c && x.c->has_ready(); }))
      process_ready(*m);
  }

  void crash_random() {
    // Leaders go down more often than their share: elections right after a
    // leader's partial replication are where Raft's subtle cases live
    // (Figure 8 needs two such rounds).
    member* m = nullptr;
    if (rng_.chance(prof_.leader_bias))
      m = random_member([](member& x) { return x.c && x.c->current_role() == role::leader; });
    if (m == nullptr) m = random_member([](member& x) { return x.c != nullptr; });
    if (m == nullptr) return;
    trace("%s crashes (unpersisted state lost)", m->id.c_str());
    m->c.reset();
    ++stats_.crashes;
    // As the raft actor does when a peer's connection drops.
    for (auto& other : members_)
      if (other.c) other.c->peer_restarted(m->id);
  }

  void restart(member& m) {
    // Only what the readies made durable comes back.
    m.c = std::make_unique<core>(config_for(m.id), m.d.hard, m.d.snap, m.d.log, m.d.sm_index,
                                 rng_.next());
    if (m.c->commit_index() > committed_.size())
      fail(m.id + ": restored commit index beyond anything committed");
    m.checked_commit = std::max(m.checked_commit, m.c->commit_index());
    trace("%s restarts: term %llu commit %llu last %llu", m.id.c_str(),
          static_cast<unsigned long long>(m.c->term()),
          static_cast<unsigned long long>(m.c->commit_index()),
          static_cast<unsigned long long>(m.c->last_index()));
    check_member(m);
  }

  void restart_random() {
    if (auto* m = random_member([](member& x) { return x.c == nullptr; })) restart(*m);
  }

  void partition() {
    ++stats_.partitions;
    if (rng_.chance(0.5)) {  // cut one member off, often the leader
      auto lonely = rng_.below(members_.size());
      if (rng_.chance(prof_.leader_bias)) {
        for (size_t i = 0; i < members_.size(); ++i)
          if (members_[i].c && members_[i].c->current_role() == role::leader) lonely = i;
      }
      for (size_t i = 0; i < members_.size(); ++i) members_[i].group = i == lonely ? 1 : 0;
    } else {  // a random split
      for (auto& m : members_) m.group = static_cast<int>(rng_.below(2));
    }
    std::string desc;
    for (auto& m : members_) desc += m.id + ":" + std::to_string(m.group) + " ";
    trace("partition %s", desc.c_str());
  }

  void heal() {
    for (auto& m : members_) m.group = 0;
    trace("heal");
  }

  void compact_random() {
    auto* m = random_member(
        [](member& x) { return x.c && x.c->applied_index() > x.c->snapshot().index; });
    if (m == nullptr) return;
    auto base = m->c->snapshot().index;
    auto index = base + 1 + rng_.below(m->c->applied_index() - base);
    m->c->compact(index);
    // The driver's half: drop the durable prefix, remember the base.
    if (index > m->d.last_index() || index < m->d.snap.index)
      fail(m->id + ": compacting entries that are not durable");
    m->d.log.erase(m->d.log.begin(),
                   m->d.log.begin() + static_cast<std::ptrdiff_t>(index - m->d.snap.index));
    m->d.snap = m->c->snapshot();
    ++stats_.compactions;
    trace("%s compacts up to %llu", m->id.c_str(), static_cast<unsigned long long>(index));
    check_member(*m);
  }

  // -- calm phases: liveness -------------------------------------------------

  void calm_phase() {
    ++stats_.calm_phases;
    calm_ = true;
    heal();
    for (auto& m : members_)
      if (!m.c) restart(m);
    trace("calm phase %llu begins", static_cast<unsigned long long>(stats_.calm_phases));
    probes_.clear();
    probed_terms_.clear();
    live_ = false;
    // The bound: elections, plus moving the backlog to a majority at one
    // window of appends per round trip (a batch of 1 with a window of 1 over
    // a slow network takes that long, and should).
    uint64_t backlog = 0;
    uint64_t max_last = 0;
    uint64_t min_commit = ~uint64_t{0};
    for (auto& m : members_) {
      backlog = std::max(backlog, m.c->last_index() - m.c->commit_index());
      max_last = std::max(max_last, m.c->last_index());
      min_commit = std::min(min_commit, m.c->commit_index());
    }
    // Membership changes can make a lagging member needed for commits (a
    // removal leaves it in the majority): count what the furthest behind lacks.
    if (prof_.membership > 0) backlog = max_last - std::min(min_commit, max_last);
    auto per_round_trip = prof_.cfg.max_entries_per_append * prof_.cfg.max_inflight_appends;
    auto bound = liveness_bound_ +
                 static_cast<int>((backlog / per_round_trip + 1) * (2 * prof_.max_delay + 1));
    int ticks = 0;
    for (;;) {
      for (auto& m : members_) process_ready(m);
      for (auto due = due_packets(); !due.empty(); due = due_packets())
        deliver(due[rng_.below(due.size())]);
      for (auto& m : members_) {
        if (live_ || m.c->current_role() != role::leader ||
            !probed_terms_.insert(m.c->term()).second)
          continue;
        auto key = "live" + std::to_string(stats_.calm_phases) + "-" + std::to_string(m.c->term());
        if (!m.c->propose(make_command(key))) fail(m.id + ": a leader refused a proposal");
        probes_.insert(key);
        trace("%s proposes probe %s", m.id.c_str(), key.c_str());
        after_input(m);
      }
      if (live_) break;
      if (ticks >= bound) {
        std::ostringstream out;
        out << "liveness: no leader committed a new proposal within " << bound
            << " ticks after healing (backlog " << backlog << "; roles:";
        for (auto& m : members_) {
          out << " " << m.id << "=" << to_string(m.c->current_role()) << "@" << m.c->term()
              << " last " << m.c->last_index() << " commit " << m.c->commit_index() << " members{";
          for (auto& x : m.c->membership()) out << x.id << (x.voter ? "" : "(learner)") << ",";
          out << "}@" << m.c->membership_index();
          for (auto& [peer, pr] : m.c->peer_progress())
            out << " [" << peer << " " << to_string(pr.state) << " match " << pr.match << " next "
                << pr.next << "]";
        }
        out << ")";
        fail(out.str());
      }
      tick_all();
      ++ticks;
    }
    stats_.max_recovery_ticks = std::max(stats_.max_recovery_ticks, ticks);
    trace("calm phase over after %d ticks", ticks);
    calm_ = false;
  }

  // -- driving one member ----------------------------------------------------

  void after_input(member& m) {
    check_member(m);
    if (calm_ || rng_.chance(prof_.flush)) process_ready(m);
  }

  void process_ready(member& m) {
    if (!m.c || !m.c->has_ready()) return;
    auto rd = m.c->take_ready();
    persist(m, rd);
    for (auto& msg : rd.messages) {
      auto* snap = caf::get_if<snapshot_request>(&msg.body);
      if (snap != nullptr && prof_.snapshot_at_applied) {
        snap->last_index = m.c->applied_index();  // at or past the base: applied is committed
        snap->last_term = *m.c->term_at(snap->last_index);
        snap->members = m.c->membership_at(snap->last_index);
      }
      send(std::move(msg));
    }
    apply(m, rd.committed);
    if (rd.role)
      trace("%s is %s of term %llu (leader '%s')", m.id.c_str(), to_string(rd.role->role),
            static_cast<unsigned long long>(rd.role->term), rd.role->leader.c_str());
    m.c->advance(rd);
    check_member(m);
  }

  void persist(member& m, const ready& rd) {
    auto& d = m.d;
    auto durable_commit = d.hard.commit;
    if (rd.snapshot) {
      // The state machine jumps; its content is the committed prefix.
      auto s = *rd.snapshot;
      if (s.index > committed_.size() || committed_[s.index - 1].first != s.term)
        fail(m.id + ": snapshot of an entry that is not committed");
      if (s.index <= d.sm_index) fail(m.id + ": snapshot does not move the state machine forward");
      d.log.clear();
      d.snap = s;
      stats_.applied += s.index - d.sm_index;
      d.sm_index = s.index;
      ++stats_.snapshots;
      trace("%s installs snapshot %llu", m.id.c_str(), static_cast<unsigned long long>(s.index));
    }
    if (rd.truncate_from) {
      auto from = *rd.truncate_from;
      if (from <= durable_commit || from <= d.snap.index)
        fail(m.id + ": truncating durable committed entries");
      if (from <= d.last_index()) d.log.resize(from - d.snap.index - 1);
      ++stats_.truncations;
    }
    for (auto& e : rd.entries) {
      if (e.index != d.last_index() + 1)
        fail(m.id + ": ready entries do not continue the durable log");
      if (!rd.snapshot && e.index <= durable_commit)
        fail(m.id + ": ready rewrites a durable committed entry");
      d.log.push_back(e);
    }
    if (rd.hard) {
      auto& h = *rd.hard;
      if (h.term < d.hard.term) fail(m.id + ": persisted term moves back");
      if (h.term == d.hard.term && !d.hard.voted_for.empty() && h.voted_for != d.hard.voted_for)
        fail(m.id + ": vote changed within a term");
      if (h.commit < d.hard.commit) fail(m.id + ": persisted commit index moves back");
      d.hard = h;
    }
    if (d.hard.commit > d.last_index())
      fail(m.id + ": durable commit index beyond the durable log");
  }

  void send(message msg) {
    if (!linked(msg.from, msg.to) || (!calm_ && rng_.chance(prof_.drop))) {
      ++stats_.dropped;
      return;
    }
    auto delay = [&] { return now_ + rng_.below(prof_.max_delay + 1); };
    if (!calm_ && rng_.chance(prof_.dup)) {
      ++stats_.duplicated;
      net_.push_back(packet{msg, delay()});
    }
    net_.push_back(packet{std::move(msg), delay()});
  }

  void apply(member& m, const std::vector<proto::log_entry>& entries) {
    for (auto& e : entries) {
      if (e.index != m.d.sm_index + 1) fail(m.id + ": applied entries skip or repeat an index");
      if (e.index > committed_.size()) fail(m.id + ": applying an entry not known to be committed");
      auto& truth = committed_[e.index - 1];
      if (truth.first != e.term || truth.second != key_of(e.cmd))
        fail(m.id + ": state machine safety: applies a different entry at index " +
             std::to_string(e.index));
      m.d.sm_index = e.index;
      ++stats_.applied;
    }
  }

  // -- checkers --------------------------------------------------------------

  void check_member(member& m) {
    if (!m.c) return;
    auto& c = *m.c;
    c.check_invariants();
    stats_.max_term = std::max(stats_.max_term, c.term());
    // Election safety: at most one leader per term, over the whole history.
    if (c.current_role() == role::leader) {
      auto [it, fresh] = leaders_.emplace(c.term(), m.id);
      if (!fresh && it->second != m.id)
        fail("election safety: " + it->second + " and " + m.id + " both lead term " +
             std::to_string(c.term()));
      if (fresh) {
        ++stats_.leaders;
        check_leader_completeness(m);
      }
    }
    // Log matching: every (index, term) ever logged anywhere names one command
    // and one predecessor term; by induction equal (index, term) means equal
    // prefixes. Only entries changed since the last ready need a look.
    auto snap = c.snapshot();
    for (auto i = std::max(c.unstable_index(), snap.index + 1); i <= c.last_index(); ++i) {
      auto& e = c.entries()[i - snap.index - 1];
      auto prev_term = *c.term_at(i - 1);
      auto [it, fresh] =
          logged_.emplace(std::make_pair(i, e.term), std::make_pair(prev_term, key_of(e.cmd)));
      if (!fresh && it->second != std::make_pair(prev_term, key_of(e.cmd)))
        fail("log matching: " + m.id + " holds a different entry at index " + std::to_string(i) +
             " term " + std::to_string(e.term));
    }
    // Committed prefixes agree with each other (the truth is their union).
    for (auto i = m.checked_commit + 1; i <= c.commit_index(); ++i) {
      if (i <= snap.index) {  // jumped by a snapshot: must be known already
        if (i > committed_.size()) fail(m.id + ": commit index jumped past anything committed");
        continue;
      }
      auto rec = std::make_pair(*c.term_at(i), key_of(c.entries()[i - snap.index - 1].cmd));
      if (i <= committed_.size()) {
        if (committed_[i - 1] != rec)
          fail("state machine safety: " + m.id + " commits a different entry at index " +
               std::to_string(i));
      } else if (i == committed_.size() + 1) {
        committed_.push_back(rec);
        committed_by_term_.push_back(c.term());
        if (probes_.count(rec.second) > 0) live_ = true;
      } else {
        fail(m.id + ": commit index skips entries nobody committed");
      }
    }
    m.checked_commit = std::max(m.checked_commit, c.commit_index());
    if (auto what = check_one_uncommitted_change(c, committed_.size()); !what.empty()) fail(what);
    check_electable();
  }

  // A member's log as an election would see it: in memory while up, on disk
  // while crashed (what it would restart with).
  struct log_view {
    uint64_t snap_index;
    uint64_t last_index;
    uint64_t last_term;
    const member* m;
    proto::membership members;  // the member's own view
    bool can_campaign;

    std::optional<uint64_t> term_at(uint64_t i) const {
      if (m->c) return m->c->term_at(i);
      auto& d = m->d;
      if (i == d.snap.index) return d.snap.term;
      if (i < d.snap.index || i > d.last_index()) return std::nullopt;
      return d.log[i - d.snap.index - 1].term;
    }
    /// Compacted entries were applied, hence committed: held.
    bool holds(uint64_t i, uint64_t term) const { return i <= snap_index || term_at(i) == term; }
    bool at_least_as_up_to_date_as(const log_view& o) const {
      return last_term > o.last_term || (last_term == o.last_term && last_index >= o.last_index);
    }
  };

  log_view view_of(const member& m) const {
    if (m.c) return {m.c->snapshot().index, m.c->last_index(), m.c->last_term(), &m,
                     m.c->membership(), m.c->can_campaign()};
    auto& d = m.d;
    auto last_term = d.log.empty() ? d.snap.term : d.log.back().term;
    auto base = d.snap.members;
    if (base.empty())
      for (auto& id : config_for(m.id).peers) base.push_back(proto::member_info{id, true, "", ""});
    auto commit = std::max({d.hard.commit, d.sm_index, d.snap.index});  // as a restart computes it
    return {d.snap.index, d.last_index(), last_term, &m, latest_membership(d.log, base),
            could_campaign(d.log, d.snap.index, base, commit, m.id)};
  }

  void check_electable() {
    // The argument behind Leader Completeness (§5.4.3), checked on the state:
    // a member lacking a committed entry cannot collect a quorum of votes on
    // log comparison alone. (Every member of the majority that committed the
    // entry at term U has a last term >= U and outranks it.) Checked after
    // each event, this flags an unsafe commit -- e.g. an earlier-term entry
    // committed by counting replicas, Figure 8 -- the moment it happens
    // rather than after the unlucky election that would overwrite it. Probed
    // at each member's commit index and at the highest one.
    if (committed_.empty()) return;
    std::vector<log_view> views;
    std::set<uint64_t> indexes{committed_.size()};
    for (auto& m : members_) {
      views.push_back(view_of(m));
      if (m.c && m.c->commit_index() > 0) indexes.insert(m.c->commit_index());
    }
    for (auto i : indexes) {
      auto term = committed_[i - 1].first;
      for (auto& lacking : views) {
        if (lacking.holds(i, term)) continue;
        // Campaigns need a majority of the voters in the candidate's own view
        // (members ignore non-members only while they hear from a leader:
        // not counted on).
        auto& self = lacking.m->id;
        if (!lacking.can_campaign) continue;
        size_t votes = 0;  // members whose vote its log would win, itself included
        size_t voters = 0;
        for (auto& voter : views) {
          if (!proto::is_voter(lacking.members, voter.m->id)) continue;
          ++voters;
          if (lacking.at_least_as_up_to_date_as(voter)) ++votes;
        }
        if (votes >= voters / 2 + 1)
          fail("leader completeness at risk: " + lacking.m->id + " lacks committed entry " +
               std::to_string(i) + " (term " + std::to_string(term) + ") but its log is as up" +
               " to date as a quorum's, so it could be elected and overwrite it");
      }
    }
  }

  void check_leader_completeness(member& m) {
    // Every entry committed in an earlier term is in the new leader's log
    // (§5.4.3). A leader of an older term may still win after a newer leader
    // committed (a late vote grant): those commits are not its business.
    auto& c = *m.c;
    for (uint64_t i = c.snapshot().index + 1; i <= committed_.size(); ++i) {
      if (committed_by_term_[i - 1] >= c.term()) continue;
      auto t = c.term_at(i);
      if (!t || *t != committed_[i - 1].first)
        fail("leader completeness: " + m.id + ", leader of term " + std::to_string(c.term()) +
             ", lacks committed entry " + std::to_string(i));
    }
  }

  // -- state -----------------------------------------------------------------

  options opts_;
  rng rng_;
  profile prof_;
  std::vector<member> members_;
  std::vector<std::string> all_ids_;  // initial members, then spares
  std::vector<packet> net_;
  uint64_t now_ = 0;
  size_t step_ = 0;
  bool calm_ = false;
  int liveness_bound_ = 0;
  uint64_t proposal_seq_ = 0;
  sim::stats stats_;

  // ground truth for the checkers
  std::map<uint64_t, std::string> leaders_;  // term -> leader
  std::map<std::pair<uint64_t, uint64_t>, std::pair<uint64_t, std::string>> logged_;
  std::vector<std::pair<uint64_t, std::string>> committed_;  // index - 1 -> (term, key)
  // index - 1 -> the term of the member that first showed the commit (at or
  // after the term in which the entry was committed)
  std::vector<uint64_t> committed_by_term_;
  std::set<std::string> probes_;
  std::set<uint64_t> probed_terms_;
  bool live_ = false;
};

}  // namespace

result run(const options& opts) {
  auto hint = replay_hint(opts);
  std::snprintf(g_replay, sizeof(g_replay), "%s", hint.c_str());
  simulation sim{opts};
  return sim.run();
}

}  // namespace aisched::raft::sim
