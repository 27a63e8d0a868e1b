// The rule engine of failure analysis: names the common causes of a failed run
// from what aisched recorded (state, exit code, error, output tail, task kind
// and memory cap). Pure and table-driven: no actors, no I/O. The analysis
// actor uses it as the answer without a model, and as the facts it hands one.
#pragma once

#include <string>
#include <string_view>

#include "proto/analysis.hpp"
#include "proto/types.hpp"

namespace aisched::ai {

/// What the rules look at, taken from an instance and (when known) its task.
struct failure_facts {
  std::string instance_id;
  proto::instance_state state = proto::instance_state::failed;
  proto::task_kind kind = proto::task_kind::shell;
  int32_t exit_code = 0;
  std::string error;
  std::string output;       // tail of stdout+stderr
  uint32_t memory_mb = 0;   // the task's memory cap (0: none)
  duration_ms timeout = 0;  // the task's timeout (0: unknown)
  std::string command;      // shell command or "METHOD url"
  uint32_t attempt = 1;
};

/// The facts of `x`; `t` (may be null when the task is gone) adds kind, cap, timeout.
failure_facts facts_of(const proto::instance& x, const proto::task* t);

/// The rule engine's analysis: the first rule that matches names the cause
/// (summary, severity, root cause, fix, confidence); `categories` lists every
/// matching rule's category, the first one first. Never fails: an unmatched
/// failure is "nonzero_exit" or "unknown" with a low confidence.
proto::failure_analysis analyze_by_rules(const failure_facts& f);

/// The line of `text` containing `needle` (case-insensitive), trimmed and
/// capped at 200 characters; "" when absent. Used to quote evidence.
std::string line_with(std::string_view text, std::string_view needle);

}  // namespace aisched::ai
