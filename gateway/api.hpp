// The REST API's entry (make_api): looks each request up in the route table
// (gateway/route_table.hpp), answers 404 / 405 itself, and hands the matched
// row to the auth gate, which calls its handler. Also the node, run and worker
// handlers (mapping requests to the raft, store, router and trigger actors
// through short-lived bridge actors) and the JSON mapping of replies and errors.
#pragma once

#include <chrono>
#include <memory>
#include <functional>
#include <string>

#include "gateway/auth.hpp"
#include "actors/ai_features/judge.hpp"
#include "common/http.hpp"
#include "gateway/route_table.hpp"
#include "proto/analysis.hpp"
#include "proto/interfaces.hpp"

namespace boost::json {
class value;
}

namespace caf {
class actor_system;
}

namespace aisched::storage {
class rocks;
class secret_keeper;
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
  /// Why this node's scheduled backups keep failing (actors/backup: after 3 in
  /// a row, while it leads); "" while they work or are off (/readyz).
  std::function<std::string()> backup_problem;
  auth_options auth;  // off by default: every request is cluster_admin of tenant "default"
  /// The node's cluster key holder (gateway/secrets_routes.hpp); disabled
  /// without --secrets-key-file: secret routes but the list answer
  /// secrets_disabled. Null (tests): every secret route does.
  std::shared_ptr<storage::secret_keeper> secrets;
  /// The node's database, which GET /api/v1/cluster/snapshot exports from a
  /// pinned snapshot (gateway/snapshot_route.hpp). Null (tests): 503.
  std::shared_ptr<storage::rocks> db;
};

/// Checks a task beyond structure (proto::validate_task plus its schedule and
/// time zone) and that it can fire after `now`: what a REST create or update
/// requires. `stored` is the task an update replaces (nullptr for a create):
/// a past `at` or an `end_at` before the first fire is refused only when the
/// request sets it, so editing a task whose window has passed still works.
caf::error validate_full(const proto::task& t, unix_ms now, const proto::task* stored = nullptr);

/// The REST view of a task: its JSON plus `next_fire_times`, which skip the
/// dates of `excluded` (the calendar the task excludes, if the caller read it;
/// gateway/control_routes.hpp reply_task_view does).
boost::json::value task_view(const proto::task& t, const proto::calendar* excluded = nullptr);

// -- handlers of this file (registered in gateway/route_table.cpp) ----------------

void get_health(route_call& c);        // GET /healthz
void get_ready(route_call& c);         // GET /readyz
void get_version(route_call& c);       // GET /api/v1/version
void get_openapi(route_call& c);       // GET /api/v1/openapi.json
void get_backpressure(route_call& c);  // GET /api/v1/backpressure
void next_fire_times(route_call& c);   // GET /api/v1/schedules/next?cron&tz&after&n&end_at&calendar
void list_instances(route_call& c);    // GET /api/v1/instances?task_id&state&since&until&limit&cursor
void get_instance(route_call& c);         // GET /api/v1/instances/{id}
void cancel_instance(route_call& c);      // POST /api/v1/instances/{id}/cancel
void retry_instance_route(route_call& c);  // POST /api/v1/instances/{id}/retry
void get_instance_attempts(route_call& c);  // GET /api/v1/instances/{id}/attempts
void get_instance_output(route_call& c);  // GET /api/v1/instances/{id}/output?follow
void list_workers(route_call& c);      // GET /api/v1/workers (the caller's tenant's)
void register_worker(route_call& c);   // POST /api/v1/workers
void share_worker_route(route_call& c);  // PUT /api/v1/workers/{id}/shared (cluster admin)
void heartbeat_worker(route_call& c);  // POST /api/v1/workers/{id}/heartbeat
void drain_worker(route_call& c);      // POST /api/v1/workers/{id}/drain
void undrain_worker(route_call& c);    // POST /api/v1/workers/{id}/undrain
void remove_worker(route_call& c);     // DELETE /api/v1/workers/{id}

/// Builds the request handler serving the REST API from `ctx`.
handler_fn make_api(api_context ctx);

/// HTTP status for an error (400 invalid_argument, 404 not_found, 409 conflict ...).
unsigned http_status(const caf::error& err);

/// A JSON answer with `status`.
http_response json_response(unsigned status, const boost::json::value& v);

/// The answer for an error: its status and `{"error": {"code", "message", "field"}}`,
/// with the code in `error_code` too.
http_response error_response(const caf::error& err);

/// The same for a REST code errc has none for (method_not_allowed,
/// too_many_requests, secrets_disabled, llm_not_configured): no actor answers it.
http_response error_response(unsigned status, const std::string& code, const std::string& message,
                             const std::string& field = "");

/// 405 `method_not_allowed`, with `Allow: <allow>` (the methods the path has).
http_response method_not_allowed(const std::string& allow);

}  // namespace aisched::gateway
