// THE route table and its matcher; see route_table.hpp. README "Authentication"
// documents the same rules; tests/integration/auth_matrix_test.cpp checks every
// row against a real node for every role and tenant.
#include "gateway/route_table.hpp"

#include <algorithm>

#include "gateway/admin_routes.hpp"
#include "gateway/ai_features.hpp"
#include "gateway/ai_routes.hpp"
#include "gateway/api.hpp"
#include "gateway/auth_routes.hpp"
#include "gateway/cluster_members.hpp"
#include "gateway/cluster_view.hpp"
#include "gateway/console.hpp"
#include "gateway/control_routes.hpp"
#include "gateway/dag_route.hpp"
#include "gateway/load_history_route.hpp"
#include "gateway/metrics_route.hpp"
#include "gateway/report_route.hpp"
#include "gateway/secrets_routes.hpp"
#include "gateway/snapshot_route.hpp"
#include "gateway/task_routes.hpp"

namespace aisched::gateway {

namespace {

constexpr std::optional<role> open = std::nullopt;
constexpr std::optional<role> viewer = role::viewer;
constexpr std::optional<role> operator_ = role::operator_;
constexpr std::optional<role> admin = role::admin;  // of the caller's tenant
constexpr std::optional<role> cluster_admin = role::cluster_admin;
constexpr auto tenant = scope::tenant;
constexpr auto cluster = scope::cluster;

// clang-format off
/// The first row matching method and path wins: literal rows before the
/// `{x}` rows they would otherwise shadow.
const std::vector<route> table{
    // method   pattern                                     min            scope    audit action            handler
    // Open: health checks, metrics scraping, the console's files and logging in.
    {"GET",    "/",                                         open,          cluster, "",                     get_console},
    {"GET",    "/console/{asset}",                          open,          cluster, "",                     get_console},
    {"GET",    "/healthz",                                  open,          cluster, "",                     get_health},
    {"GET",    "/readyz",                                   open,          cluster, "",                     get_ready},
    {"GET",    "/metrics",                                  open,          cluster, "",                     get_metrics},
    {"POST",   "/api/v1/auth/login",                        open,          tenant,  "",                     login_route},  // audits itself
    // The node and the group.
    {"GET",    "/api/v1/version",                           viewer,        cluster, "",                     get_version},
    {"GET",    "/api/v1/openapi.json",                      viewer,        cluster, "",                     get_openapi},
    {"GET",    "/api/v1/cluster",                           viewer,        cluster, "",                     get_cluster},
    {"POST",   "/api/v1/cluster/members",                   cluster_admin, cluster, "cluster.add_member",   add_cluster_member},
    {"DELETE", "/api/v1/cluster/members/{id}",              cluster_admin, cluster, "cluster.remove_member", remove_cluster_member},
    {"GET",    "/api/v1/cluster/snapshot",                  cluster_admin, cluster, "cluster.snapshot",     get_cluster_snapshot},
    {"GET",    "/api/v1/admin/log-level",                   viewer,        cluster, "",                     get_log_level},
    {"PUT",    "/api/v1/admin/log-level",                   cluster_admin, cluster, "cluster.log_level",    set_log_level},
    {"GET",    "/api/v1/backpressure",                      viewer,        cluster, "",                     get_backpressure},
    {"GET",    "/api/v1/schedules/next",                    viewer,        tenant,  "",                     next_fire_times},
    // Tasks: viewers read, operators change, admins delete.
    {"GET",    "/api/v1/tasks",                             viewer,        tenant,  "",                     list_tasks},
    {"POST",   "/api/v1/tasks",                             operator_,     tenant,  "task.create",          create_task},
    {"GET",    "/api/v1/tasks/{id}",                        viewer,        tenant,  "",                     get_task},
    {"PUT",    "/api/v1/tasks/{id}",                        operator_,     tenant,  "task.update",          update_task},
    {"PATCH",  "/api/v1/tasks/{id}",                        operator_,     tenant,  "task.update",          update_task},
    {"DELETE", "/api/v1/tasks/{id}",                        admin,         tenant,  "task.delete",          delete_task},
    {"POST",   "/api/v1/tasks/{id}/pause",                  operator_,     tenant,  "task.pause",           pause_task},
    {"POST",   "/api/v1/tasks/{id}/resume",                 operator_,     tenant,  "task.resume",          resume_task},
    {"POST",   "/api/v1/tasks/{id}/trigger",                operator_,     tenant,  "task.trigger",         trigger_task},
    {"POST",   "/api/v1/tasks/{id}/backfill",               operator_,     tenant,  "task.backfill",        backfill_task},
    {"POST",   "/api/v1/tasks/{id}/runs",                   operator_,     tenant,  "task.enqueue",         enqueue_runs},
    {"POST",   "/api/v1/events/{name}",                     operator_,     tenant,  "event.publish",        publish_event},
    {"GET",    "/api/v1/dag",                               viewer,        tenant,  "",                     get_dag},
    // Scheduling controls: pools bound runs across tasks, calendars exclude dates.
    {"GET",    "/api/v1/pools",                             viewer,        tenant,  "",                     list_pools},
    {"GET",    "/api/v1/pools/{name}",                      viewer,        tenant,  "",                     get_pool},
    {"PUT",    "/api/v1/pools/{name}",                      admin,         tenant,  "pool.put",             put_pool_route},
    {"GET",    "/api/v1/calendars",                         viewer,        tenant,  "",                     list_calendars},
    {"GET",    "/api/v1/calendars/{name}",                  viewer,        tenant,  "",                     get_calendar},
    {"PUT",    "/api/v1/calendars/{name}",                  admin,         tenant,  "calendar.put",         put_calendar_route},
    {"DELETE", "/api/v1/calendars/{name}",                  admin,         tenant,  "calendar.delete",      delete_calendar_route},
    // Runs.
    {"GET",    "/api/v1/instances",                         viewer,        tenant,  "",                     list_instances},
    {"GET",    "/api/v1/instances/{id}",                    viewer,        tenant,  "",                     get_instance},
    {"POST",   "/api/v1/instances/{id}/cancel",             operator_,     tenant,  "instance.cancel",      cancel_instance},
    {"POST",   "/api/v1/instances/{id}/retry",              operator_,     tenant,  "instance.retry",       retry_instance_route},
    {"POST",   "/api/v1/instances/{id}/report",             operator_,     tenant,  "",                     report_instance},  // worker traffic
    {"GET",    "/api/v1/instances/{id}/output",             viewer,        tenant,  "",                     get_instance_output},
    {"GET",    "/api/v1/instances/{id}/attempts",           viewer,        tenant,  "",                     get_instance_attempts},
    {"GET",    "/api/v1/instances/{id}/analysis",           viewer,        tenant,  "",                     get_instance_analysis},
    // Workers of the caller's tenant.
    {"GET",    "/api/v1/workers",                           viewer,        tenant,  "",                     list_workers},
    {"POST",   "/api/v1/workers",                           operator_,     tenant,  "worker.register",      register_worker},
    {"GET",    "/api/v1/workers/load-history",              viewer,        tenant,  "",                     list_load_history},
    {"DELETE", "/api/v1/workers/{id}",                      admin,         tenant,  "worker.remove",        remove_worker},
    {"GET",    "/api/v1/workers/{id}/load-history",         viewer,        tenant,  "",                     get_worker_load_history},
    {"POST",   "/api/v1/workers/{id}/heartbeat",            operator_,     tenant,  "",                     heartbeat_worker},  // worker traffic
    {"POST",   "/api/v1/workers/{id}/drain",                operator_,     tenant,  "worker.drain",         drain_worker},
    {"POST",   "/api/v1/workers/{id}/undrain",              operator_,     tenant,  "worker.undrain",       undrain_worker},
    {"PUT",    "/api/v1/workers/{id}/shared",               cluster_admin, cluster, "cluster.share_worker", share_worker_route},
    // Who am I, users, tokens, audit (another tenant's: cluster admin only, checked by the handler).
    {"GET",    "/api/v1/auth/whoami",                       viewer,        tenant,  "",                     whoami},
    {"GET",    "/api/v1/users",                             admin,         tenant,  "",                     list_users},
    {"POST",   "/api/v1/users",                             admin,         tenant,  "user.create",          create_user_route},
    {"DELETE", "/api/v1/users/{name}",                      admin,         tenant,  "user.delete",          delete_user_route},
    {"GET",    "/api/v1/tokens",                            admin,         tenant,  "",                     list_tokens},
    {"POST",   "/api/v1/tokens",                            admin,         tenant,  "token.create",         create_token_route},
    {"DELETE", "/api/v1/tokens/{id}",                       admin,         tenant,  "token.revoke",         revoke_token},
    {"GET",    "/api/v1/audit",                             admin,         tenant,  "",                     list_audit_route},
    // Secrets of the caller's tenant: viewers see names, admins set and delete
    // values (write-only); the cluster admin re-wraps every data key.
    {"GET",    "/api/v1/secrets",                           viewer,        tenant,  "",                     list_secrets},
    {"PUT",    "/api/v1/secrets/{name}",                    admin,         tenant,  "secret.set",           put_secret_route},
    {"DELETE", "/api/v1/secrets/{name}",                    admin,         tenant,  "secret.delete",        delete_secret_route},
    {"POST",   "/api/v1/cluster/secrets-key/rotate",        cluster_admin, cluster, "cluster.rotate_secrets_key", rotate_secrets_key},
    // AI: what spends model tokens needs operator; reading what is stored, viewer.
    {"POST",   "/api/v1/ai/chat",                           operator_,     tenant,  "",                     ai_chat},
    {"POST",   "/api/v1/ai/confirm",                        operator_,     tenant,  "",                     ai_confirm},
    {"GET",    "/api/v1/ai/ws",                             operator_,     tenant,  "",                     ai_ws},
    {"GET",    "/api/v1/ai/conversations",                  viewer,        tenant,  "",                     ai_conversations},
    {"GET",    "/api/v1/ai/conversations/{id}/messages",    viewer,        tenant,  "",                     ai_messages},
    {"POST",   "/api/v1/ai/analyze/{instance_id}",          operator_,     tenant,  "",                     analyze_instance},
    {"GET",    "/api/v1/ai/advice",                         operator_,     tenant,  "",                     get_advice},
    {"POST",   "/api/v1/ai/task-draft",                     operator_,     tenant,  "",                     draft_task},
    {"GET",    "/api/v1/ai/tasks/{id}/duration",            operator_,     tenant,  "",                     predict_duration},
    {"GET",    "/api/v1/ai/trends",                         operator_,     tenant,  "",                     get_trends},
};
// clang-format on

constexpr size_t max_depth = 8;  // deeper than any pattern: no match

/// Splits `s` into its non-empty segments; false if there are more than max_depth.
bool split(std::string_view s, std::array<std::string_view, max_depth>& out, size_t& n) {
  n = 0;
  size_t i = 0;
  while (i < s.size()) {
    auto j = s.find('/', i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) {
      if (n == max_depth) return false;
      out[n++] = s.substr(i, j - i);
    }
    i = j + 1;
  }
  return true;
}

/// The table's patterns split once, so a lookup compares segments only.
struct compiled_row {
  std::array<std::string_view, max_depth> seg;
  size_t depth = 0;
};

const std::vector<compiled_row>& compiled() {
  static const std::vector<compiled_row> rows = [] {
    std::vector<compiled_row> out(table.size());
    for (size_t i = 0; i < table.size(); ++i) split(table[i].pattern, out[i].seg, out[i].depth);
    return out;
  }();
  return rows;
}

bool is_param(std::string_view seg) { return !seg.empty() && seg.front() == '{'; }

/// Whether row `r` matches the split path; fills `params` when it does.
bool matches(const compiled_row& r, const std::array<std::string_view, max_depth>& have,
             size_t depth, path_params* params) {
  if (r.depth != depth) return false;
  for (size_t i = 0; i < depth; ++i)
    if (!is_param(r.seg[i]) && r.seg[i] != have[i]) return false;
  if (params) {
    size_t k = 0;
    for (size_t i = 0; i < depth && k < params->size(); ++i)
      if (is_param(r.seg[i])) (*params)[k++] = std::string(have[i]);
  }
  return true;
}

bool method_matches(std::string_view want, std::string_view have) {
  return want == have || (want == "GET" && have == "HEAD");
}

}  // namespace

const std::vector<route>& routes() { return table; }

route_match match_route(std::string_view method, std::string_view path) {
  route_match out;
  std::array<std::string_view, max_depth> have;
  size_t depth = 0;
  if (!split(path, have, depth)) return out;
  const auto& rows = compiled();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!matches(rows[i], have, depth, nullptr)) continue;
    if (method_matches(table[i].method, method)) {
      out.r = &table[i];
      matches(rows[i], have, depth, &out.params);
      out.allow.clear();
      return out;
    }
    auto m = table[i].method;
    if (out.allow.find(m) == std::string::npos) {
      if (!out.allow.empty()) out.allow += ", ";
      out.allow += m;
    }
  }
  return out;
}

std::string_view route_pattern(std::string_view path) {
  std::array<std::string_view, max_depth> have;
  size_t depth = 0;
  if (split(path, have, depth)) {
    const auto& rows = compiled();
    for (size_t i = 0; i < rows.size(); ++i)
      if (matches(rows[i], have, depth, nullptr)) return table[i].pattern;
  }
  return "other";
}

std::vector<std::string_view> route_patterns() {
  std::vector<std::string_view> out;
  for (auto& r : table)
    if (std::find(out.begin(), out.end(), r.pattern) == out.end()) out.push_back(r.pattern);
  return out;
}

bool route_matches(std::string_view pattern, std::string_view path) {
  std::array<std::string_view, max_depth> have;
  compiled_row r;
  size_t depth = 0;
  return split(pattern, r.seg, r.depth) && split(path, have, depth) &&
         matches(r, have, depth, nullptr);
}

}  // namespace aisched::gateway
