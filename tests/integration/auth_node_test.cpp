// Authentication, roles, tenants and audit on real `aisched` nodes started with
// --auth: login, 401 / 403 by role, expired / garbage / revoked tokens, API
// tokens (also on a follower of a 3-node group), tenant isolation of tasks,
// instances and workers (404, never 403), the audit log, and the failed-login
// limits (429 with Retry-After per user and per address, no timing difference
// between known and unknown users). Every wait polls with a deadline;
// processes are the harness's, killed by pid.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <algorithm>
#include <fstream>
#include <memory>
#include <string>

#include "gateway/auth.hpp"
#include "support/auth_client.hpp"
#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

using namespace aisched::test::auth;

int64_t create_task(uint16_t port, const std::string& token, const std::string& name) {
  auto r = call(port, "POST", "/api/v1/tasks", token,
                json::serialize(json::object{{"name", name}, {"kind", "noop"}}));
  EXPECT_EQ(r.status, 201u) << r.body;
  return r.status == 201 ? num(parse(r).as_object(), "id") : 0;
}

/// Ids listed by GET `target` ("items"[].id as strings).
std::vector<std::string> listed_ids(uint16_t port, const std::string& token,
                                    const std::string& target) {
  auto r = call(port, "GET", target, token);
  EXPECT_EQ(r.status, 200u) << target << ": " << r.body;
  std::vector<std::string> out;
  if (r.status != 200) return out;
  auto v = parse(r);
  for (auto& x : v.at("items").as_array()) {
    auto& id = x.as_object().at("id");
    out.push_back(id.is_string() ? std::string(id.as_string()) : json::serialize(id));
  }
  return out;
}

bool contains(const std::vector<std::string>& xs, const std::string& x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

/// One node with auth on, its admin logged in.
class auth_node : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = std::make_unique<node_process>(dir_.path() + "/data", auth_args(dir_.path()));
    ASSERT_TRUE(node_->running());
    port_ = node_->http_port();
    admin_ = admin_login(port_);
    ASSERT_FALSE(admin_.empty()) << tail(node_->log());
  }
  temp_dir dir_;
  std::unique_ptr<node_process> node_;
  uint16_t port_ = 0;
  std::string admin_;
};

}  // namespace

TEST(auth_startup, auth_without_a_secret_refuses_to_start_with_status_2) {
  temp_dir dir;
  auto r = run_command({AISCHED_BINARY, "--auth", "--data-dir", dir.path() + "/data",
                        "--http-addr", "127.0.0.1:0", "--cluster-addr", "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("secret"), std::string::npos) << r.err;
}

TEST_F(auth_node, only_healthz_metrics_and_login_are_open) {
  EXPECT_EQ(http_call(port_, "GET", "/healthz").status, 200u);
  EXPECT_EQ(http_call(port_, "GET", "/metrics").status, 200u);
  for (auto target : {"/api/v1/tasks", "/api/v1/instances", "/api/v1/workers", "/api/v1/cluster",
                      "/api/v1/audit", "/api/v1/auth/whoami", "/api/v1/openapi.json"}) {
    auto r = http_call(port_, "GET", target);
    EXPECT_EQ(r.status, 401u) << target;
    EXPECT_EQ(error_code(r), "unauthenticated") << target << ": " << r.body;
  }
  auto w = call(port_, "GET", "/api/v1/auth/whoami", admin_);
  ASSERT_EQ(w.status, 200u) << w.body;
  EXPECT_EQ(str(parse(w).as_object(), "subject"), "admin");
  EXPECT_EQ(str(parse(w).as_object(), "role"), "cluster_admin");
  EXPECT_EQ(str(parse(w).as_object(), "tenant"), "default");
}

TEST_F(auth_node, login_with_a_bad_password_or_unknown_user_is_401) {
  for (auto body : {R"({"username":"admin","password":"wrong-password"})",
                    R"({"username":"nobody","password":"whatever-123"})"}) {
    auto r = http_call(port_, "POST", "/api/v1/auth/login", body);
    EXPECT_EQ(r.status, 401u) << r.body;
    EXPECT_EQ(error_code(r), "unauthenticated");
  }
  auto bad = http_call(port_, "POST", "/api/v1/auth/login", R"({"username":"admin"})");
  EXPECT_EQ(bad.status, 400u) << bad.body;
  auto ok = http_call(port_, "POST", "/api/v1/auth/login",
                      R"({"username":"admin","password":"admin-password-1"})");
  ASSERT_EQ(ok.status, 200u);
  auto o = parse(ok).as_object();
  EXPECT_EQ(str(o, "role"), "cluster_admin");
  EXPECT_EQ(str(o, "tenant"), "default");
  EXPECT_GT(rfc3339_ms(str(o, "expires_at")), wall_ms());
}

TEST_F(auth_node, viewer_reads_operator_writes_admin_deletes) {
  create_user(port_, admin_, "vic", "viewer");
  create_user(port_, admin_, "otto", "operator");
  auto vic = login(port_, "vic", "vic-password");
  auto otto = login(port_, "otto", "otto-password");

  EXPECT_EQ(call(port_, "GET", "/api/v1/tasks", vic).status, 200u);
  auto denied = call(port_, "POST", "/api/v1/tasks", vic, R"({"name":"x","kind":"noop"})");
  EXPECT_EQ(denied.status, 403u) << denied.body;
  EXPECT_EQ(error_code(denied), "forbidden");

  auto id = std::to_string(create_task(port_, otto, "by-otto"));
  EXPECT_EQ(call(port_, "POST", "/api/v1/tasks/" + id + "/pause", otto).status, 200u);
  EXPECT_EQ(call(port_, "POST", "/api/v1/tasks/" + id + "/pause", vic).status, 403u);
  auto del = call(port_, "DELETE", "/api/v1/tasks/" + id, otto);
  EXPECT_EQ(del.status, 403u) << del.body;
  EXPECT_EQ(call(port_, "GET", "/api/v1/users", otto).status, 403u);
  EXPECT_EQ(call(port_, "POST", "/api/v1/tokens", otto, R"({"name":"t"})").status, 403u);
  EXPECT_EQ(call(port_, "DELETE", "/api/v1/tasks/" + id, admin_).status, 204u);
  EXPECT_EQ(call(port_, "GET", "/api/v1/tasks/" + id, vic).status, 404u);
}

TEST_F(auth_node, expired_garbage_and_revoked_tokens_are_401) {
  aisched::gateway::auth_options opts;
  opts.secret = secret;
  opts.token_ttl = std::chrono::seconds(60);
  aisched::proto::user u;
  u.name = "admin";
  u.r = aisched::proto::role::admin;
  auto expired = aisched::gateway::issue_jwt(opts, u, wall_ms() / 1000 - 3600);
  ASSERT_TRUE(expired);
  auto r = call(port_, "GET", "/api/v1/tasks", *expired);
  EXPECT_EQ(r.status, 401u);
  EXPECT_NE(r.body.find("expired"), std::string::npos) << r.body;
  EXPECT_EQ(call(port_, "GET", "/api/v1/tasks", "garbage").status, 401u);
  EXPECT_EQ(call(port_, "GET", "/api/v1/tasks", "ais_0000").status, 401u);

  auto t = call(port_, "POST", "/api/v1/tokens", admin_, R"({"name":"ci","role":"operator"})");
  ASSERT_EQ(t.status, 201u) << t.body;
  auto tok = parse(t).as_object();
  auto token = str(tok, "token"), id = str(tok, "id");
  ASSERT_EQ(token.rfind("ais_", 0), 0u);
  EXPECT_EQ(str(tok, "role"), "operator");
  EXPECT_GT(create_task(port_, token, "by-token"), 0);
  EXPECT_EQ(call(port_, "DELETE", "/api/v1/tasks/1", token).status, 403u);  // operator
  auto listed = call(port_, "GET", "/api/v1/tokens", admin_);
  EXPECT_NE(listed.body.find(id), std::string::npos);
  EXPECT_EQ(listed.body.find(token), std::string::npos) << "a secret was listed";
  // A token may not carry more rights than its creator has.
  auto too_much = call(port_, "POST", "/api/v1/tokens", token, R"({"name":"x","role":"admin"})");
  EXPECT_EQ(too_much.status, 403u);
  EXPECT_EQ(call(port_, "DELETE", "/api/v1/tokens/" + id, admin_).status, 204u);
  auto revoked = call(port_, "GET", "/api/v1/tasks", token);
  EXPECT_EQ(revoked.status, 401u) << revoked.body;
}

TEST_F(auth_node, tenants_never_see_or_change_each_others_tasks_instances_and_workers) {
  // The admin of "default" provisions tenant "beta" (and nothing more there).
  create_user(port_, admin_, "bea", "admin", "beta");
  auto bea = login(port_, "bea", "bea-password");
  auto a_task = std::to_string(create_task(port_, admin_, "a-task"));
  auto b_task = std::to_string(create_task(port_, bea, "b-task"));

  // Tasks: 404 for every operation on the other tenant's id, absent from lists.
  EXPECT_FALSE(contains(listed_ids(port_, bea, "/api/v1/tasks"), a_task));
  EXPECT_TRUE(contains(listed_ids(port_, bea, "/api/v1/tasks"), b_task));
  EXPECT_FALSE(contains(listed_ids(port_, admin_, "/api/v1/tasks"), b_task));
  EXPECT_EQ(call(port_, "GET", "/api/v1/tasks/" + a_task, bea).status, 404u);
  EXPECT_EQ(call(port_, "PUT", "/api/v1/tasks/" + a_task, bea, R"({"name":"hijack"})").status, 404u);
  for (auto action : {"pause", "resume", "trigger"})
    EXPECT_EQ(call(port_, "POST", "/api/v1/tasks/" + a_task + "/" + action, bea).status, 404u)
        << action;
  EXPECT_EQ(call(port_, "DELETE", "/api/v1/tasks/" + a_task, bea).status, 404u);
  EXPECT_EQ(call(port_, "GET", "/api/v1/tasks/" + a_task, admin_).status, 200u);
  auto dag = call(port_, "GET", "/api/v1/dag", bea);
  EXPECT_EQ(dag.body.find("a-task"), std::string::npos) << dag.body;

  // Instances: a run of tenant default is invisible to beta.
  auto fired = call(port_, "POST", "/api/v1/tasks/" + a_task + "/trigger", admin_);
  ASSERT_EQ(fired.status, 201u) << fired.body;
  auto run = str(parse(fired).at("instances").as_array().at(0).as_object(), "id");
  EXPECT_EQ(call(port_, "GET", "/api/v1/instances/" + run, bea).status, 404u);
  EXPECT_EQ(call(port_, "GET", "/api/v1/instances/" + run + "/output", bea).status, 404u);
  EXPECT_EQ(call(port_, "POST", "/api/v1/instances/" + run + "/cancel", bea).status, 404u);
  EXPECT_FALSE(contains(listed_ids(port_, bea, "/api/v1/instances"), run));
  EXPECT_TRUE(contains(listed_ids(port_, admin_, "/api/v1/instances"), run));

  // Workers: the built-in worker n1 is tenant default's; beta's registers into beta.
  auto reg = call(port_, "POST", "/api/v1/workers", bea,
                  R"({"id":"wb","callback_url":"http://127.0.0.1:9/","max_load":1})");
  ASSERT_EQ(reg.status, 201u) << reg.body;
  EXPECT_EQ(str(parse(reg).as_object(), "tenant"), "beta");
  EXPECT_TRUE(contains(listed_ids(port_, bea, "/api/v1/workers"), "wb"));
  EXPECT_FALSE(contains(listed_ids(port_, bea, "/api/v1/workers"), "n1"));
  EXPECT_FALSE(contains(listed_ids(port_, admin_, "/api/v1/workers"), "wb"));
  EXPECT_EQ(call(port_, "POST", "/api/v1/workers/n1/drain", bea).status, 404u);
  EXPECT_EQ(call(port_, "POST", "/api/v1/workers/n1/heartbeat", bea, "{}").status, 404u);
  EXPECT_EQ(call(port_, "DELETE", "/api/v1/workers/n1", bea).status, 404u);
  EXPECT_EQ(call(port_, "POST", "/api/v1/workers/wb/drain", admin_).status, 404u);
  // Worker ids are scoped by tenant: default's own "wb" neither collides with
  // beta's nor says that beta has one (issue 41 item 7).
  auto same = call(port_, "POST", "/api/v1/workers", admin_,
                   R"({"id":"wb","callback_url":"http://127.0.0.1:9/"})");
  EXPECT_EQ(same.status, 201u) << same.body;
  EXPECT_EQ(listed_ids(port_, bea, "/api/v1/workers"), std::vector<std::string>{"wb"});

  // Users and tokens: beta's admin manages beta only and cannot provision others.
  EXPECT_EQ(call(port_, "DELETE", "/api/v1/users/admin", bea).status, 404u);
  auto users = call(port_, "GET", "/api/v1/users", bea);
  EXPECT_EQ(users.body.find("\"name\":\"admin\""), std::string::npos) << users.body;
  auto provision = call(port_, "POST", "/api/v1/users", bea,
                        R"({"name":"evil","password":"evil-password","tenant":"default"})");
  EXPECT_EQ(provision.status, 403u) << provision.body;
}

TEST_F(auth_node, audit_lists_mutations_with_subject_tenant_result_and_via) {
  create_user(port_, admin_, "otto", "operator");
  create_user(port_, admin_, "bea", "admin", "beta");
  auto otto = login(port_, "otto", "otto-password");
  auto bea = login(port_, "bea", "bea-password");
  auto id = std::to_string(create_task(port_, otto, "audited"));
  auto via = call(port_, "POST", "/api/v1/tasks/" + id + "/pause", otto, "",
                  {{"X-Aisched-Via", "ai-agent"}});
  EXPECT_EQ(via.status, 200u);
  EXPECT_EQ(call(port_, "DELETE", "/api/v1/tasks/" + id, otto).status, 403u);
  http_call(port_, "POST", "/api/v1/auth/login", R"({"username":"otto","password":"nope-nope"})");
  create_task(port_, bea, "beta-task");

  auto find = [&](const json::array& items, const std::string& action,
                  const std::string& result) -> const json::object* {
    for (auto& e : items)
      if (str(e.as_object(), "action") == action && str(e.as_object(), "result") == result)
        return &e.as_object();
    return nullptr;
  };
  json::value page;
  ASSERT_TRUE(eventually([&] {
    auto r = call(port_, "GET", "/api/v1/audit?limit=100", admin_);
    if (r.status != 200) return false;
    page = parse(r);
    auto& items = page.at("items").as_array();
    return find(items, "task.create", "ok") && find(items, "task.pause", "ok") &&
           find(items, "task.delete", "forbidden") && find(items, "auth.login", "unauthenticated");
  })) << json::serialize(page);
  auto& items = page.at("items").as_array();
  auto* created = find(items, "task.create", "ok");
  EXPECT_EQ(str(*created, "subject"), "otto");
  EXPECT_EQ(str(*created, "tenant"), "default");
  EXPECT_EQ(str(*created, "target"), id);
  EXPECT_FALSE(str(*created, "at").empty());
  EXPECT_EQ(str(*find(items, "task.pause", "ok"), "via"), "ai-agent");
  EXPECT_EQ(str(*find(items, "task.delete", "forbidden"), "subject"), "otto");
  for (auto& e : items) EXPECT_EQ(str(e.as_object(), "tenant"), "default");

  // Tenant beta's admin sees beta's entries only.
  json::value beta;
  ASSERT_TRUE(eventually([&] {
    auto r = call(port_, "GET", "/api/v1/audit", bea);
    if (r.status != 200) return false;
    beta = parse(r);
    return find(beta.at("items").as_array(), "task.create", "ok") != nullptr;
  })) << json::serialize(beta);
  for (auto& e : beta.at("items").as_array()) EXPECT_EQ(str(e.as_object(), "tenant"), "beta");

  // Paging: limit=1 pages through with the cursor, newest first.
  auto first = call(port_, "GET", "/api/v1/audit?limit=1", admin_);
  ASSERT_EQ(first.status, 200u);
  auto cursor = str(parse(first).as_object(), "next_cursor");
  ASSERT_FALSE(cursor.empty());
  auto second = call(port_, "GET", "/api/v1/audit?limit=1&cursor=" + cursor, admin_);
  ASSERT_EQ(second.status, 200u) << second.body;
  EXPECT_EQ(parse(second).at("items").as_array().size(), 1u);
  EXPECT_NE(first.body, second.body);
}

TEST_F(auth_node, the_group_and_other_tenants_are_the_cluster_admins_and_audited_for_it) {
  create_user(port_, admin_, "bea", "admin", "beta");
  create_user(port_, admin_, "bob", "viewer", "beta");
  auto bea = login(port_, "bea", "bea-password");
  auto who = call(port_, "GET", "/api/v1/auth/whoami", admin_);
  EXPECT_EQ(str(parse(who).as_object(), "role"), "cluster_admin") << who.body;

  // A tenant's admin administers its tenant, not the group nor other tenants.
  auto member = call(port_, "POST", "/api/v1/cluster/members", bea,
                     R"({"id":"n9","cluster_addr":"127.0.0.1:9"})");
  EXPECT_EQ(member.status, 403u) << member.body;
  EXPECT_EQ(call(port_, "DELETE", "/api/v1/cluster/members/n1", bea).status, 403u);
  EXPECT_EQ(call(port_, "PUT", "/api/v1/admin/log-level", bea, R"({"level":"debug"})").status, 403u);
  EXPECT_EQ(call(port_, "GET", "/api/v1/users?tenant=default", bea).status, 403u);
  EXPECT_EQ(call(port_, "GET", "/api/v1/audit?scope=cluster", bea).status, 403u);
  auto escalate = call(port_, "POST", "/api/v1/users", bea,
                       R"({"name":"evil","password":"evil-password","role":"cluster_admin"})");
  EXPECT_EQ(escalate.status, 403u) << escalate.body;
  EXPECT_EQ(call(port_, "GET", "/api/v1/users?tenant=beta", bea).status, 200u);

  // The cluster admin does, and sees other tenants' users.
  auto level = call(port_, "PUT", "/api/v1/admin/log-level", admin_, R"({"level":"info"})");
  EXPECT_EQ(level.status, 200u) << level.body;
  auto users = call(port_, "GET", "/api/v1/users?tenant=beta", admin_);
  ASSERT_EQ(users.status, 200u) << users.body;
  EXPECT_NE(users.body.find("\"bob\""), std::string::npos) << users.body;
  EXPECT_EQ(call(port_, "DELETE", "/api/v1/users/bob?tenant=beta", admin_).status, 204u);

  // Both attempts are in the cluster audit, with their actor's tenant and name;
  // the refused one also in tenant beta's own log.
  auto find = [](const json::value& page, const std::string& subject, const std::string& result) {
    for (auto& e : page.at("items").as_array())
      if (str(e.as_object(), "action") == "cluster.log_level" &&
          str(e.as_object(), "subject") == subject && str(e.as_object(), "result") == result)
        return true;
    return false;
  };
  json::value cluster;
  EXPECT_TRUE(eventually([&] {
    auto r = call(port_, "GET", "/api/v1/audit?scope=cluster", admin_);
    if (r.status != 200) return false;
    cluster = parse(r);
    return find(cluster, "bea", "forbidden") && find(cluster, "admin", "ok");
  })) << json::serialize(cluster);
  for (auto& e : cluster.at("items").as_array()) {
    auto& o = e.as_object();
    EXPECT_EQ(str(o, "action").rfind("cluster.", 0), 0u) << json::serialize(o);
    EXPECT_EQ(str(o, "tenant"), str(o, "subject") == "bea" ? "beta" : "default");
  }
  EXPECT_TRUE(eventually([&] {
    auto r = call(port_, "GET", "/api/v1/audit", bea);
    return r.status == 200 && find(parse(r), "bea", "forbidden");
  }));
}

TEST(auth_cluster, api_token_works_on_a_follower_and_its_revocation_reaches_it) {
  temp_dir dir;
  std::vector<uint16_t> ports{free_port(), free_port(), free_port()};
  std::string peers;
  for (size_t i = 0; i < 3; ++i)
    peers += (i ? "," : "") + std::string("n") + std::to_string(i + 1) + "=127.0.0.1:" +
             std::to_string(ports[i]);
  // An --auth group needs node-to-node authentication (README "Cluster admission").
  auto cluster_secret = write_file(dir.path() + "/cluster.secret", std::string(64, 'c'));
  chmod(cluster_secret.c_str(), 0600);
  std::vector<std::unique_ptr<node_process>> nodes;
  for (size_t i = 0; i < 3; ++i) {
    auto id = "n" + std::to_string(i + 1);
    auto args = auth_args(dir.path());
    args.insert(args.end(), {"--node-id", id, "--peers", peers, "--roles", "scheduler,gateway",
                             "--cluster-secret-file", cluster_secret});
    nodes.push_back(std::make_unique<node_process>(dir.path() + "/" + id, args, 20s,
                                                   "127.0.0.1:" + std::to_string(ports[i])));
    ASSERT_TRUE(nodes.back()->running());
  }
  // Log in on any member; find a follower through the cluster view.
  auto admin = admin_login(nodes[0]->http_port());
  ASSERT_FALSE(admin.empty());
  std::string leader;
  ASSERT_TRUE(eventually([&] {
    auto r = call(nodes[0]->http_port(), "GET", "/api/v1/cluster", admin);
    if (r.status == 200) leader = str(parse(r).as_object(), "leader");
    return !leader.empty();
  }, 20s));
  size_t follower = leader == "n1" ? 1 : 0;
  auto port = nodes[follower]->http_port();

  auto t = call(port, "POST", "/api/v1/tokens", admin, R"({"name":"ci","role":"operator"})");
  ASSERT_EQ(t.status, 201u) << t.body;
  auto token = str(parse(t).as_object(), "token"), id = str(parse(t).as_object(), "id");
  auto other = nodes[follower == 0 ? 2 : 0]->http_port();
  EXPECT_TRUE(eventually([&] { return call(other, "GET", "/api/v1/tasks", token).status == 200; }));
  EXPECT_GT(create_task(port, token, "from-a-follower"), 0);
  ASSERT_EQ(call(port, "DELETE", "/api/v1/tokens/" + id, admin).status, 204u);
  // Within the 2 s token cache everywhere.
  EXPECT_TRUE(eventually([&] { return call(other, "GET", "/api/v1/tasks", token).status == 401; },
                         10s));
}

#ifdef AISCHEDCTL_BINARY
TEST_F(auth_node, aischedctl_logs_in_and_manages_users_tokens_and_the_audit_log) {
  auto server = "http://127.0.0.1:" + std::to_string(port_);
  auto ctl = [&](std::vector<std::string> args, const std::string& token = "",
                 const std::string& input = "") {
    args.insert(args.begin(), {AISCHEDCTL_BINARY, "--server", server});
    if (!token.empty()) args.insert(args.end(), {"--token", token});
    return run_command(args, 10s, input);
  };
  auto pw = write_file(dir_.path() + "/pw", admin_password);
  auto login = ctl({"login", "-u", "admin", "--password-file", pw});
  ASSERT_EQ(login.exit_code, 0) << login.err;
  auto token = login.out.substr(0, login.out.find('\n'));
  EXPECT_FALSE(token.empty());
  auto bad = ctl({"login", "-u", "admin"}, "", "wrong-password\n");
  EXPECT_EQ(bad.exit_code, 6) << bad.err;  // 401
  EXPECT_EQ(ctl({"task", "list"}).exit_code, 6);

  auto who = ctl({"whoami", "-o", "json"}, token);
  ASSERT_EQ(who.exit_code, 0) << who.err;
  EXPECT_NE(who.out.find("\"admin\""), std::string::npos) << who.out;

  auto user = ctl({"user", "create", "vera", "--role", "viewer"}, token, "vera-password\n");
  ASSERT_EQ(user.exit_code, 0) << user.err;
  auto users = ctl({"user", "list", "-o", "json"}, token);
  EXPECT_NE(users.out.find("vera"), std::string::npos) << users.out;
  auto vera = ctl({"login", "-u", "vera"}, "", "vera-password\n");
  ASSERT_EQ(vera.exit_code, 0) << vera.err;
  auto vera_token = vera.out.substr(0, vera.out.find('\n'));
  EXPECT_EQ(ctl({"task", "list"}, vera_token).exit_code, 0);
  EXPECT_EQ(ctl({"user", "list"}, vera_token).exit_code, 7);  // 403

  auto created = ctl({"token", "create", "ci", "--role", "operator", "-o", "json"}, token);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  auto doc = json::parse(created.out).as_object();
  auto id = str(doc, "id");
  EXPECT_EQ(str(doc, "token").rfind("ais_", 0), 0u);
  auto listed = ctl({"token", "list"}, token);
  EXPECT_NE(listed.out.find(id), std::string::npos) << listed.out;
  EXPECT_EQ(ctl({"task", "list"}, str(doc, "token")).exit_code, 0);
  EXPECT_EQ(ctl({"token", "revoke", id}, token).exit_code, 0);
  EXPECT_EQ(ctl({"task", "list"}, str(doc, "token")).exit_code, 6);
  EXPECT_EQ(ctl({"user", "delete", "vera"}, token).exit_code, 0);
  EXPECT_EQ(ctl({"user", "delete", "vera"}, token).exit_code, 3);  // 404

  EXPECT_TRUE(eventually([&] {
    auto audit = ctl({"audit", "list", "--limit", "50"}, token);
    return audit.exit_code == 0 && audit.out.find("token.revoke") != std::string::npos &&
           audit.out.find("user.delete") != std::string::npos;
  }));
}
#endif

// -- failed-login limits ------------------------------------------------------------

namespace {

http_result try_login(uint16_t port, const std::string& user, const std::string& password) {
  return http_call(port, "POST", "/api/v1/auth/login",
                   json::serialize(json::object{{"username", user}, {"password", password}}));
}

/// Whether the audit log (read with `admin`) gets an `auth.login` entry with `result`.
bool audited_login(uint16_t port, const std::string& admin, const std::string& result) {
  return eventually([&] {
    auto r = call(port, "GET", "/api/v1/audit?limit=100", admin);
    if (r.status != 200) return false;
    auto page = parse(r);  // kept alive: the loop walks into it
    for (auto& e : page.at("items").as_array())
      if (str(e.as_object(), "action") == "auth.login" && str(e.as_object(), "result") == result)
        return true;
    return false;
  });
}

}  // namespace

TEST_F(auth_node, the_eleventh_wrong_password_within_a_minute_is_429_with_retry_after) {
  for (int i = 0; i < 10; ++i) {
    auto r = try_login(port_, "admin", "wrong-password");
    ASSERT_EQ(r.status, 401u) << "attempt " << i + 1 << ": " << r.body;
  }
  auto r = try_login(port_, "admin", "wrong-password");
  ASSERT_EQ(r.status, 429u) << r.body;
  EXPECT_EQ(error_code(r), "too_many_requests") << r.body;
  ASSERT_TRUE(r.headers.count("retry-after")) << r.body;
  auto wait = std::stoi(r.headers.at("retry-after"));
  EXPECT_GE(wait, 1);
  EXPECT_LE(wait, 60);
  // Locked: not even the right password is tested now.
  EXPECT_EQ(try_login(port_, "admin", admin_password).status, 429u);
  EXPECT_TRUE(audited_login(port_, admin_, "too_many_requests")) << "refusals are audited";
}

TEST_F(auth_node, one_address_trying_many_names_is_429_after_ten_failures) {
  for (int i = 0; i < 10; ++i) {
    auto r = try_login(port_, "user-" + std::to_string(i), "whatever-123");
    ASSERT_EQ(r.status, 401u) << r.body;
  }
  auto r = try_login(port_, "user-10", "whatever-123");
  EXPECT_EQ(r.status, 429u) << r.body;
  EXPECT_EQ(error_code(r), "too_many_requests");
  EXPECT_TRUE(r.headers.count("retry-after"));
}

TEST_F(auth_node, a_login_takes_as_long_for_an_unknown_user_as_for_a_known_one) {
  // Alternating, so load on the machine hits both alike; medians of five (ten
  // failures in all: the limit, not past it).
  std::vector<double> known, unknown;
  for (int i = 0; i < 5; ++i) {
    for (auto [user, out] : {std::pair{"admin", &known}, std::pair{"nobody", &unknown}}) {
      auto start = std::chrono::steady_clock::now();
      auto r = try_login(port_, user, "wrong-password");
      out->push_back(seconds_since(start));
      ASSERT_EQ(r.status, 401u) << r.body;
    }
  }
  auto median = [](std::vector<double> xs) {
    std::sort(xs.begin(), xs.end());
    return xs[xs.size() / 2];
  };
  auto k = median(known), u = median(unknown);
  EXPECT_LT(std::max(k, u) / std::min(k, u), 3.0)
      << "known " << k * 1000 << " ms, unknown " << u * 1000 << " ms: the timing tells them apart";
}
