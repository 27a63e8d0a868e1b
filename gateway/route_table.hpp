// The one table of the gateway's routes (gateway/route_table.cpp): for each
// method and path pattern, the minimum role, the scope (tenant or cluster),
// the audit action and the handler. Dispatch (gateway/api.cpp), the auth gate
// (gateway/access.cpp), the metrics labels (gateway/metrics_route.cpp) and the
// OpenAPI and authorization tests all read it: a route cannot exist without its rule.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/http.hpp"

namespace aisched::gateway {

struct api_context;
class access;

/// What a route acts on. `tenant`: the caller's tenant's objects (everything
/// is scoped by req.who.tenant). `cluster`: the node or the group, shared by
/// every tenant; its audit entries also go to the cluster audit log.
enum class scope { tenant, cluster };

/// Path parameters (`{x}` segments) of the matched pattern, in order.
using path_params = std::array<std::string, 2>;

/// What a handler gets: the request (req.who set by the gate), its path
/// parameters and the reply to call exactly once.
struct route_call {
  const api_context& ctx;
  access& gate;
  http_request& req;
  reply_fn& reply;
  const path_params& params;
  const std::string& param(size_t i = 0) const { return params[i]; }
};

using route_handler = void (*)(route_call&);

/// One row: `method` on `pattern` (`{x}` matches any one segment) needs at
/// least `min` (nullopt: open, no token); a non-empty `action` marks a
/// mutation audited under that name ("cluster.*" exactly for cluster scope).
struct route {
  std::string_view method;
  std::string_view pattern;
  std::optional<role> min;
  gateway::scope scope;
  std::string_view action;
  route_handler handler;
};

/// Every row of the table, in matching order.
const std::vector<route>& routes();

/// The outcome of looking a request up: the first row matching method and
/// path (HEAD matches GET), or none; `allow` then lists the methods of the
/// rows matching the path alone ("" when no row does: 404, else 405).
struct route_match {
  const route* r = nullptr;
  path_params params;
  std::string allow;
};

/// Thread-safe; a segment comparison per row of the same depth, no regex.
route_match match_route(std::string_view method, std::string_view path);

/// The pattern of the first row matching `path` whatever the method, or
/// "other" (metrics labels: bounded cardinality whatever clients send).
std::string_view route_pattern(std::string_view path);

/// Every distinct pattern of the table, in table order.
std::vector<std::string_view> route_patterns();

/// Whether `path` matches `pattern` segment by segment (empty segments skipped).
bool route_matches(std::string_view pattern, std::string_view path);

}  // namespace aisched::gateway
