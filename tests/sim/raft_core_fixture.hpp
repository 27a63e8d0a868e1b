// A hand-driven group of raft::core members for the core's unit tests: messages
// are delivered, dropped or held explicitly and every step is checked.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <caf/sum_type.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/raft/core.hpp"
#include "proto/codec.hpp"
#include "proto/errors.hpp"

namespace aisched::raft {
namespace testing_support {

inline proto::command cmd(std::string key) {
  proto::cancel x;
  x.tenant = "test";
  x.instance_id = std::move(key);
  return proto::command{std::move(x)};
}

inline std::string key_of(const proto::command& c) {
  if (proto::holds<proto::noop>(c)) return "noop";
  if (auto x = proto::command_as<proto::cancel>(c)) return x->instance_id;
  return "?";
}

inline proto::log_entry entry(uint64_t index, uint64_t term, std::string key = "") {
  return proto::log_entry{index, term, key.empty() ? proto::command{proto::noop{}} : cmd(key)};
}

inline std::vector<std::string> ids(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 1; i <= n; ++i) out.push_back("n" + std::to_string(i));
  return out;
}

// -- a hand-driven group -----------------------------------------------------

/// N cores, a FIFO network the test controls, and per-member durable state
/// filled only from readies (so restart() recovers exactly what was persisted).
class group {
 public:
  struct member {
    std::unique_ptr<core> c;
    hard_state hard;
    snapshot_meta snap;
    std::vector<proto::log_entry> log;
    uint64_t applied = 0;
    std::vector<proto::log_entry> applied_entries;
    std::vector<ready> readies;  // every ready taken, for inspection
  };

  explicit group(size_t n, std::function<void(config&)> tweak = nullptr)
      : tweak_(std::move(tweak)) {
    for (auto& id : ids(n)) {
      members_[id].c = std::make_unique<core>(make_config(id, n), seed_for(id));
    }
    n_ = n;
  }

  /// Builds a member from explicit durable state (for log-shape scenarios).
  void restore(const std::string& id, hard_state hard, std::vector<proto::log_entry> log) {
    auto& m = members_.at(id);
    m.hard = hard;
    m.log = log;
    m.snap = {};
    m.applied = 0;
    m.c = std::make_unique<core>(make_config(id, n_), hard, snapshot_meta{}, std::move(log), 0,
                                 seed_for(id));
  }

  /// Adds member `id` as a node joining the running group: no peers, it
  /// learns the membership from the leader once a change adds it.
  void add_joiner(const std::string& id) {
    joiners_.insert(id);
    members_[id].c = std::make_unique<core>(make_config(id, n_), seed_for(id));
  }

  core& operator[](const std::string& id) { return *members_.at(id).c; }
  member& at(const std::string& id) { return members_.at(id); }

  /// Drains one member's ready: persist, queue messages, apply, advance.
  void process(const std::string& id) {
    auto& m = members_.at(id);
    if (!m.c) return;
    while (m.c->has_ready()) {
      auto rd = m.c->take_ready();
      if (rd.snapshot) {
        m.log.clear();
        m.snap = *rd.snapshot;
        m.applied = rd.snapshot->index;
      }
      if (rd.truncate_from) {
        auto from = *rd.truncate_from;
        if (from <= m.snap.index + m.log.size()) m.log.resize(from - m.snap.index - 1);
      }
      for (auto& e : rd.entries) {
        EXPECT_EQ(e.index, m.snap.index + m.log.size() + 1) << id << ": durable log gap";
        m.log.push_back(e);
      }
      if (rd.hard) m.hard = *rd.hard;
      for (auto& msg : rd.messages) {
        if (!cut_.count({msg.from, msg.to}) && !(drop_if_ && drop_if_(msg))) net_.push_back(msg);
      }
      for (auto& e : rd.committed) {
        EXPECT_EQ(e.index, m.applied + 1) << id << ": apply gap";
        m.applied = e.index;
        m.applied_entries.push_back(e);
      }
      m.c->advance(rd);
      m.readies.push_back(std::move(rd));
    }
  }

  void process_all() {
    for (auto& [id, m] : members_) process(id);
  }

  /// Delivers queued messages (FIFO) until the network is quiet.
  void deliver_all(size_t limit = 100'000) {
    process_all();
    for (size_t i = 0; !net_.empty() && i < limit; ++i) {
      auto msg = std::move(net_.front());
      net_.pop_front();
      deliver(msg);
    }
    ASSERT_TRUE(net_.empty()) << "the network did not quiesce";
  }

  /// Delivers one message now (if the destination is up and not cut off).
  void deliver(const message& msg) {
    auto& dst = members_.at(msg.to);
    if (!dst.c || cut_.count({msg.from, msg.to})) return;
    dst.c->step(msg);
    dst.c->check_invariants();
    process(msg.to);
  }

  /// Removes and returns the queued messages matching `pred`.
  std::vector<message> take(std::function<bool(const message&)> pred) {
    process_all();
    std::vector<message> out;
    std::deque<message> rest;
    for (auto& m : net_) {
      if (pred(m))
        out.push_back(m);
      else
        rest.push_back(m);
    }
    net_ = std::move(rest);
    return out;
  }

  void drop_all() { net_.clear(); }

  void tick(const std::string& id, int n = 1) {
    for (int i = 0; i < n; ++i) {
      if (members_.at(id).c) members_.at(id).c->tick();
      process(id);
    }
  }

  /// Ticks every member once and delivers everything, `n` times.
  void tick_all(int n = 1) {
    for (int i = 0; i < n; ++i) {
      for (auto& [id, m] : members_)
        if (m.c) m.c->tick();
      deliver_all();
    }
  }

  void elect(const std::string& id) {
    members_.at(id).c->campaign();
    deliver_all();
    ASSERT_EQ(members_.at(id).c->current_role(), role::leader) << id << " did not win";
  }

  void isolate(const std::string& id) {
    for (auto& [other, m] : members_) {
      cut_.insert({id, other});
      cut_.insert({other, id});
    }
  }

  void cut(const std::string& a, const std::string& b) {
    cut_.insert({a, b});
    cut_.insert({b, a});
  }

  void cut_one_way(const std::string& from, const std::string& to) { cut_.insert({from, to}); }

  void heal() { cut_.clear(); }

  void crash(const std::string& id) { members_.at(id).c.reset(); }

  void restart(const std::string& id) {
    auto& m = members_.at(id);
    m.c = std::make_unique<core>(make_config(id, n_), m.hard, m.snap, m.log, m.applied,
                                 seed_for(id) + 1000);
  }

  void set_drop_if(std::function<bool(const message&)> f) { drop_if_ = std::move(f); }

  std::deque<message>& net() { return net_; }

 private:
  config make_config(const std::string& id, size_t n) const {
    config cfg;
    cfg.id = id;
    cfg.peers = joiners_.count(id) != 0 ? std::vector<std::string>{} : ids(n);
    if (tweak_) tweak_(cfg);
    return cfg;
  }

  static uint64_t seed_for(const std::string& id) { return std::hash<std::string>{}(id) ^ 0x5eed; }

  size_t n_ = 0;
  std::function<void(config&)> tweak_;
  std::set<std::string> joiners_;
  std::map<std::string, member> members_;
  std::deque<message> net_;
  std::set<std::pair<std::string, std::string>> cut_;
  std::function<bool(const message&)> drop_if_;
};

template <class T>
inline std::vector<T> payloads_of(const std::vector<message>& msgs) {
  std::vector<T> out;
  for (auto& m : msgs)
    if (auto* x = caf::get_if<T>(&m.body)) out.push_back(*x);
  return out;
}

/// Steps `m` into a lone core and returns what it answered.
inline std::vector<message> answer(core& c, payload body, const std::string& from) {
  c.step(message{c.id(), from, std::move(body)});
  auto rd = c.take_ready();
  c.advance(rd);
  return rd.messages;
}

}  // namespace testing_support
}  // namespace aisched::raft
