// The llm_agent actor, one per gateway node, spawned detached (it writes the
// conversation store in RocksDB). Owns the conversations and the turns in
// progress: each chat or confirm request becomes an agent_loop it drives —
// model requests go to the llm_client's threads, tool calls to the gateway's
// REST handler in-process; both answer back here by message. Events go to the
// caller's sink (the SSE or WebSocket stream of gateway/ai_routes).
//
// Its interface carries callbacks and node-local handles, so it is local only
// and lives here, not in proto/ (it never crosses nodes).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "common/activity.hpp"
#include "common/clock.hpp"
#include "actors/llm_agent/agent_loop.hpp"
#include "actors/llm_agent/conversation_store.hpp"
#include "common/llm_client.hpp"
#include "common/http.hpp"
#include "proto/inspection.hpp"

namespace aisched::llm {

/// Where a turn's events go. Both functions are thread-safe: text deltas are
/// sent from the LLM client's threads. `send` returns false once the client
/// has gone (the turn still completes and is stored).
struct event_sink {
  std::function<bool(const agent_event&)> send;
  std::function<void()> close;
};

/// Who asks, as the gateway resolved it, and the headers tools re-send.
struct caller {
  std::string tenant = "default";
  std::string subject;
  std::map<std::string, std::string> headers;  // lower-case names; `authorization` is used
};

struct chat_job {
  std::string conversation_id;  // empty: a new conversation
  std::string message;
  caller who;
  event_sink sink;
};

struct confirm_job {
  std::string conversation_id;
  std::string action_id;
  bool approve = false;
  caller who;
  event_sink sink;
};

/// A model answer handed back from the client's thread.
struct llm_outcome {
  caf::expected<completion> result{completion{}};
  bool streamed = false;  // text deltas already went to the sink
};

}  // namespace aisched::llm

// Local-only message payloads (callbacks inside): never serialized.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<aisched::llm::chat_job>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<aisched::llm::confirm_job>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<aisched::llm::llm_outcome>)

namespace aisched::llm {

using chat_atom = caf::atom_constant<caf::atom("aichat")>;
using confirm_atom = caf::atom_constant<caf::atom("aiconfirm")>;
using conversations_atom = caf::atom_constant<caf::atom("aiconvs")>;
using messages_atom = caf::atom_constant<caf::atom("aimsgs")>;
using llm_reply_atom = caf::atom_constant<caf::atom("aillmrep")>;
using tool_reply_atom = caf::atom_constant<caf::atom("aitoolrep")>;

using llm_agent_actor = caf::typed_actor<
    caf::reacts_to<chat_atom, std::shared_ptr<chat_job>>,
    caf::reacts_to<confirm_atom, std::shared_ptr<confirm_job>>,
    /// The tenant's conversations as `{"items":[...]}` JSON (at most `limit`).
    caf::replies_to<conversations_atom, std::string, uint64_t>::with<std::string>,
    /// (tenant, conversation id, limit) -> `{"conversation_id","items":[...]}` JSON.
    caf::replies_to<messages_atom, std::string, std::string, uint64_t>::with<std::string>,
    caf::reacts_to<llm_reply_atom, uint64_t, std::shared_ptr<llm_outcome>>,
    caf::reacts_to<tool_reply_atom, uint64_t, std::string, bool, std::string>,
    proto::inspect_signature>;

struct llm_agent_options {
  std::shared_ptr<llm_client> client;
  std::shared_ptr<storage::rocks> db;
  /// Makes conversation records durable: proposes them (common/propose.hpp).
  ai_record_writer write;
  /// The REST handler tools call; filled in after gateway::make_api (which
  /// itself needs this actor), before the first request.
  std::shared_ptr<gateway::handler_fn> api;
  history_bounds history;
  std::string system_prompt = default_system_prompt();
  unsigned max_rounds = default_max_rounds;
  wall_clock clock{};  // conversations' instants (common/clock.hpp): the system's
};

struct turn;

struct llm_agent_state {
  wall_clock clock;  // opts.clock
  std::unique_ptr<conversation_store> store;
  std::map<uint64_t, std::shared_ptr<turn>> turns;
  uint64_t next_turn = 1;
  uint64_t turns_started = 0;
  inspector::activity activity;
  static inline const char* name = "llm_agent";
};

llm_agent_actor::behavior_type llm_agent_impl(
    llm_agent_actor::stateful_pointer<llm_agent_state> self, llm_agent_options opts);

}  // namespace aisched::llm
