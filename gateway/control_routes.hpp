// Pools and exclusion calendars over REST: GET/PUT /api/v1/pools/{name},
// GET/PUT/DELETE /api/v1/calendars/{name} and their lists (reads from the
// store actor, writes proposed to raft as put_pool / put_calendar /
// delete_calendar), and the task view whose next_fire_times skip the dates of
// the calendar the task excludes.
#pragma once

#include "gateway/route_table.hpp"

namespace aisched::gateway {

void list_pools(route_call& c);       // GET /api/v1/pools
void get_pool(route_call& c);         // GET /api/v1/pools/{name}
void put_pool_route(route_call& c);   // PUT /api/v1/pools/{name} {"size"}
void list_calendars(route_call& c);   // GET /api/v1/calendars
void get_calendar(route_call& c);     // GET /api/v1/calendars/{name}
void put_calendar_route(route_call& c);     // PUT /api/v1/calendars/{name} {"dates", "description"}
void delete_calendar_route(route_call& c);  // DELETE /api/v1/calendars/{name}

/// Answers `status` with the REST view of `t`; when it excludes a calendar,
/// the calendar is read first, so next_fire_times skip its dates.
void reply_task_view(const api_context& ctx, const reply_fn& reply, int status, proto::task t);

}  // namespace aisched::gateway
