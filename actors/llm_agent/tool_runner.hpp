// Executes a checked tool call (tools.hpp) by calling the gateway's REST
// handler in-process, with the caller's Authorization header and
// `X-Aisched-Via: ai-agent`: validation, roles, tenants and audit are exactly
// the REST API's. Asynchronous; never blocks the calling thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "actors/llm_agent/tools.hpp"
#include "common/http.hpp"

namespace aisched::llm {

/// The tool's outcome: ok (all requests answered 2xx) and the result as JSON text.
using tool_done_fn = std::function<void(bool ok, std::string result)>;

/// Runs `plan` through `api`; `caller_headers` (lower-case names) are copied
/// onto every request (only `authorization` is taken). `done` runs once, on
/// the thread the handler answers on.
void run_tool(const gateway::handler_fn& api, const tool_plan& plan,
              const std::map<std::string, std::string>& caller_headers, tool_done_fn done);

}  // namespace aisched::llm
