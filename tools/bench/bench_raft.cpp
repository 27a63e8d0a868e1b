// Google Benchmark for raft::core replication: a 3-member group in memory (no disk, no
// CAF), driven as the raft actor drives it — propose on the leader, then take_ready /
// advance on every member and deliver messages FIFO until the network is quiet. Each
// iteration proposes a batch of N commands and runs until the leader has committed
// them; items/s = entries committed per second (on the leader).
//   bench_raft --benchmark_min_time=0.2 --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/raft/core.hpp"

namespace aisched::raft {
namespace {

class group {
 public:
  group() {
    const std::vector<std::string> ids{"n1", "n2", "n3"};
    uint64_t seed = 1;
    for (const auto& id : ids) members_[id] = std::make_unique<core>(config{id, ids}, seed++);
    leader().campaign();
    settle();
    if (leader().current_role() != role::leader) {
      std::cerr << "n1 did not win the election\n";
      std::abort();
    }
  }

  core& leader() { return *members_.at("n1"); }

  /// Drains every member's ready (persist is a no-op; committed entries are dropped) and
  /// delivers queued messages until none are left.
  void settle() {
    for (auto& [id, c] : members_) drain(*c);
    while (!net_.empty()) {
      auto msg = std::move(net_.front());
      net_.pop_front();
      auto& dst = *members_.at(msg.to);
      dst.step(msg);
      drain(dst);
    }
  }

  /// Forgets applied entries on every member, so long runs keep the in-memory logs small.
  void compact() {
    for (auto& [id, c] : members_) c->compact(c->applied_index());
  }

 private:
  void drain(core& c) {
    while (c.has_ready()) {
      auto rd = c.take_ready();
      for (auto& m : rd.messages) net_.push_back(std::move(m));
      c.advance(rd);
    }
  }

  std::map<std::string, std::unique_ptr<core>> members_;
  std::deque<message> net_;
};

proto::command cmd(uint64_t k) {
  proto::cancel x;
  x.tenant = "bench";
  x.instance_id = "42-1796022000000-" + std::to_string(k);
  return proto::command{std::move(x)};
}

void bm_replicate(benchmark::State& state) {
  const int64_t n = state.range(0);
  group g;
  auto& l = g.leader();
  uint64_t k = 0;
  const auto start = l.commit_index();
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<proto::command> cmds;
    for (int64_t i = 0; i < n; ++i) cmds.push_back(cmd(k++));
    state.ResumeTiming();
    for (auto& c : cmds)
      if (!l.propose(std::move(c))) std::abort();
    g.settle();
    if (l.commit_index() != l.last_index()) std::abort();
    if (k % 4096 < static_cast<uint64_t>(n)) {
      state.PauseTiming();
      g.compact();
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(l.commit_index() - start));
}

BENCHMARK(bm_replicate)->Arg(1)->Arg(64)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace aisched::raft

BENCHMARK_MAIN();
