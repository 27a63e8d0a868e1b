// A Raft group on CAF's test coordinator; see raft_group.hpp.
#include "raft_group.hpp"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>

#include <caf/actor_clock.hpp>
#include <caf/send.hpp>

#include "common/splitmix.hpp"
#include "proto/errors.hpp"
#include "storage/rocks.hpp"
#include "storage/state_machine.hpp"
#include "support/single_node.hpp"

namespace aisched::test {

namespace {

/// SplitMix64's step on `state`: uniform in [0, below) (0 when below is 0).
uint64_t draw(uint64_t& state, uint64_t below) {
  auto z = splitmix64(state);
  state += 0x9e3779b97f4a7c15ULL;  // the generator's counter
  return below == 0 ? 0 : z % below;
}

/// A raft actor exactly as raft_actor_impl makes it, whose mailbox refuses
/// what another member's raft actor sends across a cut (raft_group::cut) and
/// holds back what it sends over a delayed link (raft_group::delay).
/// Dropping or holding at the receiver, by the sender's identity, leaves
/// every handle the real one: the members hold each other's actors,
/// current_sender() is the peer's raft actor, and accept_from's and the
/// hello's checks see what they see over a real connection. A forwarding
/// actor between the members would not: the dialer would hold the forwarder
/// while the peer's messages (sent to the handle the hello carried) come from
/// the peer itself. For the same reason a held message goes back into this
/// mailbox as the very element that arrived (sender, request id and all), on
/// the actor clock (actor_clock::schedule_message), not re-sent by anyone.
class cuttable_member : public raft_group::member_impl {
 public:
  cuttable_member(caf::actor_config& cfg, std::shared_ptr<raft_group::link_table> links,
                  size_t index, raft::raft_options opts, std::shared_ptr<storage::rocks> db,
                  std::shared_ptr<storage::state_machine> sm,
                  std::shared_ptr<storage::raft_log> log, std::shared_ptr<raft::core> member)
      : raft_group::member_impl(cfg),
        links_(std::move(links)),
        index_(index),
        opts_(std::move(opts)),
        db_(std::move(db)),
        sm_(std::move(sm)),
        log_(std::move(log)),
        member_(std::move(member)) {}

  behavior_type make_behavior() override {
    // Moved into the state: the database closes when the actor terminates
    // (raft_group::stop), not when its last handle goes.
    return raft::raft_actor_impl(this, std::move(opts_), std::move(db_), std::move(sm_),
                                 std::move(log_), std::move(member_));
  }

  void enqueue(caf::mailbox_element_ptr ptr, caf::execution_unit* eu) override {
    if (ptr) {
      if (auto back = held_.find(ptr.get()); back != held_.end()) {
        // Back from its delay: judged when it arrived, delivered now unless
        // its sender's process is gone (destroyed: a request times out).
        held_.erase(back);
        if (links_->member_of.count(ptr->sender->id()) == 0) return;
      } else if (dropped(*ptr)) {
        return;  // destroyed unanswered: a request times out
      } else if (auto d = delay_of(*ptr); d.count() > 0) {
        hold(std::move(ptr), d);
        return;
      }
    }
    raft_group::member_impl::enqueue(std::move(ptr), eu);
  }

 private:
  /// The member whose raft actor sent `x`, unless `x` is a down or exit
  /// message (a dead peer is still noticed) or came from no member's raft.
  std::optional<size_t> peer_of(const caf::mailbox_element& x) const {
    if (!x.sender) return std::nullopt;
    auto& content = x.content();
    if (content.match_elements<caf::down_msg>() || content.match_elements<caf::exit_msg>())
      return std::nullopt;
    auto it = links_->member_of.find(x.sender->id());
    if (it == links_->member_of.end()) return std::nullopt;
    return it->second;
  }

  bool dropped(const caf::mailbox_element& x) {
    if (links_->cut.empty() && links_->lossy.empty()) return false;
    auto from = peer_of(x);
    if (!from) return false;
    if (links_->cut.count({*from, index_}) > 0) return true;
    auto l = links_->lossy.find({*from, index_});
    return l != links_->lossy.end() && draw(links_->loss_draws, 1'000) < l->second;
  }

  /// How long `x` is held back: 0 unless it comes over a delayed link; else a
  /// draw of its own, in the order messages arrive (deterministic on the
  /// test coordinator).
  std::chrono::milliseconds delay_of(const caf::mailbox_element& x) {
    if (links_->delayed.empty() && links_->latency.count() == 0)
      return std::chrono::milliseconds(0);
    auto from = peer_of(x);
    if (!from || *from == index_) return std::chrono::milliseconds(0);  // its own: no link
    auto d = links_->delayed.find({*from, index_});
    if (d == links_->delayed.end()) return links_->latency;
    auto [lo, hi] = d->second;
    auto span = static_cast<uint64_t>((hi - lo).count()) + 1;
    return lo + std::chrono::milliseconds(draw(links_->delay_draws, span));
  }

  /// Puts `x` back into this mailbox `d` from now, on the actor clock; the
  /// clock holds this actor meanwhile (a member stopped by then bounces it).
  void hold(caf::mailbox_element_ptr x, std::chrono::milliseconds d) {
    held_.insert(x.get());
    auto& c = clock();
    c.schedule_message(c.now() + d, caf::strong_actor_ptr{ctrl()}, std::move(x));
  }

  std::shared_ptr<raft_group::link_table> links_;
  std::set<const caf::mailbox_element*> held_;  // the elements out on a delay
  size_t index_;
  raft::raft_options opts_;
  std::shared_ptr<storage::rocks> db_;
  std::shared_ptr<storage::state_machine> sm_;
  std::shared_ptr<storage::raft_log> log_;
  std::shared_ptr<raft::core> member_;
};

}  // namespace

raft_group::raft_group(size_t size, uint64_t snapshot_every, uint64_t seed,
                       disk_fault_fn disk_fault)
    : snapshot_every_(snapshot_every),
      seed_(seed),
      disk_fault_(std::move(disk_fault)),
      directory_(std::make_shared<std::map<std::string, raft::node_actor>>()),
      links_(std::make_shared<link_table>()) {
  links_->delay_draws = seed;
  links_->loss_draws = ~seed;
  for (size_t i = 0; i < size; ++i) {
    member m;
    m.id = "n" + std::to_string(i + 1);
    m.dir = make_dir();
    members_.push_back(std::move(m));
  }
  for (size_t i = 0; i < size; ++i) start(i);
  sched.run();
}

raft_group::~raft_group() {
  // The fixture's destructor fires every pending timer until none is left;
  // raft actors tick forever, so they must be gone (and their databases closed)
  // before it runs.
  while (!frozen_.empty()) thaw_actor(frozen_.back());
  for (size_t i = 0; i < members_.size(); ++i)
    if (members_[i].raft) stop(i);  // ended ones too: their databases close
  directory_->clear();
  for (auto& m : members_) {
    std::error_code ec;
    std::filesystem::remove_all(m.dir, ec);
  }
}

std::string raft_group::address(size_t i) { return "127.0.0.1:" + std::to_string(7401 + i); }

std::string raft_group::make_dir() {
  // RocksDB syncs on every commit: on a disk that is most of a simulated
  // seed's wall time, so tmpfs unless TMPDIR names another place (no test
  // here loses power; disk faults are injected, fault_fs.hpp).
  std::string base = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/dev/shm";
  for (const auto& dir : {base, std::string("/tmp")}) {
    std::string tmpl = dir + "/aisched-raft-group-test-XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) return tmpl;
  }
  throw std::runtime_error("mkdtemp failed under " + base + " and /tmp");
}

size_t raft_group::add_joiner() {
  member m;
  m.id = "n" + std::to_string(members_.size() + 1);
  m.dir = make_dir();
  m.joiner = true;
  members_.push_back(std::move(m));
  start(members_.size() - 1);
  sched.run();
  return members_.size() - 1;
}

caf::expected<proto::applied> raft_group::change_members(size_t i,
                                                         proto::membership_change change) {
  caf::expected<proto::applied> out{caf::make_error(caf::sec::runtime_error, "no answer")};
  auto h = self->request(caf::actor_cast<proto::raft_actor>(members_.at(i).raft), caf::infinite,
                         proto::change_members_atom::value, std::move(change));
  sched.run();
  if (self->mailbox().empty()) {
    ADD_FAILURE() << "raft did not answer";
    return out;
  }
  h.receive([&](proto::applied& a) { out = std::move(a); },
            [&](caf::error& e) { out = std::move(e); });
  observe();
  return out;
}

raft::raft_options raft_group::options_for(size_t i) const {
  raft::raft_options opts;
  opts.node_id = members_[i].id;
  opts.join = members_[i].joiner;
  opts.cluster_addr = address(i);
  for (size_t j = 0; j < members_.size(); ++j) {
    auto& m = members_[j];
    if (m.id != opts.node_id && !m.joiner && !opts.join)
      opts.peers.push_back({m.id, "127.0.0.1", static_cast<uint16_t>(7401 + j)});
  }
  opts.tick = tick.count();
  opts.snapshot_every = snapshot_every_;
  opts.seed = seed_ + i;  // distinct timeouts, the same in every run
  // A weak reference: the directory holds the actors' handles.
  std::weak_ptr<std::map<std::string, raft::node_actor>> dir = directory_;
  opts.resolve_peer = [dir](const std::string& id) -> raft::node_actor {
    auto d = dir.lock();
    if (!d) return {};
    auto it = d->find(id);
    return it == d->end() ? raft::node_actor{} : it->second;
  };
  return opts;
}

std::optional<caf::error> raft_group::ended(size_t i) const {
  auto& m = members_.at(i);
  if (!m.raft || !m.ended) return std::nullopt;
  return *m.ended;
}

void raft_group::start(size_t i) {
  auto& m = members_.at(i);
  storage::open_options db_opts;
  if (disk_fault_) db_opts.fault = [f = disk_fault_, i] { return f(i); };
  auto db = storage::rocks::open(m.dir, std::move(db_opts));
  if (!db) throw std::runtime_error("rocks::open: " + sys.render(db.error()));
  m.db = std::move(*db);
  auto sm = storage::state_machine::open(*m.db);
  if (!sm) throw std::runtime_error("state_machine::open: " + sys.render(sm.error()));
  m.sm = std::move(*sm);
  auto parts = raft::open_member(*m.db, *m.sm, options_for(i));
  if (!parts) throw std::runtime_error("raft::open_member: " + sys.render(parts.error()));
  m.raft = sys.spawn<cuttable_member>(links_, i, parts->opts, m.db, m.sm, parts->log,
                                      parts->member);
  m.frozen = false;
  m.ended = std::make_shared<std::optional<caf::error>>();
  caf::actor_cast<caf::actor>(m.raft)->attach_functor([ended = m.ended](const caf::error& why) {
    if (why != caf::make_error(caf::exit_reason::kill)) *ended = why;  // not by stop()
  });
  links_->member_of[m.raft.id()] = i;
  (*directory_)[m.id] = m.raft;
}

void raft_group::stop(size_t i) {
  auto& m = members_.at(i);
  if (m.frozen) thaw(i);
  directory_->erase(m.id);
  links_->member_of.erase(m.raft.id());
  caf::anon_send_exit(m.raft, caf::exit_reason::kill);
  sched.run();  // the exit; the actor's state (holding the database) goes with it
  m.raft = nullptr;
  m.ended.reset();
  m.sm.reset();
  m.db.reset();
}

void raft_group::cut(size_t from, size_t to) { links_->cut.insert({from, to}); }

void raft_group::delay(size_t from, size_t to, std::chrono::milliseconds lo,
                       std::chrono::milliseconds hi) {
  links_->delayed[{from, to}] = {lo, std::max(lo, hi)};
}

void raft_group::set_latency(std::chrono::milliseconds d) { links_->latency = d; }

std::chrono::milliseconds raft_group::next_step() {
  if (links_->latency.count() == 0) return tick;
  auto& due = sched.clock().schedule();
  if (due.empty()) return tick;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(due.begin()->first -
                                                           sched.clock().now());
  return std::clamp(left, std::chrono::milliseconds(1), tick);
}

void raft_group::heal_all() {
  links_->cut.clear();
  links_->lossy.clear();
  links_->delayed.clear();
}

void raft_group::heal(size_t from, size_t to) {
  links_->cut.erase({from, to});
  links_->lossy.erase({from, to});
  links_->delayed.erase({from, to});
}

void raft_group::lose(size_t from, size_t to, uint32_t permille) {
  links_->lossy[{from, to}] = std::min<uint32_t>(permille, 1'000);
}

void raft_group::freeze(size_t i) {
  auto& m = members_.at(i);
  caf::anon_send(m.raft, proto::flush_atom::value);  // mail, so that it is in the queue
  freeze_actor(caf::actor_cast<caf::actor>(m.raft));
  m.frozen = true;
}

void raft_group::thaw(size_t i) {
  auto& m = members_.at(i);
  if (!m.frozen) return;
  thaw_actor(caf::actor_cast<caf::actor>(m.raft));
  m.frozen = false;
}

namespace {

caf::resumable* job_of(const caf::actor& a) {
  return dynamic_cast<caf::resumable*>(caf::actor_cast<caf::abstract_actor*>(a));
}

}  // namespace

void raft_group::freeze_actor(const caf::actor& a) {
  // An actor with mail waiting is in the coordinator's job queue exactly once;
  // taken out, it is never scheduled again (new mail finds it "not blocked")
  // until put back.
  auto job = job_of(a);
  auto it = std::find(sched.jobs.begin(), sched.jobs.end(), job);
  if (job == nullptr || it == sched.jobs.end())
    throw std::runtime_error("freeze: actor not scheduled");
  sched.jobs.erase(it);
  frozen_.push_back(a);
}

void raft_group::thaw_actor(const caf::actor& a) {
  auto it = std::find(frozen_.begin(), frozen_.end(), a);
  if (it == frozen_.end()) return;
  sched.jobs.push_back(job_of(a));
  frozen_.erase(it);
}

void raft_group::run_for(std::chrono::milliseconds total) {
  run_until([] { return false; }, total);
}

int raft_group::agreed_leader() {
  int leader = -1;
  for (size_t i = 0; i < members_.size(); ++i) {
    if (!running(i) || members_[i].frozen) continue;
    if (state(i).member->current_role() != raft::role::leader) continue;
    if (leader != -1) return -1;
    leader = static_cast<int>(i);
  }
  if (leader == -1) return -1;
  auto& members = state(static_cast<size_t>(leader)).member->membership();
  for (size_t i = 0; i < members_.size(); ++i) {
    if (!running(i) || members_[i].frozen || static_cast<int>(i) == leader) continue;
    if (proto::find_member(members, members_[i].id) == nullptr) continue;  // removed
    if (state(i).member->leader() != members_[leader].id) return -1;
  }
  return leader;
}

void raft_group::observe() {
  for (size_t i = 0; i < members_.size(); ++i) {
    if (!running(i)) continue;
    auto& core = *state(i).member;
    if (core.current_role() != raft::role::leader) continue;
    auto [it, fresh] = leaders_by_term_.emplace(core.term(), members_[i].id);
    EXPECT_TRUE(fresh || it->second == members_[i].id)
        << "two leaders in term " << core.term() << ": " << it->second << " and "
        << members_[i].id;
  }
}

caf::expected<proto::applied> raft_group::propose(size_t i, proto::command cmd) {
  auto out = propose_via(*this, caf::actor_cast<proto::raft_actor>(members_.at(i).raft),
                         std::move(cmd));
  observe();
  return out;
}

uint64_t raft_group::create_task(size_t i, const std::string& name) {
  proto::task t;
  t.kind = proto::task_kind::noop;
  t.name = name;
  auto a = propose(i, proto::create_task{t, ""});
  if (!a || a->tasks.size() != 1) {
    ADD_FAILURE() << "create_task through " << members_.at(i).id
                  << " failed: " << (a ? "no task" : sys.render(a.error()));
    return 0;
  }
  return a->tasks[0].id;
}

}  // namespace aisched::test
