// Raft log compaction and snapshot transfer between three real `aisched`
// scheduler nodes (`--peers`, `--snapshot-every 20`): a follower stopped while
// the others compact past it, and a follower whose data dir was wiped, both
// catch up by a snapshot from the leader, then end with exactly the leader's
// tasks and follow new writes. Processes are started by the harness in
// tests/support/ and killed by pid; all waiting is polling with deadlines.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr size_t none = size_t(-1);
constexpr int snapshot_every = 20;

/// Three members n1..n3 on fixed cluster ports, each on its own data dir.
class group {
 public:
  explicit group(const std::string& dir) {
    std::set<uint16_t> ports;
    while (ports.size() < 3) ports.insert(free_port());
    for (auto p : ports) {
      ids_.push_back("n" + std::to_string(ids_.size() + 1));
      ports_.push_back(p);
      data_.push_back(dir + "/" + ids_.back());
      peers_ += (peers_.empty() ? "" : ",") + ids_.back() + "=127.0.0.1:" + std::to_string(p);
    }
    procs_.resize(3);
    for (size_t i = 0; i < 3; ++i) start(i);
  }

  void start(size_t i) {
    if (procs_[i]) old_.push_back(std::move(procs_[i]));
    procs_[i] = std::make_unique<node_process>(
        data_[i],
        std::vector<std::string>{"--node-id", ids_[i], "--peers", peers_, "--roles",
                                 "scheduler,gateway", "--snapshot-every",
                                 std::to_string(snapshot_every)},
        20s, "127.0.0.1:" + std::to_string(ports_[i]));
  }
  void kill(size_t i) { procs_[i]->stop(SIGKILL); }
  void wipe(size_t i) { std::filesystem::remove_all(data_[i]); }
  uint16_t port(size_t i) const { return procs_[i]->running() ? procs_[i]->http_port() : 0; }
  std::string log(size_t i) const { return procs_[i]->log(); }

  /// The member that says it leads, as seen by member `i`'s GET /api/v1/cluster.
  size_t leader() const {
    for (size_t i = 0; i < 3; ++i) {
      if (port(i) == 0) continue;
      auto r = http_call(port(i), "GET", "/api/v1/cluster", "", 2s);
      if (r.status != 200) continue;
      auto v = parse(r);
      if (!v.is_object()) continue;
      auto l = str(v.as_object(), "leader");
      for (size_t j = 0; j < 3; ++j)
        if (ids_[j] == l && port(j) != 0) return j;
    }
    return none;
  }

 private:
  std::vector<std::string> ids_, data_;
  std::vector<uint16_t> ports_;
  std::string peers_;
  std::vector<std::unique_ptr<node_process>> procs_, old_;
};

/// Task names on the node at `port`, or {"<error>"} if it does not answer.
std::set<std::string> task_names(uint16_t port) {
  auto r = http_call(port, "GET", "/api/v1/tasks?limit=1000", "", 3s);
  if (r.status != 200) return {"<error>"};
  std::set<std::string> out;
  auto v = parse(r);  // the loop below reads into it: keep it alive
  if (!v.is_object() || !v.as_object().contains("items")) return {"<error>"};
  for (auto& t : v.as_object().at("items").as_array())
    out.insert(str(t.as_object(), "name"));
  return out;
}

void create_tasks(uint16_t port, const std::string& prefix, int n) {
  for (int i = 0; i < n; ++i) {
    auto body = R"({"name":")" + prefix + std::to_string(i) + R"(","kind":"shell","command":"true"})";
    auto r = http_call(port, "POST", "/api/v1/tasks", body);
    ASSERT_EQ(r.status, 201u) << r.body;
  }
}

/// Waits until member `f` lists the same tasks as the leader; returns whether it did.
bool catches_up(group& g, size_t leader, size_t f, std::chrono::milliseconds timeout = 20s) {
  return eventually(
      [&] {
        auto want = task_names(g.port(leader));
        return want.count("<error>") == 0 && task_names(g.port(f)) == want;
      },
      timeout);
}

TEST(cluster_snapshot, lagging_and_wiped_followers_catch_up_by_snapshot) {
  temp_dir dir;
  group g(dir.path());
  size_t leader = none;
  ASSERT_TRUE(eventually([&] { return (leader = g.leader()) != none; }, 15s));
  size_t f = (leader + 1) % 3;  // the follower that falls behind
  create_tasks(g.port(leader), "before-", 5);
  ASSERT_TRUE(catches_up(g, leader, f));

  // 1. A stopped follower misses far more than the leader keeps in its log.
  g.kill(f);
  create_tasks(g.port(leader), "while-down-", 6 * snapshot_every);
  g.start(f);
  ASSERT_TRUE(catches_up(g, leader, f)) << tail(g.log(f));
  // Logged by the raft actor after the state the store actor serves is in place.
  EXPECT_TRUE(eventually([&] { return g.log(f).find("installed snapshot") != std::string::npos; }))
      << "caught up without a snapshot:\n" << tail(g.log(f));
  EXPECT_EQ(task_names(g.port(f)).size(), 5u + 6 * snapshot_every);
  // ... and then follows new writes by ordinary appends.
  create_tasks(g.port(leader), "after-", 3);
  ASSERT_TRUE(catches_up(g, leader, f)) << tail(g.log(f));

  // 2. A follower that lost its whole data dir rejoins empty.
  leader = g.leader();
  ASSERT_NE(leader, none);
  size_t w = (leader + 2) % 3;
  g.kill(w);
  g.wipe(w);
  g.start(w);
  ASSERT_TRUE(catches_up(g, leader, w)) << tail(g.log(w)) << "\n--- leader\n"
                                        << tail(g.log(leader));
  EXPECT_TRUE(eventually([&] { return g.log(w).find("installed snapshot") != std::string::npos; }))
      << tail(g.log(w));
  create_tasks(g.port(leader), "last-", 3);
  ASSERT_TRUE(catches_up(g, leader, w)) << tail(g.log(w));
  EXPECT_EQ(task_names(g.port(w)).size(), 5u + 6 * snapshot_every + 6);
}

}  // namespace
