// The AI chat routes under /api/v1/ai (issue #8 part 4): chat and confirm as
// Server-Sent Events, conversations and their messages. They hand each turn to
// the node's llm_agent actor with the caller's identity and Authorization
// header (tools re-enter the REST API with it), and stream its events.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "actors/llm_agent/llm_agent_actor.hpp"
#include "common/http.hpp"
#include "gateway/route_table.hpp"

namespace caf {
class actor_system;
}

namespace aisched::gateway {

struct ai_context {
  caf::actor_system* sys = nullptr;
  llm::llm_agent_actor agent;
  std::shared_ptr<llm::llm_client> client;
  std::chrono::milliseconds timeout{10'000};
};

// The handlers (gateway/route_table.cpp), with the agent of api_context::ai.
// Without one (no agent on this node) or without an LLM configured, chat,
// confirm and ws answer 503 `llm_not_configured`.
void ai_chat(route_call& c);           // POST /api/v1/ai/chat (SSE)
void ai_confirm(route_call& c);        // POST /api/v1/ai/confirm (SSE)
void ai_ws(route_call& c);             // GET /api/v1/ai/ws (WebSocket upgrade)
void ai_conversations(route_call& c);  // GET /api/v1/ai/conversations?limit
void ai_messages(route_call& c);       // GET /api/v1/ai/conversations/{id}/messages?limit

/// Who asks: with auth disabled, tenant "default". (The auth branch resolves
/// the principal from the Authorization header; its tenant goes here.)
llm::caller caller_of(const http_request& req);

/// One Server-Sent Event: `event: NAME` and `data: DATA`.
std::string sse_event(const llm::agent_event& e);

}  // namespace aisched::gateway
