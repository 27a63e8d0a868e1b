// How the AI features ask a model for a judgement, without knowing which LLM
// client does it: a function that sends a system and a user prompt and calls
// back once with the model's text. Empty means no model is configured; the
// features then answer with their computed facts and `llm_not_configured`.
#pragma once

#include <functional>
#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace aisched::ai {

/// The feature's test of the model's text: no error when the feature would use
/// it, else why it rejects it (the same reason it reports). Pure and
/// thread-safe: the judge runs it on the client's thread.
using judge_check = std::function<caf::error(const std::string& text)>;

struct judge_request {
  std::string feature;  // "analysis", "advice", "task_draft", "duration", "trends" (metrics label)
  std::string system;   // instructions, including the JSON shape expected
  std::string user;     // the facts, as JSON text
  /// Required. Run on each answer before `done`; the judge counts the request
  /// by its verdict (ai_requests_total result "ok"/"fallback", or "invalid"
  /// when rejected), so a rejected answer is never counted as ok.
  judge_check check;
};

/// Called exactly once, from any thread, with the model's reply text (checked
/// or rejected by `check`, the caller reads it again to build its answer) or an
/// error (the model was not reached or did not answer).
using judge_done = std::function<void(caf::expected<std::string>)>;

/// Sends `req` to the configured model; must not block the caller (the client
/// runs its request off the actor threads). Thread-safe.
using judge_fn = std::function<void(judge_request req, judge_done done)>;

}  // namespace aisched::ai
