// Worker load history (issue #7 part 6; read by the console and the AI agent):
//   GET /api/v1/workers/{id}/load-history?since=RFC3339&until=RFC3339
//     -> {"worker_id", "items": [{"at", "load", "max_load", "cpu_percent", "memory_percent"}]}
//   GET /api/v1/workers/load-history?since=&until=
//     -> {"workers": {"<id>": [items]}}
// Without `since` the last hour is shown; `until` defaults to now. Samples
// are the leader's, replicated (storage/load_history), so any member answers.
#pragma once

#include <string>
#include <vector>

#include "gateway/api.hpp"

namespace aisched::gateway {

/// Whether `seg` (the split path) names one of the load-history routes.
bool is_load_history(const std::vector<std::string>& seg);

void load_history_route(const api_context& ctx, const http_request& req,
                        const std::vector<std::string>& seg, reply_fn reply);

}  // namespace aisched::gateway
