// Secrets (issue #19) on real nodes started as `make run` starts them plus the
// flags under test: a run sees its secret in its environment, while the task,
// the run, its output (stored and streamed, a value split across two writes
// included), the audit log, /metrics, the node's log, the agent's tool results
// and prompts, and every byte of the data directory never hold the value;
// roles and tenants decide who sets, lists and references secrets; without a
// key file the secret routes answer secrets_disabled; a rotation keeps every
// secret usable by runs; a member with the wrong key file refuses to start.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/auth_client.hpp"
#include "support/http_receiver.hpp"
#include "support/node_process.hpp"
#include "support/raft_group_process.hpp"
#include "support/scripted_llm.hpp"
#include "support/sse_reader.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// 22 characters no test or log writes otherwise; `head` is its first 12.
constexpr const char* value = "Zq9-pr0d-db-s3cret-7Hx";
constexpr const char* head = "Zq9-pr0d-db-";
constexpr const char* key_a = "6b1f3c5e7a9d0b2c4e6f8a1b3c5d7e9f0a2b4c6d8e1f3a5b7c9d0e2f4a6b8c1d";
constexpr const char* key_b = "0f1e2d3c4b5a69788796a5b4c3d2e1f00123456789abcdeffedcba9876543210";

/// Prints the secret's length, the secret whole, then the secret again in two
/// writes half a second apart (two reads of the run's output): never the
/// value in its own text.
constexpr const char* command =
    R"(p="$DB_PASSWORD"; echo "len=${#p}"; echo "whole=$p"; h="${p%??????????}"; )"
    R"(t="${p#"$h"}"; printf 'split=%s' "$h"; sleep 0.5; printf '%s:end\n' "$t")";
constexpr const char* masked_output = "len=22\nwhole=***\nsplit=***:end\n";

std::string write_key(const std::string& path, const std::string& hex) {
  std::ofstream(path) << hex << "\n";
  ::chmod(path.c_str(), 0600);
  return path;
}

std::string secret_body(const std::string& v) { return json::serialize(json::object{{"value", v}}); }

std::string task_body(const std::string& name, const std::string& secret = "prod-db") {
  return json::serialize(json::object{{"name", name},
                                      {"command", command},
                                      {"secrets", json::object{{"DB_PASSWORD", secret}}}});
}

/// Every byte of every file under `dir`.
std::string all_bytes(const std::string& dir) {
  std::string out;
  for (auto& f : fs::recursive_directory_iterator(dir)) {
    if (!f.is_regular_file()) continue;
    std::ifstream in(f.path(), std::ios::binary);
    out.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

bool holds_value(const std::string& text) { return text.find(value) != std::string::npos; }

std::string error_field(const http_result& r) {
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object() || !v.as_object().contains("error")) return "";
  return str(v.at("error").as_object(), "field");
}

/// Triggers task `id` with `token` and waits for its run to end; the run.
json::object run_once(uint16_t port, int64_t id, const std::string& token = "") {
  auto r = auth::call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger", token);
  if (r.status != 201) {
    ADD_FAILURE() << "trigger: " << r.status << " " << r.body;
    return {};
  }
  auto run_id = str(parse(r).at("instances").as_array().at(0).as_object(), "id");
  json::object last;
  eventually(
      [&] {
        auto g = auth::call(port, "GET", "/api/v1/instances/" + run_id, token);
        if (g.status != 200) return false;
        last = parse(g).as_object();
        auto s = str(last, "state");
        return s == "success" || s == "failed" || s == "timed_out";
      },
      20s);
  return last;
}

class secrets : public ::testing::Test {
 protected:
  std::string key(const char* name, const char* hex) {
    return write_key(dir_.path() + "/" + name, hex);
  }
  temp_dir dir_;
};

TEST_F(secrets, a_run_sees_its_secret_and_no_surface_shows_the_value) {
  scripted_llm llm(dir_.path(), {scripted_llm::call("q1", "query_tasks", "{}"),
                                 scripted_llm::call("q2", "query_instances", "{}"),
                                 scripted_llm::call("q3", "get_task_detail", R"({"task_id":1})"),
                                 scripted_llm::say("Task 1 uses a secret.")});
  auto data = dir_.path() + "/data";
  std::vector<std::string> args{"--secrets-key-file", key("key", key_a),   "--llm-endpoint",
                                llm.endpoint(),       "--llm-model",       "scripted",
                                "--llm-api-key",      "sk-test"};
  node_process node(data, args);
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();

  auto put = http_call(port, "PUT", "/api/v1/secrets/prod-db", secret_body(value));
  ASSERT_EQ(put.status, 200u) << put.body;
  EXPECT_FALSE(holds_value(put.body));
  auto id = create_task(port, task_body("uses-secret"));
  ASSERT_EQ(id, 1);

  // The output streamed live: opened before the run writes its split value.
  auto trigger = http_call(port, "POST", "/api/v1/tasks/1/trigger");
  ASSERT_EQ(trigger.status, 201u) << trigger.body;
  auto run_id = str(parse(trigger).at("instances").as_array().at(0).as_object(), "id");
  sse_reader live(port, "/api/v1/instances/" + run_id + "/output?follow=true");
  ASSERT_TRUE(live.ok());
  EXPECT_TRUE(live.wait_for("event: end", 20s)) << live.text();
  EXPECT_NE(live.text().find(":end"), std::string::npos) << live.text();
  EXPECT_FALSE(holds_value(live.text())) << live.text();
  EXPECT_EQ(live.text().find(head), std::string::npos) << "a part of the value streamed";

  json::object run;
  ASSERT_TRUE(eventually(
      [&] {
        run = parse(http_call(port, "GET", "/api/v1/instances/" + run_id)).as_object();
        return str(run, "state") == "success";
      },
      20s))
      << json::serialize(run);
  // The run saw exactly the value (the redactor masks only the exact value),
  // and its stored output shows *** wherever the value was printed.
  EXPECT_EQ(str(run, "output"), masked_output);

  std::vector<std::string> surfaces{
      "/api/v1/tasks",      "/api/v1/tasks/1",    "/api/v1/instances",
      "/api/v1/instances/" + run_id, "/api/v1/instances/" + run_id + "/output",
      "/api/v1/instances/" + run_id + "/attempts", "/api/v1/secrets", "/api/v1/audit",
      "/metrics"};
  for (auto& s : surfaces) {
    auto r = http_call(port, "GET", s);
    EXPECT_EQ(r.status, 200u) << s << ": " << r.body;
    EXPECT_FALSE(holds_value(r.body)) << s << " shows the value: " << r.body;
  }
  auto task = parse(http_call(port, "GET", "/api/v1/tasks/1")).as_object();
  EXPECT_EQ(json::serialize(task.at("secrets")), R"({"DB_PASSWORD":"prod-db"})");
  auto listed = parse(http_call(port, "GET", "/api/v1/secrets")).at("items").as_array();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(str(listed[0].as_object(), "name"), "prod-db");
  EXPECT_EQ(num(listed[0].as_object(), "version"), 1);

  // The agent's tool results and the prompts it sent the model.
  auto chat = http_call(port, "POST", "/api/v1/ai/chat",
                        R"({"message":"which tasks use secrets?"})", 30s);
  ASSERT_EQ(chat.status, 200u) << chat.body;
  EXPECT_NE(chat.body.find("prod-db"), std::string::npos) << "the tools did not run: " << chat.body;
  EXPECT_FALSE(holds_value(chat.body)) << chat.body;
  for (auto& req : llm.requests())
    EXPECT_FALSE(holds_value(json::serialize(req))) << "a prompt holds the value";

  ASSERT_EQ(node.stop(SIGTERM), 0);
  EXPECT_FALSE(holds_value(node.log())) << "the node's log holds the value";
  auto bytes = all_bytes(data);
  EXPECT_NE(bytes.find("prod-db"), std::string::npos);  // the scan sees the records
  EXPECT_FALSE(holds_value(bytes)) << "a file of the data directory holds the value";
}

TEST_F(secrets, admins_set_operators_reference_viewers_list_and_tenants_share_nothing) {
  auto args = auth::auth_args(dir_.path());
  args.push_back("--secrets-key-file");
  args.push_back(key("key", key_a));
  node_process node(dir_.path() + "/data", args);
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  auto root = auth::admin_login(port);
  ASSERT_FALSE(root.empty());
  // Tenant default (its runs go to the node's own worker) against tenant globex.
  auth::create_user(port, root, "acme-admin", "admin");
  auth::create_user(port, root, "acme-op", "operator");
  auth::create_user(port, root, "acme-viewer", "viewer");
  auth::create_user(port, root, "globex-op", "operator", "globex");
  auto login = [&](const std::string& u) { return auth::login(port, u, u + "-password"); };
  auto admin = login("acme-admin"), op = login("acme-op"), viewer = login("acme-viewer"),
       other = login("globex-op");

  EXPECT_EQ(auth::call(port, "PUT", "/api/v1/secrets/prod-db", op, secret_body(value)).status,
            403u);
  EXPECT_EQ(auth::call(port, "PUT", "/api/v1/secrets/prod-db", viewer, secret_body(value)).status,
            403u);
  auto put = auth::call(port, "PUT", "/api/v1/secrets/prod-db", admin, secret_body(value));
  ASSERT_EQ(put.status, 200u) << put.body;
  auto bad = auth::call(port, "PUT", "/api/v1/secrets/prod-db", admin, R"({"value":""})");
  EXPECT_EQ(bad.status, 400u);
  EXPECT_EQ(error_field(bad), "value");

  auto seen = auth::call(port, "GET", "/api/v1/secrets", viewer);
  ASSERT_EQ(seen.status, 200u) << seen.body;
  EXPECT_NE(seen.body.find("prod-db"), std::string::npos);
  EXPECT_NE(seen.body.find("acme-admin"), std::string::npos);  // who set it
  EXPECT_FALSE(holds_value(seen.body));

  auto made = auth::call(port, "POST", "/api/v1/tasks", op, task_body("own-task"));
  ASSERT_EQ(made.status, 201u) << made.body;
  auto id = num(parse(made).as_object(), "id");
  EXPECT_EQ(str(run_once(port, id, op), "output"), masked_output);

  // Another tenant neither references nor sees it; a missing name is refused.
  auto foreign = auth::call(port, "POST", "/api/v1/tasks", other, task_body("globex-task"));
  EXPECT_EQ(foreign.status, 400u) << foreign.body;
  EXPECT_EQ(error_field(foreign), "secrets.DB_PASSWORD");
  auto theirs = auth::call(port, "GET", "/api/v1/secrets", other);
  ASSERT_EQ(theirs.status, 200u);
  EXPECT_EQ(parse(theirs).at("items").as_array().size(), 0u);
  auto missing = auth::call(port, "POST", "/api/v1/tasks", op, task_body("t2", "nope"));
  EXPECT_EQ(missing.status, 400u);
  EXPECT_EQ(error_field(missing), "secrets.DB_PASSWORD");
  EXPECT_NE(missing.body.find("nope"), std::string::npos);

  // Set, reference and delete are audited, by name only.
  EXPECT_EQ(auth::call(port, "DELETE", "/api/v1/secrets/prod-db", op).status, 403u);
  EXPECT_EQ(auth::call(port, "DELETE", "/api/v1/secrets/prod-db", admin).status, 204u);
  std::string audit;
  eventually([&] {
    audit = auth::call(port, "GET", "/api/v1/audit", admin).body;
    return audit.find("secret.delete") != std::string::npos &&
           audit.find("secret.reference") != std::string::npos;
  });
  EXPECT_NE(audit.find("secret.set"), std::string::npos) << audit;
  EXPECT_NE(audit.find("secret.reference"), std::string::npos) << audit;
  EXPECT_NE(audit.find("DB_PASSWORD=prod-db"), std::string::npos) << audit;
  EXPECT_NE(audit.find("secret.delete"), std::string::npos) << audit;
  EXPECT_FALSE(holds_value(audit));
  EXPECT_EQ(parse(auth::call(port, "GET", "/api/v1/secrets", viewer)).at("items").as_array().size(),
            0u);
}

TEST_F(secrets, an_http_task_gets_its_secret_in_headers_and_body_and_its_output_masked) {
  http_receiver api({200}, std::string("echo: ") + value);  // a service that echoes it back
  node_process node(dir_.path() + "/data", {"--secrets-key-file", key("key", key_a)});
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  ASSERT_EQ(http_call(port, "PUT", "/api/v1/secrets/api-token", secret_body(value)).status, 200u);
  auto doc = [&](const std::string& name) {
    return json::serialize(json::object{
        {"name", "call-api"},
        {"kind", "http"},
        {"http", json::object{{"method", "POST"},
                              {"url", api.url("/v1/thing")},
                              {"headers", json::object{{"Authorization",
                                                        "Bearer {{secret." + name + "}}"}}},
                              {"body", "{\"key\":\"{{secret." + name + "}}\"}"}}}});
  };
  auto missing = http_call(port, "POST", "/api/v1/tasks", doc("nope"));
  EXPECT_EQ(missing.status, 400u) << missing.body;
  EXPECT_EQ(error_field(missing), "http.headers.Authorization");
  ASSERT_EQ(create_task(port, doc("api-token")), 1);
  auto run = run_once(port, 1);
  EXPECT_EQ(str(run, "state"), "success") << json::serialize(run);
  EXPECT_EQ(str(run, "output"), "echo: ***");
  auto got = api.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].header("Authorization").value_or(""), std::string("Bearer ") + value);
  EXPECT_EQ(got[0].body, std::string(R"({"key":")") + value + "\"}");
  auto task = http_call(port, "GET", "/api/v1/tasks/1");
  EXPECT_NE(task.body.find("{{secret.api-token}}"), std::string::npos) << task.body;
  EXPECT_FALSE(holds_value(task.body));
}

TEST_F(secrets, without_a_key_file_secret_routes_are_disabled_and_references_refused) {
  node_process node(dir_.path() + "/data");
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  for (auto [method, path] : {std::pair{"PUT", "/api/v1/secrets/prod-db"},
                              std::pair{"DELETE", "/api/v1/secrets/prod-db"},
                              std::pair{"POST", "/api/v1/cluster/secrets-key/rotate"}}) {
    auto r = http_call(port, method, path, secret_body(value));
    EXPECT_EQ(r.status, 501u) << method << " " << path << ": " << r.body;
    EXPECT_NE(r.body.find("secrets_disabled"), std::string::npos) << r.body;
  }
  auto listed = http_call(port, "GET", "/api/v1/secrets");  // names need no key
  EXPECT_EQ(listed.status, 200u) << listed.body;
  EXPECT_EQ(listed.body, R"({"items":[],"enabled":false})");
  auto bad = http_call(port, "PUT", "/api/v1/secrets/prod-db", "{");  // bad input still 400
  EXPECT_EQ(bad.status, 400u) << bad.body;
  auto t = http_call(port, "POST", "/api/v1/tasks", task_body("t"));
  EXPECT_EQ(t.status, 400u) << t.body;
  EXPECT_EQ(error_field(t), "secrets.DB_PASSWORD");
  EXPECT_NE(t.body.find("--secrets-key-file"), std::string::npos) << t.body;
  EXPECT_EQ(create_task(port, R"({"name":"plain","command":"true"})"), 1);  // nothing else changes
}

TEST_F(secrets, a_member_with_the_wrong_key_file_refuses_to_start) {
  auto data = dir_.path() + "/data";
  {
    node_process node(data, {"--secrets-key-file", key("a", key_a)});
    ASSERT_TRUE(node.running()) << tail(node.log());
    ASSERT_EQ(http_call(node.http_port(), "PUT", "/api/v1/secrets/prod-db", secret_body(value))
                  .status,
              200u);
    ASSERT_EQ(node.stop(SIGTERM), 0);
  }
  auto r = run_command({AISCHED_BINARY, "--data-dir", data, "--http-addr", "127.0.0.1:0",
                        "--cluster-addr", "127.0.0.1:0", "--secrets-key-file", key("b", key_b)},
                       20s);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto said = r.out + r.err;
  EXPECT_NE(said.find("--secrets-key-file"), std::string::npos) << said;
  EXPECT_NE(said.find("check value"), std::string::npos) << said;
  EXPECT_EQ(said.find("http listening"), std::string::npos) << said;
}

TEST_F(secrets, rotating_the_cluster_key_keeps_every_secret_readable_by_runs) {
  auto data = dir_.path() + "/data";
  auto a = key("a", key_a), b = key("b", key_b);
  {
    node_process node(data, {"--secrets-key-file", a});
    ASSERT_TRUE(node.running()) << tail(node.log());
    auto port = node.http_port();
    ASSERT_EQ(http_call(port, "PUT", "/api/v1/secrets/prod-db", secret_body(value)).status, 200u);
    ASSERT_EQ(create_task(port, task_body("rotated")), 1);
    ASSERT_EQ(node.stop(SIGTERM), 0);
  }
  {
    node_process node(data, {"--secrets-key-file", b, "--secrets-previous-key-file", a});
    ASSERT_TRUE(node.running()) << tail(node.log());
    auto port = node.http_port();
    EXPECT_EQ(str(run_once(port, 1), "output"), masked_output);  // during the rotation
    auto rot = http_call(port, "POST", "/api/v1/cluster/secrets-key/rotate");
    ASSERT_EQ(rot.status, 200u) << rot.body;
    EXPECT_EQ(num(parse(rot).as_object(), "rewrapped"), 1);
    ASSERT_EQ(node.stop(SIGTERM), 0);
  }
  {
    node_process node(data, {"--secrets-key-file", b});  // the old key is no longer needed
    ASSERT_TRUE(node.running()) << tail(node.log());
    auto run = run_once(node.http_port(), 1);
    EXPECT_EQ(str(run, "state"), "success") << json::serialize(run);
    EXPECT_EQ(str(run, "output"), masked_output);
    ASSERT_EQ(node.stop(SIGTERM), 0);
  }
  auto retired = run_command({AISCHED_BINARY, "--data-dir", data, "--http-addr", "127.0.0.1:0",
                              "--cluster-addr", "127.0.0.1:0", "--secrets-key-file", a},
                             20s);
  EXPECT_EQ(retired.exit_code, 1) << retired.out << retired.err;
}

TEST_F(secrets, aischedctl_sets_a_secret_from_standard_input_that_a_run_uses) {
  node_process node(dir_.path() + "/data", {"--secrets-key-file", key("key", key_a)});
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto server = "http://127.0.0.1:" + std::to_string(node.http_port());
  auto ctl = [&](std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), {AISCHEDCTL_BINARY, "--server", server});
    return run_command(args, 10s, input);
  };
  auto as_argument = ctl({"secret", "set", "prod-db", value});
  EXPECT_NE(as_argument.exit_code, 0) << "a value must never be an argument";
  auto set = ctl({"secret", "set", "prod-db"}, std::string(value) + "\n");
  ASSERT_EQ(set.exit_code, 0) << set.out << set.err;
  EXPECT_FALSE(holds_value(set.out + set.err));
  auto listed = ctl({"secret", "list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("prod-db"), std::string::npos) << listed.out;
  EXPECT_FALSE(holds_value(listed.out));
  ASSERT_EQ(create_task(node.http_port(), task_body("ctl-task")), 1);
  auto run = run_once(node.http_port(), 1);
  EXPECT_EQ(str(run, "state"), "success") << json::serialize(run);
  EXPECT_EQ(str(run, "output"), masked_output);
  EXPECT_EQ(ctl({"secret", "rm", "prod-db"}).exit_code, 0);
  EXPECT_EQ(ctl({"secret", "list"}).out.find("prod-db"), std::string::npos);
}

TEST_F(secrets, no_member_of_a_group_stores_the_value) {
  raft_group group(dir_.path(), 3, {"--secrets-key-file", key("key", key_a)});
  ASSERT_TRUE(group.all_running());
  auto leader = group.await_leader({0, 1, 2});
  ASSERT_NE(leader, none);
  auto follower = (leader + 1) % 3;
  auto port = group.port(follower);  // sealed by the follower's gateway, then proposed
  auto put = http_call(port, "PUT", "/api/v1/secrets/prod-db", secret_body(value));
  ASSERT_EQ(put.status, 200u) << put.body;
  int64_t id = 0;
  ASSERT_TRUE(eventually([&] {  // the follower checks references against its own state
    auto r = http_call(port, "POST", "/api/v1/tasks", task_body("group-task"));
    if (r.status == 201) id = num(parse(r).as_object(), "id");
    return id != 0;
  }));
  auto run = run_once(group.port(leader), id);
  EXPECT_EQ(str(run, "output"), masked_output) << json::serialize(run);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(holds_value(group.log(i))) << group.id(i) << "'s log holds the value";
    group.kill(i);  // what it wrote is on disk either way: WAL files are scanned too
    auto bytes = all_bytes(group.data_dir(i));
    EXPECT_NE(bytes.find("prod-db"), std::string::npos) << group.id(i);
    EXPECT_FALSE(holds_value(bytes)) << group.id(i) << "'s data directory holds the value";
  }
}

}  // namespace
