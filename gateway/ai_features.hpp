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

void get_instance_analysis(route_call& c);  // GET /api/v1/instances/{id}/analysis (stored)
void analyze_instance(route_call& c);       // POST /api/v1/ai/analyze/{instance_id}
void get_advice(route_call& c);             // GET /api/v1/ai/advice
void draft_task(route_call& c);             // POST /api/v1/ai/task-draft
void predict_duration(route_call& c);       // GET /api/v1/ai/tasks/{id}/duration
void get_trends(route_call& c);             // GET /api/v1/ai/trends

}  // namespace aisched::gateway
