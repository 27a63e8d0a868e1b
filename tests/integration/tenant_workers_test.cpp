// Workers as trust boundaries, on a real --auth node: a worker belongs to the
// tenant that registered it, and no other tenant's run ever reaches it (nor
// the default tenant's built-in worker unless that is shared); a run no worker
// can take says why; a report counts only when it comes with the credential
// of the worker its attempt was dispatched to, for that attempt.
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/http_receiver.hpp"
#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

using headers = std::map<std::string, std::string>;

constexpr const char* admin_password = "admin-password-1";

std::string write_file(const std::string& path, const std::string& content) {
  std::ofstream(path) << content << "\n";
  return path;
}

http_result call(uint16_t port, const std::string& method, const std::string& target,
                 const std::string& token, const std::string& body = "", headers extra = {}) {
  extra["Authorization"] = "Bearer " + token;
  return http_call(port, method, target, body, 10s, extra);
}

std::string login(uint16_t port, const std::string& user, const std::string& password) {
  std::string token;
  eventually(
      [&] {
        auto r = http_call(port, "POST", "/api/v1/auth/login",
                           json::serialize(json::object{{"username", user}, {"password", password}}));
        if (r.status == 200) token = str(parse(r).as_object(), "token");
        return !token.empty();
      },
      20s);
  EXPECT_FALSE(token.empty()) << user << " could not log in";
  return token;
}

class tenant_workers : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = std::make_unique<node_process>(
        dir_.path() + "/data",
        std::vector<std::string>{
            "--auth", "--auth-secret-file",
            write_file(dir_.path() + "/secret", "tenant-workers-test-secret-0123456789"),
            "--admin-password-file", write_file(dir_.path() + "/admin", admin_password)});
    ASSERT_TRUE(node_->running());
    port_ = node_->http_port();
    auto admin = login(port_, "admin", admin_password);
    for (auto [name, tenant] : {std::pair{"alice", "acme"}, std::pair{"bob", "bravo"}}) {
      json::object doc{{"name", name},
                       {"password", std::string(name) + "-password"},
                       {"role", "operator"},
                       {"tenant", tenant}};
      auto r = call(port_, "POST", "/api/v1/users", admin, json::serialize(doc));
      ASSERT_EQ(r.status, 201u) << r.body;
    }
    alice_ = login(port_, "alice", "alice-password");
    bob_ = login(port_, "bob", "bob-password");
  }

  /// Registers an external worker calling back to `rx`; returns its credential.
  std::string register_worker(const std::string& token, const std::string& id,
                              const http_receiver& rx) {
    auto r = call(port_, "POST", "/api/v1/workers", token,
                  json::serialize(json::object{
                      {"id", id}, {"callback_url", rx.url("")}, {"max_load", 4}}));
    EXPECT_EQ(r.status, 201u) << r.body;
    return r.status == 201 ? str(parse(r).as_object(), "credential") : "";
  }

  /// Triggers a run of a new noop task of the caller; returns the run's id.
  std::string run_of(const std::string& token, const std::string& name) {
    auto r = call(port_, "POST", "/api/v1/tasks", token,
                  json::serialize(json::object{{"name", name}, {"kind", "noop"}}));
    EXPECT_EQ(r.status, 201u) << r.body;
    auto id = num(parse(r).as_object(), "id");
    r = call(port_, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger", token);
    EXPECT_EQ(r.status, 201u) << r.body;
    if (r.status != 201) return "";
    auto v = parse(r);
    return str(v.at("instances").as_array().at(0).as_object(), "id");
  }

  json::object run(const std::string& token, const std::string& id) {
    auto r = call(port_, "GET", "/api/v1/instances/" + id, token);
    return r.status == 200 ? parse(r).as_object() : json::object{};
  }

  static bool delivered(const http_receiver& rx, const std::string& run_id) {
    for (auto& q : rx.requests())
      if (q.body.find(run_id) != std::string::npos) return true;
    return false;
  }

  temp_dir dir_;
  std::unique_ptr<node_process> node_;
  uint16_t port_ = 0;
  std::string alice_, bob_;
};

}  // namespace

TEST_F(tenant_workers, another_tenants_worker_never_receives_a_run_and_the_run_says_why) {
  http_receiver bobs(std::vector<int>{202});
  ASSERT_FALSE(register_worker(bob_, "bw", bobs).empty());
  auto run_id = run_of(alice_, "acme-job");
  ASSERT_FALSE(run_id.empty());
  // Neither bravo's worker nor the default tenant's built-in worker takes it:
  // it waits, and says why.
  ASSERT_TRUE(eventually([&] { return !str(run(alice_, run_id), "error").empty(); }, 15s))
      << json::serialize(run(alice_, run_id));
  auto x = run(alice_, run_id);
  EXPECT_EQ(str(x, "state"), "pending");
  EXPECT_EQ(str(x, "error"), "no worker of tenant acme is registered");
  EXPECT_FALSE(delivered(bobs, run_id)) << "tenant bravo's worker received tenant acme's run";
  // Bravo's own run does go to bravo's worker.
  auto bobs_run = run_of(bob_, "bravo-job");
  EXPECT_TRUE(eventually([&] { return delivered(bobs, bobs_run); }, 15s));
  EXPECT_FALSE(delivered(bobs, run_id));
  // Once acme has a worker, the reason goes and the run is dispatched there.
  http_receiver alices(std::vector<int>{202});
  ASSERT_FALSE(register_worker(alice_, "aw", alices).empty());
  EXPECT_TRUE(eventually([&] { return delivered(alices, run_id); }, 15s));
  EXPECT_EQ(str(run(alice_, run_id), "error"), "");
  // Each tenant lists only its own workers.
  auto listed = call(port_, "GET", "/api/v1/workers", bob_).body;
  EXPECT_NE(listed.find("\"bw\""), std::string::npos) << listed;
  EXPECT_EQ(listed.find("\"aw\""), std::string::npos) << listed;
}

TEST_F(tenant_workers, a_report_counts_only_from_the_dispatched_worker_for_its_attempt) {
  http_receiver rx(std::vector<int>{202}), other_rx(std::vector<int>{202});
  auto credential = register_worker(alice_, "aw", rx);
  ASSERT_FALSE(credential.empty());
  auto run_id = run_of(alice_, "acme-job");
  ASSERT_TRUE(eventually([&] { return delivered(rx, run_id); }, 15s));
  // Now a second acme worker exists, so alice can hold a valid credential of
  // a worker the attempt was not dispatched to.
  auto other = register_worker(alice_, "aw2", other_rx);
  auto report = [&](const std::string& worker, int attempt, const std::string& cred,
                    const std::string& output) {
    json::object doc{{"worker_id", worker}, {"attempt", attempt}, {"state", "success"},
                     {"output", output}};
    headers h;
    if (!cred.empty()) h["X-Worker-Credential"] = cred;
    return call(port_, "POST", "/api/v1/instances/" + run_id + "/report", alice_,
                json::serialize(doc), h);
  };
  EXPECT_EQ(report("aw", 1, "", "FAKED").status, 403u) << "no credential";
  EXPECT_EQ(report("aw", 1, other, "FAKED").status, 403u) << "another worker's credential";
  EXPECT_EQ(report("aw2", 1, other, "FAKED").status, 409u) << "not the dispatched worker";
  EXPECT_EQ(report("aw", 2, credential, "FAKED").status, 409u) << "not the current attempt";
  EXPECT_EQ(str(run(alice_, run_id), "state"), "dispatched");
  // Bob cannot even see the run.
  EXPECT_EQ(call(port_, "POST", "/api/v1/instances/" + run_id + "/report", bob_,
                 R"({"worker_id":"aw","attempt":1,"state":"success"})",
                 {{"X-Worker-Credential", credential}})
                .status,
            404u);
  // The real report stands.
  auto r = report("aw", 1, credential, "real");
  EXPECT_EQ(r.status, 200u) << r.body;
  auto x = run(alice_, run_id);
  EXPECT_EQ(str(x, "state"), "success");
  EXPECT_EQ(str(x, "output"), "real");
}

TEST_F(tenant_workers, only_the_cluster_admin_shares_a_worker_and_the_mark_binds_its_tenant) {
  auto admin = login(port_, "admin", admin_password);  // the bootstrap admin: cluster_admin
  // A tenant admin of bravo may not share bravo's worker.
  auto r = call(port_, "POST", "/api/v1/users", admin,
                R"({"name":"bea","password":"bea-password","role":"admin","tenant":"bravo"})");
  ASSERT_EQ(r.status, 201u) << r.body;
  auto bea = login(port_, "bea", "bea-password");
  http_receiver bobs(std::vector<int>{202});
  ASSERT_FALSE(register_worker(bob_, "bw", bobs).empty());
  r = call(port_, "PUT", "/api/v1/workers/bw/shared", bea, R"({"tenant":"bravo","shared":true})");
  EXPECT_EQ(r.status, 403u) << r.body;
  r = call(port_, "PUT", "/api/v1/workers/bw/shared", admin, R"({"shared":true})");
  EXPECT_EQ(r.status, 400u) << r.body;
  EXPECT_NE(r.body.find("tenant"), std::string::npos) << r.body;
  // Unshared, acme's run waits; shared by the cluster admin, bravo's worker takes it.
  auto waiting = run_of(alice_, "acme-job");
  ASSERT_TRUE(eventually([&] { return !str(run(alice_, waiting), "error").empty(); }, 15s));
  EXPECT_FALSE(delivered(bobs, waiting));
  r = call(port_, "PUT", "/api/v1/workers/bw/shared", admin, R"({"tenant":"bravo","shared":true})");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_TRUE(parse(r).as_object().at("registered").as_bool()) << r.body;
  EXPECT_TRUE(eventually([&] { return delivered(bobs, waiting); }, 15s));
  // The mark survives the worker's re-registration (it is replicated, not the
  // registry's memory)...
  ASSERT_EQ(call(port_, "DELETE", "/api/v1/workers/bw", admin).status, 404u)
      << "the default tenant's admin does not own bravo's worker";
  r = call(port_, "DELETE", "/api/v1/workers/bw", bea);
  ASSERT_EQ(r.status, 204u) << r.body;
  ASSERT_FALSE(register_worker(bob_, "bw", bobs).empty());
  auto again = run_of(alice_, "acme-job-2");
  EXPECT_TRUE(eventually([&] { return delivered(bobs, again); }, 15s));
  // ...but binds bravo: when acme registers the same id, that worker is not
  // shared, so bravo's mark never sends bravo's runs to acme.
  ASSERT_EQ(call(port_, "DELETE", "/api/v1/workers/bw", bea).status, 204u);
  http_receiver alices(std::vector<int>{202});
  ASSERT_FALSE(register_worker(alice_, "bw", alices).empty());
  auto listed = parse(call(port_, "GET", "/api/v1/workers", alice_)).as_object();
  auto& items = listed.at("items").as_array();
  ASSERT_EQ(items.size(), 1u) << json::serialize(listed);
  EXPECT_FALSE(items[0].as_object().at("shared").as_bool()) << json::serialize(listed);
  auto bravos = run_of(bob_, "bravo-job");
  ASSERT_TRUE(eventually([&] { return !str(run(bob_, bravos), "error").empty(); }, 15s));
  EXPECT_FALSE(delivered(alices, bravos)) << "acme's worker got bravo's run through bravo's mark";
  // The change is in the cluster audit.
  auto audit = call(port_, "GET", "/api/v1/audit?scope=cluster", admin);
  EXPECT_NE(audit.body.find("cluster.share_worker"), std::string::npos) << audit.body;
}

// --tenant-run-as maps a tenant to an OS user on a worker that takes several
// tenants' runs: acme's commands run as that user, the others' as --run-as
// (nobody for a root node), so one tenant's run cannot touch another's files.
TEST(tenant_run_as, each_mapped_tenants_runs_execute_as_its_own_user) {
  if (geteuid() != 0) GTEST_SKIP() << "switching users needs the test to run as root";
  temp_dir dir;
  node_process node(
      dir.path() + "/data",
      {"--auth", "--auth-secret-file", write_file(dir.path() + "/secret", "tenant-run-as-secret-0123456789"),
       "--admin-password-file", write_file(dir.path() + "/admin", admin_password),
       "--worker-shared", "--tenant-run-as", "acme=daemon"});
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  auto admin = login(port, "admin", admin_password);
  ASSERT_EQ(call(port, "POST", "/api/v1/users", admin,
                 R"({"name":"alice","password":"alice-password","role":"operator","tenant":"acme"})")
                .status,
            201u);
  auto alice = login(port, "alice", "alice-password");
  auto uid_of_run = [&](const std::string& token) {
    auto r = call(port, "POST", "/api/v1/tasks", token, R"({"name":"who","command":"id -u"})");
    EXPECT_EQ(r.status, 201u) << r.body;
    auto id = std::to_string(num(parse(r).as_object(), "id"));
    r = call(port, "POST", "/api/v1/tasks/" + id + "/trigger", token);
    EXPECT_EQ(r.status, 201u) << r.body;
    if (r.status != 201) return std::string();
    auto run_id = str(parse(r).at("instances").as_array().at(0).as_object(), "id");
    json::object x;
    eventually(
        [&] {
          auto g = call(port, "GET", "/api/v1/instances/" + run_id, token);
          if (g.status == 200) x = parse(g).as_object();
          auto s = str(x, "state");
          return s == "success" || s == "failed" || s == "timed_out";
        },
        30s);
    EXPECT_EQ(str(x, "state"), "success") << json::serialize(x);
    return str(x, "output");
  };
  EXPECT_EQ(uid_of_run(alice), "1\n") << "acme's run is not user daemon's";
  EXPECT_EQ(uid_of_run(admin), "65534\n") << "the default tenant's run is not nobody's";
  // A mapping to root is refused at startup: it would give the tenant the node.
  auto r = run_command({AISCHED_BINARY, "--tenant-run-as", "acme=root", "--data-dir",
                        dir.path() + "/other"},
                       10s);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("never execute as root"), std::string::npos) << r.err;
}
