// How the AI features ask a model for a judgement, without knowing which LLM
// client does it: a function that sends a system and a user prompt and calls
// back once with the model's text. Empty means no model is configured; the
// features then answer with their computed facts and `llm_not_configured`.
#pragma once

#include <functional>
#include <string>

#include <caf/expected.hpp>

namespace aisched::ai {

struct judge_request {
  std::string feature;  // "analysis", "advice", "task_draft", "duration", "trends" (metrics label)
  std::string system;   // instructions, including the JSON shape expected
  std::string user;     // the facts, as JSON text
};

/// Called exactly once, from any thread, with the model's reply text or an error.
using judge_done = std::function<void(caf::expected<std::string>)>;

/// Sends `req` to the configured model; must not block the caller (the client
/// runs its request off the actor threads). Thread-safe.
using judge_fn = std::function<void(judge_request req, judge_done done)>;

}  // namespace aisched::ai
