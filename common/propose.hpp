// A blocking proposal to the raft actor, for code on a detached actor's own
// thread (the AI agent, the failure analyses): it waits for the command to be
// applied on this member, as every proposal does, and returns its error.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include <caf/error.hpp>
#include <caf/fwd.hpp>

#include "proto/interfaces.hpp"

namespace aisched {

/// A function that makes records durable the replicated way (or, in tests, any way).
using ai_record_writer = std::function<caf::error(std::vector<proto::ai_record>)>;

/// Proposes `cmd` and waits up to `timeout` for its answer. Never call it on
/// a cooperatively scheduled actor: it blocks the calling thread.
[[nodiscard]] caf::error propose_and_wait(caf::actor_system& sys, const proto::raft_actor& raft,
                                          proto::command cmd,
                                          std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// A writer that proposes `put_ai_records` to `raft`.
ai_record_writer replicated_ai_writer(caf::actor_system& sys, proto::raft_actor raft);

}  // namespace aisched
