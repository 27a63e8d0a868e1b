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

void list_load_history(route_call& c);        // GET /api/v1/workers/load-history
void get_worker_load_history(route_call& c);  // GET /api/v1/workers/{id}/load-history

}  // namespace aisched::gateway
