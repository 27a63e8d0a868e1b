// Blocking proposals; see propose.hpp.
#include "common/propose.hpp"

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include "proto/errors.hpp"

namespace aisched {

caf::error propose_and_wait(caf::actor_system& sys, const proto::raft_actor& raft,
                            proto::command cmd, std::chrono::milliseconds timeout) {
  if (!raft) return make_error(errc::unavailable, "no raft member to propose to");
  caf::scoped_actor self{sys};
  caf::error out;
  self->request(raft, timeout, proto::propose_atom::value, std::move(cmd))
      .receive([](const proto::applied&) {}, [&](caf::error& e) { out = std::move(e); });
  return out;
}

ai_record_writer replicated_ai_writer(caf::actor_system& sys, proto::raft_actor raft) {
  return [&sys, raft](std::vector<proto::ai_record> records) {
    return propose_and_wait(sys, raft, proto::put_ai_records{std::move(records)});
  };
}

}  // namespace aisched
