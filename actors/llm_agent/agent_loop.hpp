// The agent's conversation loop, pure (no actor, no I/O): it builds each
// request to the model (system prompt + replayed history + the new turn),
// reads the model's answers, checks tool calls (malformed ones go back to the
// model as error results), holds destructive calls for the user's
// confirmation, counts tool rounds (at most max_rounds), and produces the
// events the chat API streams and the messages to persist.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/error.hpp>

#include "common/llm_client.hpp"
#include "actors/llm_agent/tools.hpp"

namespace aisched::llm {

/// One event of the chat stream: `name` as in the API contract
/// (conversation_id, text, tool_call, tool_result, confirmation_required,
/// done, error) and `data` a JSON object as text.
struct agent_event {
  std::string name;
  std::string data;
};

/// A destructive call waiting for the user (proto's: stored with the conversation).
using proto::pending_action;

/// A checked tool call to execute.
struct tool_invocation {
  std::string call_id;
  std::string name;
  std::string arguments;
  tool_plan plan;
};

/// What the loop wants next.
struct agent_step {
  enum kind { ask_model, run_tools, finished } what = finished;
  std::vector<tool_invocation> calls;  ///< run_tools: execute these, report each result
};

constexpr unsigned default_max_rounds = 10;

class agent_loop {
 public:
  /// A new user turn after `history` (already bounded by the caller).
  agent_loop(std::string system_prompt, std::vector<chat_message> history, std::string user_message,
             unsigned max_rounds = default_max_rounds);

  /// A turn that resumes after the user decided on `action`: approved, the
  /// first step runs it; declined, the model is told so. Either way the model
  /// then answers.
  static agent_loop after_confirmation(std::string system_prompt, std::vector<chat_message> history,
                                       const pending_action& action, bool approved,
                                       unsigned max_rounds = default_max_rounds);

  /// The conversation id the done event names, and a prefix that makes the
  /// action ids of this turn unique within the conversation.
  void set_ids(std::string conversation_id, std::string action_prefix);

  /// The first step (ask_model, or run_tools after an approved confirmation).
  agent_step start();

  /// The next request to the model (valid when the last step was ask_model).
  chat_request request() const;

  /// Feeds the model's answer; `streamed` says its text already went out as
  /// text events (so no text event is repeated).
  agent_step on_completion(const completion& c, bool streamed);

  /// Feeds a failed model request: the turn ends with an error event.
  agent_step on_model_error(const caf::error& err);

  /// Feeds the result of one tool call of the last run_tools step. When the
  /// last outstanding result arrives, the step says what is next.
  agent_step on_tool_result(const std::string& call_id, bool ok, const std::string& result);

  /// Events produced since the last call (in order).
  std::vector<agent_event> take_events();
  /// Messages of this turn produced since the last call, to persist in order.
  std::vector<chat_message> take_new_messages();
  /// Destructive calls held for confirmation by this turn.
  const std::vector<pending_action>& pending() const { return pending_; }

  unsigned rounds() const { return rounds_; }
  bool finished() const { return finished_; }

 private:
  void emit(std::string name, std::string data);
  void add(chat_message m);
  agent_step after_tools();
  agent_step finish();

  std::string system_prompt_;
  std::vector<chat_message> messages_;  // history + this turn
  size_t persisted_ = 0;                // messages_ before this index are stored already
  std::vector<agent_event> events_;
  std::vector<pending_action> pending_;
  std::vector<std::string> outstanding_;  // call ids of the running step
  unsigned rounds_ = 0;
  unsigned max_rounds_;
  bool finished_ = false;
  agent_step first_;
  std::string conversation_id_;
  std::string action_prefix_;
};

/// The default system prompt of the operations agent.
const std::string& default_system_prompt();

}  // namespace aisched::llm
