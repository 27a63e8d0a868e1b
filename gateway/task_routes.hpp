// The task routes under /api/v1/tasks and /api/v1/events: create, list, get,
// update, delete, pause, resume, trigger, backfill, publish an event. Reads go
// to the store actor (a task by id inline, see point_reads), changes to the raft
// actor, manual fires to the (leader's) trigger actor. Registered in
// gateway/route_table.cpp, which also holds who may call each.
#pragma once

#include "gateway/route_table.hpp"

namespace aisched::gateway {

void create_task(route_call& c);  // POST /api/v1/tasks (Idempotency-Key honoured)
void list_tasks(route_call& c);   // GET /api/v1/tasks?limit&cursor&name&labels&state
void get_task(route_call& c);     // GET /api/v1/tasks/{id}
void update_task(route_call& c);  // PUT / PATCH /api/v1/tasks/{id}: merge, validate, CAS
void delete_task(route_call& c);  // DELETE /api/v1/tasks/{id}?version
void pause_task(route_call& c);   // POST /api/v1/tasks/{id}/pause
void resume_task(route_call& c);  // POST /api/v1/tasks/{id}/resume
void trigger_task(route_call& c);   // POST /api/v1/tasks/{id}/trigger
void backfill_task(route_call& c);  // POST /api/v1/tasks/{id}/backfill {"from", "to"}
void enqueue_runs(route_call& c);   // POST /api/v1/tasks/{id}/runs {"payloads": [{...}, ...]}
void publish_event(route_call& c);  // POST /api/v1/events/{name}

}  // namespace aisched::gateway
