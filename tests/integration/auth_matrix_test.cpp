// The authorization matrix, generated from the route table
// (gateway/route_table.cpp) and checked on a real `aisched --auth` node: every
// route x {anonymous, viewer, operator, tenant admin, cluster admin} x {own
// tenant, other tenant} answers the class the table says (401 without a token
// where one is needed, 403 below the route's role or, on the user, token and
// audit routes, for another tenant unless cluster admin; else allowed, i.e.
// neither). Requests are shaped so an allowed call changes little (bodies fail
// validation after the checks). The table must match gateway/openapi.json, and
// every row needs a request recipe here: a new route cannot skip the matrix.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "gateway/console.hpp"
#include "gateway/openapi.hpp"
#include "gateway/route_table.hpp"
#include "support/auth_client.hpp"
#include "support/node_process.hpp"
#include "support/openapi.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
using namespace aisched::test::auth;
using aisched::gateway::route;
using aisched::proto::role;
namespace json = boost::json;

namespace {

/// The objects of one tenant that path parameters name.
struct tenant_objects {
  std::string tenant, task, instance, worker, user, token;
};

/// How to call one row: what its `{x}` names and the body to send.
struct recipe {
  enum class param { none, task, instance, worker, user, token, member, event, conversation, asset,
                     secret, control };
  param kind = param::none;
  std::string body;           // "{tenant}" is replaced by the target tenant
  bool names_tenant = false;  // ?tenant= (or the body) names the target: another's is 403
};

using P = recipe::param;

/// One recipe per row of the table, by "METHOD pattern". Bodies fail
/// validation once authorized, so allowed calls change little.
const std::map<std::string, recipe>& recipes() {
  static const std::map<std::string, recipe> r{
      {"GET /", {}},
      {"GET /console/{asset}", {P::asset}},
      {"GET /healthz", {}},
      {"GET /readyz", {}},
      {"GET /metrics", {}},
      {"POST /api/v1/auth/login", {P::none, "{}"}},
      {"GET /api/v1/version", {}},
      {"GET /api/v1/openapi.json", {}},
      {"GET /api/v1/cluster", {}},
      {"POST /api/v1/cluster/members", {P::none, "{}"}},
      {"DELETE /api/v1/cluster/members/{id}", {P::member}},
      {"GET /api/v1/cluster/snapshot", {}},
      {"GET /api/v1/admin/log-level", {}},
      {"PUT /api/v1/admin/log-level", {P::none, "{}"}},
      {"GET /api/v1/backpressure", {}},
      {"GET /api/v1/schedules/next", {}},
      {"GET /api/v1/tasks", {}},
      {"POST /api/v1/tasks", {P::none, "{}"}},
      {"GET /api/v1/tasks/{id}", {P::task}},
      {"PUT /api/v1/tasks/{id}", {P::task, R"({"kind":"no-such-kind"})"}},
      {"PATCH /api/v1/tasks/{id}", {P::task, R"({"kind":"no-such-kind"})"}},
      {"DELETE /api/v1/tasks/{id}", {P::task}},
      {"POST /api/v1/tasks/{id}/pause", {P::task}},
      {"POST /api/v1/tasks/{id}/resume", {P::task}},
      {"POST /api/v1/tasks/{id}/trigger", {P::task}},
      {"POST /api/v1/tasks/{id}/backfill", {P::task, "{}"}},
      {"POST /api/v1/tasks/{id}/runs", {P::task, "{}"}},
      {"POST /api/v1/events/{name}", {P::event, "[]"}},
      {"GET /api/v1/dag", {}},
      {"GET /api/v1/pools", {}},
      {"GET /api/v1/pools/{name}", {P::control}},
      {"PUT /api/v1/pools/{name}", {P::control, R"({"size":"four"})"}},
      {"GET /api/v1/calendars", {}},
      {"GET /api/v1/calendars/{name}", {P::control}},
      {"PUT /api/v1/calendars/{name}", {P::control, R"({"dates":"soon"})"}},
      {"DELETE /api/v1/calendars/{name}", {P::control}},
      {"GET /api/v1/instances", {}},
      {"GET /api/v1/instances/{id}", {P::instance}},
      {"POST /api/v1/instances/{id}/cancel", {P::instance}},
      {"POST /api/v1/instances/{id}/retry", {P::instance}},
      {"POST /api/v1/instances/{id}/report", {P::instance, "[]"}},
      {"GET /api/v1/instances/{id}/output", {P::instance}},
      {"GET /api/v1/instances/{id}/attempts", {P::instance}},
      {"GET /api/v1/instances/{id}/analysis", {P::instance}},
      {"GET /api/v1/workers", {}},
      {"POST /api/v1/workers", {P::none, "{}"}},
      {"GET /api/v1/workers/load-history", {}},
      {"DELETE /api/v1/workers/{id}", {P::worker}},
      {"GET /api/v1/workers/{id}/load-history", {P::worker}},
      {"POST /api/v1/workers/{id}/heartbeat", {P::worker, "[]"}},
      {"POST /api/v1/workers/{id}/drain", {P::worker}},
      {"POST /api/v1/workers/{id}/undrain", {P::worker}},
      {"PUT /api/v1/workers/{id}/shared", {P::worker, "{}"}},
      {"GET /api/v1/auth/whoami", {}},
      {"GET /api/v1/users", {P::none, "", true}},
      {"POST /api/v1/users",
       {P::none, R"({"name":"nobody","password":"short","tenant":"{tenant}"})", true}},
      {"DELETE /api/v1/users/{name}", {P::user, "", true}},
      {"GET /api/v1/tokens", {P::none, "", true}},
      {"POST /api/v1/tokens", {P::none, R"({"name":"t","role":"nope","tenant":"{tenant}"})", true}},
      {"DELETE /api/v1/tokens/{id}", {P::token, "", true}},
      {"GET /api/v1/audit", {P::none, "", true}},
      {"GET /api/v1/secrets", {}},
      {"PUT /api/v1/secrets/{name}", {P::secret, "{}"}},
      {"DELETE /api/v1/secrets/{name}", {P::secret}},
      {"POST /api/v1/cluster/secrets-key/rotate", {}},
      {"POST /api/v1/ai/chat", {P::none, "{}"}},
      {"POST /api/v1/ai/confirm", {P::none, "{}"}},
      {"GET /api/v1/ai/ws", {}},
      {"GET /api/v1/ai/conversations", {}},
      {"GET /api/v1/ai/conversations/{id}/messages", {P::conversation}},
      {"POST /api/v1/ai/analyze/{instance_id}", {P::instance}},
      {"GET /api/v1/ai/advice", {}},
      {"POST /api/v1/ai/task-draft", {P::none, "{}"}},
      {"GET /api/v1/ai/tasks/{id}/duration", {P::task}},
      {"GET /api/v1/ai/trends", {P::none}},
  };
  return r;
}

std::string key_of(const route& r) { return std::string(r.method) + " " + std::string(r.pattern); }

std::string value_for(P kind, const tenant_objects& o) {
  switch (kind) {
    case P::task: return o.task;
    case P::instance: return o.instance;
    case P::worker: return o.worker;
    case P::user: return o.user;
    case P::token: return o.token;
    case P::member: return "no-such-member";
    case P::event: return "matrix-event";
    case P::conversation: return "no-such-conversation";
    case P::asset: return "app.js";
    case P::secret: return "matrix-secret";
    case P::control: return "matrix-control";
    case P::none: return "";
  }
  return "";
}

/// The request target for row `r` acting on `target`'s objects.
std::string target_of(const route& r, const recipe& how, const tenant_objects& target) {
  std::string out;
  bool in_param = false;
  for (char c : r.pattern) {
    if (c == '{') {
      in_param = true;
      out += value_for(how.kind, target);
    }
    if (!in_param) out += c;
    if (c == '}') in_param = false;
  }
  if (how.names_tenant) out += "?tenant=" + target.tenant;
  return out;
}

std::string body_of(const recipe& how, const tenant_objects& target) {
  auto body = how.body;
  if (auto i = body.find("{tenant}"); i != std::string::npos)
    body.replace(i, 8, target.tenant);
  return body;
}

enum class outcome { unauthenticated, forbidden, allowed };

const char* name_of(outcome o) {
  return o == outcome::unauthenticated ? "401" : o == outcome::forbidden ? "403" : "allowed";
}

outcome class_of(unsigned status) {
  return status == 401 ? outcome::unauthenticated
         : status == 403 ? outcome::forbidden
                         : outcome::allowed;
}

/// A caller of the matrix: its role (nullopt: anonymous) and token.
struct caller {
  std::string name;
  std::optional<role> r;
  std::string token;
  const tenant_objects* own = nullptr;
  const tenant_objects* other = nullptr;
};

/// What the table says `who` gets on row `r`, acting in its own tenant or another.
outcome expected(const route& r, const recipe& how, const caller& who, bool other_tenant) {
  if (!r.min) return outcome::allowed;
  if (!who.r) return outcome::unauthenticated;
  if (*who.r < *r.min) return outcome::forbidden;
  if (other_tenant && how.names_tenant && *who.r < role::cluster_admin) return outcome::forbidden;
  return outcome::allowed;
}

class auth_matrix : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = std::make_unique<node_process>(dir_.path() + "/data", auth_args(dir_.path()));
    ASSERT_TRUE(node_->running());
    port_ = node_->http_port();
    admin_ = admin_login(port_);
    ASSERT_FALSE(admin_.empty()) << tail(node_->log());
    create_user(port_, admin_, "bviewer", "viewer", "beta");
    create_user(port_, admin_, "boperator", "operator", "beta");
    create_user(port_, admin_, "badmin", "admin", "beta");
    create_user(port_, admin_, "victim-d", "viewer");
    create_user(port_, admin_, "victim-b", "viewer", "beta");
    viewer_ = login(port_, "bviewer", "bviewer-password");
    operator_ = login(port_, "boperator", "boperator-password");
    tenant_admin_ = login(port_, "badmin", "badmin-password");
    fill(default_, "default", admin_, "victim-d", "wd");
    fill(beta_, "beta", tenant_admin_, "victim-b", "wb");
  }

  /// Creates a task, one run of it, a worker and a token in `tenant`, as `token`.
  void fill(tenant_objects& o, const std::string& tenant, const std::string& token,
            const std::string& user, const std::string& worker) {
    o.tenant = tenant;
    o.user = user;
    o.worker = worker;
    auto t = call(port_, "POST", "/api/v1/tasks", token, R"({"name":"m","kind":"noop"})");
    ASSERT_EQ(t.status, 201u) << t.body;
    o.task = std::to_string(num(parse(t).as_object(), "id"));
    auto run = call(port_, "POST", "/api/v1/tasks/" + o.task + "/trigger", token);
    ASSERT_EQ(run.status, 201u) << run.body;
    o.instance = str(parse(run).at("instances").as_array().at(0).as_object(), "id");
    auto w = call(port_, "POST", "/api/v1/workers", token,
                  R"({"id":")" + worker + R"(","callback_url":"http://127.0.0.1:9/","max_load":1})");
    ASSERT_EQ(w.status, 201u) << w.body;
    auto k = call(port_, "POST", "/api/v1/tokens", token, R"({"name":"m","role":"viewer"})");
    ASSERT_EQ(k.status, 201u) << k.body;
    o.token = str(parse(k).as_object(), "id");
  }

  temp_dir dir_;
  std::unique_ptr<node_process> node_;
  uint16_t port_ = 0;
  std::string admin_, viewer_, operator_, tenant_admin_;
  tenant_objects default_, beta_;
};

}  // namespace

TEST(auth_matrix_table, every_route_has_a_recipe_and_the_table_matches_openapi) {
  std::set<std::string> served, documented;
  for (auto& r : aisched::gateway::routes()) {
    EXPECT_TRUE(recipes().count(key_of(r))) << key_of(r) << " has no request recipe in this test";
    if (!aisched::gateway::is_console_path(r.pattern))
      served.insert(std::string(r.method) + " " + openapi::normalise(r.pattern));
  }
  for (auto& [k, _] : recipes()) {
    bool listed = false;
    for (auto& r : aisched::gateway::routes()) listed |= key_of(r) == k;
    EXPECT_TRUE(listed) << k << " has a recipe but no row in gateway/route_table.cpp";
  }
  auto doc = json::parse(aisched::gateway::openapi_document());
  for (auto& o : openapi::operations(doc)) {
    auto m = o.method;
    for (auto& c : m) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    documented.insert(m + " " + openapi::normalise(o.path));
  }
  EXPECT_EQ(served, documented) << "gateway/openapi.json and the route table differ";
}

TEST_F(auth_matrix, every_route_answers_each_role_and_tenant_as_the_table_says) {
  const std::vector<caller> callers{
      {"anonymous", std::nullopt, "", &beta_, &default_},
      {"viewer", role::viewer, viewer_, &beta_, &default_},
      {"operator", role::operator_, operator_, &beta_, &default_},
      {"tenant admin", role::admin, tenant_admin_, &beta_, &default_},
      {"cluster admin", role::cluster_admin, admin_, &default_, &beta_},
  };
  std::ostringstream wrong;
  size_t cells = 0, mismatches = 0;
  for (auto& r : aisched::gateway::routes()) {
    auto i = recipes().find(key_of(r));
    if (i == recipes().end()) continue;  // reported by the test above
    for (auto& who : callers)
      for (bool other : {false, true}) {
        const auto& target = other ? *who.other : *who.own;
        auto path = target_of(r, i->second, target);
        auto res = call(port_, std::string(r.method), path, who.token, body_of(i->second, target));
        ++cells;
        auto want = expected(r, i->second, who, other);
        if (res.status == 0 || class_of(res.status) != want) {
          ++mismatches;
          wrong << "  " << r.method << " " << path << " as " << who.name
                << (other ? " (other tenant)" : " (own tenant)") << ": want " << name_of(want)
                << ", got " << res.status << " " << res.body.substr(0, 120) << "\n";
        }
      }
  }
  EXPECT_EQ(cells, aisched::gateway::routes().size() * 10);
  EXPECT_EQ(mismatches, 0u) << mismatches << " of " << cells << " cells differ:\n" << wrong.str();
}

TEST_F(auth_matrix, a_path_without_that_method_is_405_with_allow_and_an_unknown_path_404) {
  auto r = call(port_, "POST", "/api/v1/tasks/" + default_.task, admin_);
  EXPECT_EQ(r.status, 405u) << r.body;
  EXPECT_EQ(r.allow, "GET, PUT, PATCH, DELETE");
  EXPECT_EQ(error_code(r), "method_not_allowed");
  auto members = call(port_, "GET", "/api/v1/cluster/members", admin_);
  EXPECT_EQ(members.status, 405u);
  EXPECT_EQ(members.allow, "POST");
  // No silent default: an unlisted path is 404 for everyone, with or without a token.
  for (auto token : {std::string(), admin_}) {
    auto unknown = call(port_, "DELETE", "/api/v1/something-new", token);
    EXPECT_EQ(unknown.status, 404u) << unknown.body;
  }
}
