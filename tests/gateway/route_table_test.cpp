// The route table (gateway/route_table.cpp) on its own: every row is reachable
// and complete, the rules of the routes that matter most, the matcher's 404 /
// 405 / Allow, path parameters. tests/integration/auth_matrix_test.cpp checks
// every row against a real node; openapi_test checks it against the document.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "gateway/route_table.hpp"

namespace aisched::gateway {
namespace {

/// A concrete path for `pattern`: each `{x}` becomes "x1".
std::string sample_path(std::string_view pattern) {
  std::string out;
  bool in_param = false;
  for (char c : pattern) {
    if (c == '{') {
      in_param = true;
      out += "x1";
    }
    if (!in_param) out += c;
    if (c == '}') in_param = false;
  }
  return out;
}

TEST(route_table_test, every_row_is_reachable_complete_and_listed_once) {
  std::set<std::string> seen;
  for (auto& r : routes()) {
    auto where = std::string(r.method) + " " + std::string(r.pattern);
    EXPECT_TRUE(seen.insert(where).second) << where << " is listed twice";
    EXPECT_NE(r.handler, nullptr) << where;
    EXPECT_TRUE(r.method == "GET" || r.method == "POST" || r.method == "PUT" ||
                r.method == "PATCH" || r.method == "DELETE")
        << where;
    auto m = match_route(r.method, sample_path(r.pattern));
    EXPECT_EQ(m.r, &r) << where << " is shadowed by "
                       << (m.r ? std::string(m.r->method) + " " + std::string(m.r->pattern) : "-");
  }
}

TEST(route_table_test, cluster_scope_is_audited_in_the_cluster_log_and_needs_cluster_admin) {
  for (auto& r : routes()) {
    auto where = std::string(r.method) + " " + std::string(r.pattern);
    bool cluster_action = r.action.substr(0, 8) == "cluster.";
    if (!r.action.empty()) {
      EXPECT_EQ(cluster_action, r.scope == scope::cluster)
          << where << ": cluster-scoped actions, and only they, are named cluster.*";
    }
    if (r.scope == scope::cluster && r.method != "GET") {
      EXPECT_EQ(r.min, role::cluster_admin) << where << " changes the group: cluster_admin only";
    }
    if (r.min == role::cluster_admin) {
      EXPECT_EQ(r.scope, scope::cluster) << where;
    }
  }
}

TEST(route_table_test, rules_of_the_routes_that_matter) {
  struct expect {
    const char* method;
    const char* path;
    std::optional<role> min;
    const char* action;
  };
  constexpr std::optional<role> open = std::nullopt;
  const expect cases[] = {
      {"GET", "/healthz", open, ""},
      {"GET", "/metrics", open, ""},
      {"GET", "/", open, ""},
      {"GET", "/console/app.js", open, ""},
      {"POST", "/api/v1/auth/login", open, ""},
      {"GET", "/api/v1/auth/whoami", role::viewer, ""},
      {"GET", "/api/v1/tasks/7", role::viewer, ""},
      {"HEAD", "/api/v1/tasks/7", role::viewer, ""},
      {"POST", "/api/v1/tasks", role::operator_, "task.create"},
      {"PATCH", "/api/v1/tasks/7", role::operator_, "task.update"},
      {"DELETE", "/api/v1/tasks/7", role::admin, "task.delete"},
      {"POST", "/api/v1/workers/w1/heartbeat", role::operator_, ""},
      {"DELETE", "/api/v1/workers/w1", role::admin, "worker.remove"},
      {"GET", "/api/v1/workers/load-history", role::viewer, ""},
      {"POST", "/api/v1/users", role::admin, "user.create"},
      {"GET", "/api/v1/audit", role::admin, ""},
      // The group and the node: the cluster admin's, not a tenant admin's.
      {"POST", "/api/v1/cluster/members", role::cluster_admin, "cluster.add_member"},
      {"DELETE", "/api/v1/cluster/members/n2", role::cluster_admin, "cluster.remove_member"},
      {"PUT", "/api/v1/admin/log-level", role::cluster_admin, "cluster.log_level"},
      // A backup holds every tenant's state: cluster admin, audited though it reads.
      {"GET", "/api/v1/cluster/snapshot", role::cluster_admin, "cluster.snapshot"},
      {"GET", "/api/v1/admin/log-level", role::viewer, ""},
      // What spends model tokens needs operator.
      {"POST", "/api/v1/ai/chat", role::operator_, ""},
      {"POST", "/api/v1/ai/confirm", role::operator_, ""},
      {"GET", "/api/v1/ai/ws", role::operator_, ""},
      {"POST", "/api/v1/ai/analyze/7-1-0", role::operator_, ""},
      {"POST", "/api/v1/ai/task-draft", role::operator_, ""},
      {"GET", "/api/v1/ai/conversations/c1/messages", role::viewer, ""},
      {"GET", "/api/v1/instances/7-1-0/analysis", role::viewer, ""},
  };
  for (auto& c : cases) {
    auto m = match_route(c.method, c.path);
    ASSERT_TRUE(m.r) << c.method << " " << c.path;
    EXPECT_EQ(m.r->min, c.min) << c.method << " " << c.path;
    EXPECT_EQ(m.r->action, c.action) << c.method << " " << c.path;
  }
}

TEST(route_table_test, unknown_paths_are_404_and_known_paths_with_other_methods_405) {
  for (auto p : {"/api/v1/something-new", "/api/v2/tasks", "/api/v1/tasks/1/explode",
                 "/console/a/b", "/a/b/c/d/e/f/g/h/i/j"}) {
    auto m = match_route("POST", p);
    EXPECT_FALSE(m.r) << p;
    EXPECT_EQ(m.allow, "") << p;
  }
  auto m = match_route("DELETE", "/api/v1/instances/7-1-0");
  EXPECT_FALSE(m.r);
  EXPECT_EQ(m.allow, "GET");
  m = match_route("POST", "/api/v1/tasks/7");
  EXPECT_FALSE(m.r);
  EXPECT_EQ(m.allow, "GET, PUT, PATCH, DELETE");
  m = match_route("DELETE", "/api/v1/admin/log-level");
  EXPECT_EQ(m.allow, "GET, PUT");
}

TEST(route_table_test, path_parameters_come_out_in_order) {
  auto m = match_route("POST", "/api/v1/tasks/42/pause");
  ASSERT_TRUE(m.r);
  EXPECT_EQ(m.params[0], "42");
  m = match_route("GET", "/api/v1/ai/conversations/c-9/messages");
  ASSERT_TRUE(m.r);
  EXPECT_EQ(m.params[0], "c-9");
  m = match_route("GET", "//api/v1//tasks/7/");  // empty segments are skipped
  ASSERT_TRUE(m.r);
  EXPECT_EQ(m.r->pattern, "/api/v1/tasks/{id}");
  EXPECT_EQ(m.params[0], "7");
  EXPECT_EQ(match_route("POST", "/api/v1/tasks").params[0], "");
}

}  // namespace
}  // namespace aisched::gateway
