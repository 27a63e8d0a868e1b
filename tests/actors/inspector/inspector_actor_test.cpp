// Tests for the inspector actor on CAF's test coordinator (virtual time, no
// threads): a real raft group of one and the store actor over RocksDB in a
// temporary directory, plus an actor that takes the inspect request and never
// answers. The inspector lists every actor in order with the summary it gave
// (raft: leader in its term; counters that move with the messages handled),
// waits no longer than asked, and lists the silent actor as unresponsive.
#define CAF_GTEST_DSL_IMPL
#include "support/caf_gtest_dsl.hpp"
#include "support/single_node.hpp"

#include <chrono>
#include <string>
#include <vector>

#include "actors/inspector/inspector_actor.hpp"
#include "proto/interfaces.hpp"
#include "proto/registry.hpp"
#include "actors/store/store_actor.hpp"

namespace aisched::inspector {
namespace {

using namespace std::chrono_literals;
using proto::actor_summary;
using proto::node_summary;

struct inspector_test_config : caf::actor_system_config {
  inspector_test_config() { proto::register_types(*this); }
};

/// Takes every inspect request and never answers (a stuck actor).
proto::inspectable_actor::behavior_type silent(proto::inspectable_actor::pointer self) {
  return {[=](proto::inspect_atom) -> caf::result<actor_summary> {
    return self->make_response_promise<actor_summary>();
  }};
}

class inspector_actor_test : public test_coordinator_fixture<inspector_test_config>,
                             public ::testing::Test {
 protected:
  inspector_actor_test() {
    node_ = test::start_single_node(sys, "inspector");
    silent_ = sys.spawn(silent);
    inspector_options opts{"n1", {"scheduler"}, 1000};
    inspector_ = sys.spawn(inspector_actor_impl, opts,
                           std::vector<target>{{"raft", node_.raft}, {"store", node_.store}});
    sched.run();  // the raft member elects itself
  }

  ~inspector_actor_test() override {
    for (auto a : {caf::actor_cast<caf::actor>(inspector_), caf::actor_cast<caf::actor>(silent_)})
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    test::stop_single_node(node_);
    sched.run();
    inspector_ = nullptr;
    silent_ = nullptr;
    test::remove_single_node(node_);
  }

  /// Asks the inspector for the node summary, letting `wait` of virtual time
  /// pass in steps so request timeouts can fire.
  node_summary inspect_node(duration_ms wait, std::chrono::milliseconds let_pass = 0ms) {
    node_summary out;
    bool answered = false;
    auto h = self->request(inspector_, caf::infinite, proto::inspect_node_atom::value, wait);
    sched.run();
    if (let_pass > 0ms) {
      EXPECT_TRUE(self->mailbox().empty()) << "answered before the silent actor timed out";
      advance_time(let_pass);
      sched.run();
    }
    if (self->mailbox().empty()) {
      ADD_FAILURE() << "the inspector did not answer";
      return out;
    }
    h.receive([&](node_summary& s) { out = std::move(s), answered = true; },
              [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
    EXPECT_TRUE(answered);
    return out;
  }

  static const actor_summary* row(const node_summary& s, const std::string& name) {
    for (auto& a : s.actors)
      if (a.name == name) return &a;
    return nullptr;
  }

  test::single_node node_;
  proto::inspectable_actor silent_;
  proto::inspector_actor inspector_;
};

TEST_F(inspector_actor_test, lists_each_actor_with_its_own_summary) {
  auto s = inspect_node(1000);
  EXPECT_EQ(s.node_id, "n1");
  EXPECT_EQ(s.roles, std::vector<std::string>{"scheduler"});
  EXPECT_EQ(s.started_at_ms, 1000);
  ASSERT_EQ(s.actors.size(), 3u);
  EXPECT_EQ(s.actors[0].name, "inspector");
  EXPECT_EQ(s.actors[1].name, "raft");
  EXPECT_EQ(s.actors[2].name, "store");
  for (auto& a : s.actors) {
    EXPECT_TRUE(a.responsive) << a.name << ": " << a.error;
    EXPECT_EQ(a.kind, a.name);
    EXPECT_NE(a.actor_id, 0u);
    EXPECT_GE(a.handled, 1u) << a.name << " counts the inspect request itself";
    EXPECT_GT(a.last_active_ms, 0) << a.name;
  }
  auto& raft = s.actors[1];
  EXPECT_EQ(raft.details.at("role"), "leader");
  EXPECT_EQ(raft.details.at("term"), std::to_string(node_.term));
  EXPECT_GE(std::stoull(raft.details.at("term")), 1u);
  EXPECT_EQ(raft.details.at("leader"), "n1");
  EXPECT_EQ(s.actors[2].details.count("applied_index"), 1u);
}

TEST_F(inspector_actor_test, counts_the_messages_each_actor_handled) {
  auto before = row(inspect_node(1000), "store")->handled;
  for (int i = 0; i < 5; ++i)
    caf::anon_send(node_.store, proto::list_tasks_atom::value, proto::task_query{});
  sched.run();
  auto after = inspect_node(1000);
  // Five reads, then the inspect request itself.
  EXPECT_EQ(row(after, "store")->handled, before + 6);
  EXPECT_EQ(row(after, "store")->mailbox, 0u);
}

TEST_F(inspector_actor_test, lists_an_actor_that_does_not_answer_as_unresponsive) {
  caf::anon_send(inspector_, proto::enroll_atom::value, std::string("stuck"), silent_);
  sched.run();
  // The inspector waits 300 ms (virtual) for the silent actor, then answers.
  auto s = inspect_node(300, 300ms);
  ASSERT_EQ(s.actors.size(), 4u);
  auto stuck = row(s, "stuck");
  ASSERT_NE(stuck, nullptr);
  EXPECT_FALSE(stuck->responsive);
  EXPECT_NE(stuck->error.find("request_timeout"), std::string::npos) << stuck->error;
  EXPECT_TRUE(row(s, "raft")->responsive);
  EXPECT_TRUE(row(s, "store")->responsive);
}

TEST_F(inspector_actor_test, lists_an_actor_that_has_stopped_as_unresponsive) {
  caf::anon_send(inspector_, proto::enroll_atom::value, std::string("gone"), silent_);
  caf::anon_send_exit(silent_, caf::exit_reason::user_shutdown);
  sched.run();
  auto s = inspect_node(300);
  auto gone = row(s, "gone");
  ASSERT_NE(gone, nullptr);
  EXPECT_FALSE(gone->responsive);
  EXPECT_FALSE(gone->error.empty());
}

}  // namespace
}  // namespace aisched::inspector
