// The AI agent's records: chat messages and tool calls (the model's wire, as
// common/llm_client speaks it), conversations, stored messages and
// destructive calls waiting for the user (actors/llm_agent/conversation_store
// keeps them in the replicated column ai_conversations). Plain values; their
// JSON is in proto/json_wire.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/time.hpp"

namespace aisched::proto {

/// One tool call the model asked for. `arguments` is the raw JSON text the
/// model produced (it may be malformed: the agent checks it).
struct tool_call {
  std::string id;
  std::string name;
  std::string arguments;
};

/// One chat message: role "system" | "user" | "assistant" | "tool".
struct chat_message {
  std::string role;
  std::string content;
  std::vector<tool_call> tool_calls;  ///< assistant messages that call tools
  std::string tool_call_id;           ///< tool messages: the call they answer
  std::string name;                   ///< tool messages: the tool's name
};

/// A destructive call waiting for the user. Stored with the conversation.
struct pending_action {
  std::string action_id;
  std::string name;
  std::string arguments;
  std::string summary;
};

struct conversation {
  std::string id;
  std::string tenant;
  std::string subject;  // who started it ("" with auth disabled)
  std::string title;    // the first user message, cut short
  unix_ms created_at = 0;
  unix_ms updated_at = 0;
  uint64_t messages = 0;
};

struct stored_message {
  uint64_t seq = 0;  // from the record's key, not its value
  unix_ms at = 0;
  chat_message msg;
};

}  // namespace aisched::proto
