// The AI structured-feature routes (issue #8 part 5): failure analysis
// (GET /api/v1/instances/{id}/analysis, POST /api/v1/ai/analyze/{id}), advice
// (GET /api/v1/ai/advice), natural language -> task draft (POST
// /api/v1/ai/task-draft), duration prediction (GET /api/v1/ai/tasks/{id}/duration)
// and trends (GET /api/v1/ai/trends). Each computes its facts from the store,
// router and backpressure actors, asks the model (api_context::judge) only for
// judgement, and answers 200 with the facts and `llm_not_configured` without one.
#pragma once

#include <string>
#include <vector>

#include "gateway/api.hpp"

namespace aisched::gateway {

/// Serves `req` (path already split into `seg`) when it is one of the routes
/// above and returns true; returns false, without replying, otherwise.
bool serve_ai_feature(const api_context& ctx, http_request& req,
                      const std::vector<std::string>& seg, reply_fn& reply);

}  // namespace aisched::gateway
