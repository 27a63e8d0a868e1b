// REST routes under /api/v1 (plus /healthz and /readyz): maps each HTTP request to typed
// requests to the raft actor (writes) and the store actor (reads) through a
// short-lived bridge actor, and maps replies and errors back to JSON.
#pragma once

#include <chrono>
#include <memory>
#include <functional>
#include <string>

#include "gateway/auth.hpp"
#include "actors/ai_features/judge.hpp"
#include "gateway/http.hpp"
#include "proto/analysis.hpp"
#include "proto/interfaces.hpp"

namespace boost::json {
class value;
}

namespace caf {
class actor_system;
}

namespace aisched::gateway {

struct ai_context;

/// Point reads of the applied state the gateway runs inline on its I/O thread.
/// A GET of one task or run is a single RocksDB lookup: doing it here saves the
/// three thread hand-offs of asking the (detached) store actor. Unset: every
/// read goes through `store`. Lists always do, since a page can scan far.
struct point_reads {
  std::function<caf::expected<proto::task>(const std::string& tenant, uint64_t id)> task;
  std::function<caf::expected<proto::instance>(const std::string& tenant, const std::string& id)>
      instance;
};

struct api_context {
  caf::actor_system* sys = nullptr;
  proto::raft_actor raft;
  proto::store_actor store;
  proto::trigger_actor trigger;
  proto::router_actor router;
  proto::backpressure_actor backpressure;
  std::string node_id;
  std::string http_addr;  // this gateway's "host:port", shown in the cluster view
  std::chrono::milliseconds timeout{10'000};
  std::shared_ptr<ai_context> ai;  // the AI chat routes (gateway/ai_routes.hpp); null: none here
  proto::analysis_actor analysis;  // failure analyses (gateway/ai_features.cpp)
  ai::judge_fn judge;              // the model for AI judgements; empty: none configured
  point_reads reads;
  /// Why this node's last storage write failed; "" while it succeeded (/readyz).
  std::function<std::string()> storage_problem;
  auth_options auth;  // off by default: every request is admin of tenant "default"
};

/// Checks a task beyond structure (proto::validate_task plus its schedule and
/// time zone): what a REST create or update requires.
caf::error validate_full(const proto::task& t);

/// The REST view of a task: its JSON plus `next_fire_times`.
boost::json::value task_view(const proto::task& t);

/// Builds the request handler serving the REST API from `ctx`.
handler_fn make_api(api_context ctx);

/// HTTP status for an error (400 invalid_argument, 404 not_found, 409 conflict ...).
unsigned http_status(const caf::error& err);

/// A JSON answer with `status`.
http_response json_response(unsigned status, const boost::json::value& v);

/// The answer for an error: its status and `{"error": {"code", "message", "field"}}`.
http_response error_response(const caf::error& err);

}  // namespace aisched::gateway
