// The agent's tools, pure: each tool's JSON-schema description for the model,
// the check of the arguments the model produced (bad JSON, unknown tool,
// missing or ill-typed argument become an error the model can correct), and
// the REST request(s) a valid call becomes. Executing them is tool_runner's job.
#pragma once

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "common/llm_client.hpp"
#include "common/http.hpp"

namespace aisched::llm {

/// What a valid tool call does: REST requests run in order; the tool's result
/// is the single answer, or an object with one member per step's `label`.
struct tool_plan {
  struct step {
    std::string label;
    gateway::http_request request;
  };
  std::string tool;
  std::vector<step> steps;
  /// Needs the user's confirmation before it runs (delete_task).
  bool destructive = false;
  /// One line for the user saying what will happen ("delete task 7").
  std::string summary;
};

/// The tools described to the model.
const std::vector<tool_spec>& tool_specs();

/// Checks one call and turns it into a plan. Errors are errc::invalid_argument
/// (or not_found for an unknown tool) with a message meant for the model.
caf::expected<tool_plan> plan_tool(const std::string& name, const std::string& arguments);

}  // namespace aisched::llm
