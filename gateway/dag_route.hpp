// GET /api/v1/dag: the dependency graph of the caller's tenant.
#pragma once

#include <string>

#include "gateway/api.hpp"

namespace aisched::gateway {

/// Answers every task of `tenant` as a node with its latest run state, and an
/// edge per dependency (upstream -> downstream), paging through the store.
void dag_route(const api_context& ctx, const std::string& tenant, reply_fn& reply);

/// GET /api/v1/dag for the caller's tenant, as the route table's handler.
void get_dag(route_call& c);

}  // namespace aisched::gateway
