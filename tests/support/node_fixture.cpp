// The fixture of deterministic actor tests; see node_fixture.hpp.
#include "support/node_fixture.hpp"

#include <stdexcept>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "proto/registry.hpp"
#include "proto/time.hpp"
#include "storage/state_machine.hpp"

namespace aisched::test {

namespace {

// What the helpers of single_node.hpp use of a test coordinator fixture.
struct coordinator_view {
  caf::scheduler::test_coordinator& sched;
  caf::scoped_actor& self;
  size_t advance_time(caf::timespan d) { return sched.clock().advance_time(d); }
};

}  // namespace

unix_ms at(const char* rfc3339) {
  auto t = parse_rfc3339(rfc3339);
  if (!t) throw std::runtime_error(std::string("bad instant ") + rfc3339);
  return *t;
}

actor_test_config::actor_test_config() { proto::register_types(*this); }

node_fixture::node_fixture(caf::actor_system& sys, caf::scheduler::test_coordinator& sched,
                           caf::scoped_actor& self, const std::string& prefix, unix_ms start_unix)
    : node_(start_single_node(sys, prefix)),
      sys_(sys),
      sched_(sched),
      self_(self),
      start_unix_(start_unix),
      spawned_at_(sched.clock().now()) {}

node_fixture::~node_fixture() { remove_single_node(node_); }

void node_fixture::TearDown() {
  for (auto& a : kept_) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  stop_single_node(node_);
  sched_.run();
  kept_.clear();
}

void node_fixture::keep(caf::actor a) { kept_.push_back(std::move(a)); }

void node_fixture::subscribe(const proto::commit_listener_actor& listener) {
  caf::anon_send(node_.raft, proto::subscribe_atom::value, listener);
  keep(listener);
}

void node_fixture::lead(const proto::commit_listener_actor& listener, bool leading,
                        const std::string& leader) {
  caf::anon_send(listener, proto::leader_atom::value,
                 proto::leadership{leading, node_.term, leader});
  sched_.run();
}

caf::expected<proto::applied> node_fixture::propose(proto::command cmd) {
  coordinator_view f{sched_, self_};
  return propose_via(f, node_.raft, std::move(cmd));
}

uint64_t node_fixture::create_task(proto::task t) {
  auto a = propose(proto::create_task{std::move(t)});
  if (!a || a->tasks.size() != 1) {
    ADD_FAILURE() << "create_task failed: " << (a ? "no task" : sys_.render(a.error()));
    return 0;
  }
  return a->tasks[0].id;
}

caf::expected<proto::applied> node_fixture::propose_fire(uint64_t task, unix_ms slot) {
  return propose(proto::fire{node_.term, slot, {proto::fire_slot{task, slot, "trace"}}});
}

caf::expected<proto::applied> node_fixture::propose_dispatch(const std::string& run, unix_ms at,
                                                             const std::string& worker) {
  return propose(proto::dispatch{node_.term, at, {proto::dispatch_entry{run, worker}}});
}

proto::instance node_fixture::instance_of(const std::string& id) {
  auto x = node_.sm->get_instance("", id);
  if (!x) {
    ADD_FAILURE() << "no instance " << id << ": " << sys_.render(x.error());
    return {};
  }
  return *x;
}

unix_ms node_fixture::now() const {
  return virtual_now(coordinator_view{sched_, self_}, spawned_at_, start_unix_);
}

void node_fixture::advance_to(unix_ms target) {
  coordinator_view f{sched_, self_};
  advance_virtual_to(f, target, [this] { return now(); });
}

}  // namespace aisched::test
