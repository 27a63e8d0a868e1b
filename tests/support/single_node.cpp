// Shared setup of deterministic actor tests; see single_node.hpp.
#include "support/single_node.hpp"

#include <stdlib.h>

#include <filesystem>

#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/raft/raft_actor.hpp"
#include "storage/rocks.hpp"
#include "storage/state_machine.hpp"
#include "actors/store/store_actor.hpp"

namespace aisched::test {

single_node start_single_node(caf::actor_system& sys, const std::string& prefix) {
  single_node n;
  std::string tmpl = "/tmp/aisched-" + prefix + "-test-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  n.dir = tmpl;
  auto db = storage::rocks::open(n.dir);
  if (!db) throw std::runtime_error("rocks::open: " + sys.render(db.error()));
  n.db = std::move(*db);
  auto sm = storage::state_machine::open(*n.db);
  if (!sm) throw std::runtime_error("state_machine::open: " + sys.render(sm.error()));
  n.sm = std::move(*sm);
  auto parts = raft::open_member(*n.db, *n.sm, raft::raft_options{});
  if (!parts) throw std::runtime_error("raft::open_member: " + sys.render(parts.error()));
  n.term = parts->member->term();
  n.raft = caf::actor_cast<proto::raft_actor>(
      sys.spawn(raft::raft_actor_impl, parts->opts, n.db, n.sm, parts->log, parts->member));
  n.store = sys.spawn(storage::store_actor_impl, n.db,
                      std::shared_ptr<const storage::state_machine>(n.sm));
  return n;
}

void stop_single_node(single_node& n) {
  caf::anon_send_exit(n.store, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(n.raft, caf::exit_reason::user_shutdown);
}

void remove_single_node(single_node& n) {
  n.store = nullptr;
  n.raft = nullptr;
  n.sm.reset();
  n.db.reset();
  std::error_code ec;
  std::filesystem::remove_all(n.dir, ec);
}

}  // namespace aisched::test
