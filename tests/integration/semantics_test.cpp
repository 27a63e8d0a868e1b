// Answers a user can trust, on a real single `aisched` node started as `make run` does:
// a task that could never fire is refused naming the field, previews stop at `end_at`,
// deleting an upstream task does not strand its dependents, a held trigger says what it
// waits for, backfill stays in the past, a failed run can be retried as a new attempt,
// and PUT replaces where PATCH merges. Each test starts its own node and polls.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "support/auth_client.hpp"
#include "support/node_process.hpp"
#include "support/serving_node.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

std::string rfc3339(int64_t ms) { return aisched::format_rfc3339(ms); }

}  // namespace

// -- no silent no-ops --------------------------------------------------------------

TEST(semantics, a_task_that_can_never_fire_is_refused_naming_the_field) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();

  // February 30th never comes.
  auto r = http_call(port, "POST", "/api/v1/tasks",
                     R"({"name":"feb30","command":"true","schedule":"0 0 30 2 *"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "schedule") << r.body;
  // A one-shot in the past.
  r = http_call(port, "POST", "/api/v1/tasks",
                R"({"name":"past","command":"true","at":"2020-01-01T00:00:00Z"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "at") << r.body;
  // A window that closes before the first fire.
  auto end = rfc3339(wall_ms() - 3'600'000);
  r = http_call(port, "POST", "/api/v1/tasks",
                R"({"name":"ended","command":"true","schedule":"@every 1h","end_at":")" + end +
                    R"("})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "end_at") << r.body;

  // The same checks on update: a valid task cannot be edited into a no-op.
  auto id = create_task(port, R"({"name":"ok","command":"true","schedule":"0 3 * * *"})");
  ASSERT_NE(id, 0);
  r = http_call(port, "PATCH", task_path(id), R"({"schedule":"0 0 31 4 *"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "schedule") << r.body;
  r = http_call(port, "PATCH", task_path(id), R"({"schedule":"","at":"2020-01-01T00:00:00Z"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "at") << r.body;
  // A one-shot in the future is fine, and editing another field of it later is too.
  auto soon = rfc3339(wall_ms() + 3'600'000);
  auto once = create_task(port, R"({"name":"once","command":"true","at":")" + soon + R"("})");
  ASSERT_NE(once, 0);
  r = http_call(port, "PATCH", task_path(once), R"({"name":"once-renamed"})");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST(semantics, next_fire_previews_stop_at_end_at) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  // Whole hours until end_at: two or three of them, never the five a preview lists.
  auto end_ms = wall_ms() + 2 * 3'600'000 + 1'800'000;
  auto end = rfc3339(end_ms);
  auto id =
      create_task(port, R"({"name":"window","command":"true","schedule":"@every 1h","end_at":")" +
                            end + R"("})");
  ASSERT_NE(id, 0);
  auto r = http_call(port, "GET", task_path(id));
  ASSERT_EQ(r.status, 200) << r.body;
  auto times = parse(r).as_object().at("next_fire_times").as_array();
  EXPECT_GE(times.size(), 2u) << r.body;
  EXPECT_LE(times.size(), 3u) << r.body;
  for (auto& t : times) EXPECT_LE(time_ms(t), end_ms) << r.body;

  r = http_call(port, "GET", "/api/v1/schedules/next?cron=@every+1h&n=10&end_at=" + end);
  ASSERT_EQ(r.status, 200) << r.body;
  auto previewed = parse(r).as_object().at("times").as_array();
  EXPECT_GE(previewed.size(), 2u) << r.body;
  EXPECT_LE(previewed.size(), 3u) << r.body;
  for (auto& t : previewed) EXPECT_LE(time_ms(t), end_ms) << r.body;
  r = http_call(port, "GET", "/api/v1/schedules/next?cron=@every+1h&end_at=tomorrow");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "end_at") << r.body;
}

// -- DAG edges ---------------------------------------------------------------------

TEST(semantics, deleting_an_upstream_is_refused_or_cascades_and_a_held_trigger_says_why) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto up = create_task(port, R"({"name":"extract","command":"true"})");
  ASSERT_NE(up, 0);
  auto down = create_task(
      port, R"({"name":"load","command":"true","depends_on":[)" + std::to_string(up) + "]}");
  ASSERT_NE(down, 0);

  // The upstream never ran: a manual run of the downstream is accepted and waits.
  auto r = http_call(port, "POST", task_path(down) + "/trigger");
  ASSERT_EQ(r.status, 202) << r.body;
  auto held = parse(r).as_object();
  EXPECT_EQ(json::serialize(held.at("waiting_for")), "[" + std::to_string(up) + "]") << r.body;
  EXPECT_TRUE(held.at("instances").as_array().empty()) << r.body;

  // Deleting the upstream would strand the downstream: refused, naming it.
  r = http_call(port, "DELETE", task_path(up));
  ASSERT_EQ(r.status, 409) << r.body;
  auto err = parse(r).as_object().at("error").as_object();
  EXPECT_EQ(str(err, "code"), "has_dependents") << r.body;
  EXPECT_NE(str(err, "message").find(std::to_string(down)), std::string::npos) << r.body;
  EXPECT_EQ(http_call(port, "GET", task_path(up)).status, 200) << "the upstream must remain";
  EXPECT_EQ(http_call(port, "DELETE", task_path(up) + "?cascade=maybe").status, 400);

  // With cascade the upstream goes and the downstream loses the edge in the same change.
  r = http_call(port, "DELETE", task_path(up) + "?cascade=true");
  ASSERT_EQ(r.status, 204) << r.body;
  EXPECT_EQ(http_call(port, "GET", task_path(up)).status, 404);
  r = http_call(port, "GET", task_path(down));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(parse(r).as_object().at("depends_on").as_array().empty()) << r.body;
  r = http_call(port, "GET", "/api/v1/dag");
  ASSERT_EQ(r.status, 200) << r.body;
  auto dag = parse(r).as_object();
  EXPECT_TRUE(dag.at("edges").as_array().empty()) << r.body;
  for (auto& n : dag.at("nodes").as_array()) EXPECT_NE(num(n.as_object(), "id"), up) << r.body;
  // And it can be edited again (no `depends_on: task N does not exist`).
  r = http_call(port, "PATCH", task_path(down), R"({"name":"load-v2"})");
  EXPECT_EQ(r.status, 200) << r.body;
}

// -- backfill ----------------------------------------------------------------------

TEST(semantics, a_backfill_reaching_into_the_future_is_refused_naming_to) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto id = create_task(port, R"({"name":"hourly","command":"true","schedule":"@every 1h"})");
  ASSERT_NE(id, 0);
  auto now = wall_ms();
  auto body = [](int64_t from, int64_t to) {
    return R"({"from":")" + rfc3339(from) + R"(","to":")" + rfc3339(to) + R"("})";
  };
  auto r = http_call(port, "POST", task_path(id) + "/backfill",
                     body(now - 3 * 3'600'000, now + 3 * 3'600'000));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "to") << r.body;
  // Nothing ran for the refused range.
  r = http_call(port, "GET", "/api/v1/instances?task_id=" + std::to_string(id));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(parse(r).as_object().at("items").as_array().empty()) << r.body;
  // The past part alone is fine: two or three whole hours.
  r = http_call(port, "POST", task_path(id) + "/backfill", body(now - 3 * 3'600'000, now - 1000));
  ASSERT_EQ(r.status, 200) << r.body;
  auto n = parse(r).as_object().at("instances").as_array().size();
  EXPECT_GE(n, 2u) << r.body;
  EXPECT_LE(n, 3u) << r.body;
}

// -- attempts ----------------------------------------------------------------------

namespace {

/// Polls instance `id` until `pred` holds for it; the last answer either way.
json::object await_instance(uint16_t port, const std::string& id,
                            const std::function<bool(const json::object&)>& pred) {
  json::object last;
  eventually(
      [&] {
        auto r = http_call(port, "GET", "/api/v1/instances/" + id);
        if (r.status != 200) return false;
        last = parse(r).as_object();
        return pred(last);
      },
      20s);
  return last;
}

std::string first_instance(const http_result& r) {
  auto v = parse(r);
  auto& xs = v.as_object().at("instances").as_array();
  return xs.empty() ? std::string() : str(xs[0].as_object(), "id");
}

}  // namespace

TEST(semantics, retry_starts_another_attempt_of_the_same_failed_run) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto id = create_task(port, R"({"name":"flaky","command":"echo try $ATTEMPT; exit 3"})");
  ASSERT_NE(id, 0);
  auto r = http_call(port, "POST", task_path(id) + "/trigger");
  ASSERT_EQ(r.status, 201) << r.body;
  auto run = first_instance(r);
  ASSERT_FALSE(run.empty()) << r.body;
  auto failed = [](int attempt) {
    return [attempt](const json::object& x) {
      return str(x, "state") == "failed" && num(x, "attempt") == attempt;
    };
  };
  auto x = await_instance(port, run, failed(1));
  ASSERT_EQ(str(x, "state"), "failed") << json::serialize(x) << tail(node.log());

  r = http_call(port, "POST", "/api/v1/instances/" + run + "/retry");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(str(parse(r).as_object(), "id"), run) << "the same run, not a new one";
  EXPECT_EQ(num(parse(r).as_object(), "attempt"), 2) << r.body;
  x = await_instance(port, run, failed(2));
  ASSERT_EQ(num(x, "attempt"), 2) << json::serialize(x);
  EXPECT_NE(str(x, "output").find("try 2"), std::string::npos) << json::serialize(x);
  r = http_call(port, "GET", "/api/v1/instances/" + run + "/attempts");
  ASSERT_EQ(r.status, 200) << r.body;
  auto attempts = parse(r).as_object().at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 2u) << r.body;
  EXPECT_EQ(num(attempts[0].as_object(), "attempt"), 1) << r.body;
  EXPECT_EQ(num(attempts[1].as_object(), "attempt"), 2) << r.body;
  r = http_call(port, "GET", "/api/v1/instances?task_id=" + std::to_string(id));
  EXPECT_EQ(parse(r).as_object().at("items").as_array().size(), 1u) << "no second run: " << r.body;

  // A run that succeeded is not retried.
  auto ok = create_task(port, R"({"name":"fine","command":"true"})");
  ASSERT_NE(ok, 0);
  r = http_call(port, "POST", task_path(ok) + "/trigger");
  ASSERT_EQ(r.status, 201) << r.body;
  auto good = first_instance(r);
  x = await_instance(port, good, [](const json::object& y) { return str(y, "state") == "success"; });
  ASSERT_EQ(str(x, "state"), "success") << json::serialize(x);
  r = http_call(port, "POST", "/api/v1/instances/" + good + "/retry");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(error_field(r), "state") << r.body;
  EXPECT_EQ(http_call(port, "POST", "/api/v1/instances/" + std::to_string(ok) + "-1-0/retry").status,
            404);
}

// -- API consistency ---------------------------------------------------------------

TEST(semantics, put_replaces_patch_merges_and_numbers_read_plainly) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto id =
      create_task(port, R"({"name":"doc","command":"true","timeout":"5m","labels":{"zone":"eu"},
      "retry":{"policy":"exponential","max_attempts":3,"multiplier":1.5}})");
  ASSERT_NE(id, 0);

  // PATCH merges: what it does not name stays.
  auto r = http_call(port, "PATCH", task_path(id), R"({"name":"doc-2"})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto t = parse(r).as_object();
  EXPECT_EQ(str(t, "timeout"), "5m") << r.body;
  EXPECT_EQ(str(t.at("labels").as_object(), "zone"), "eu") << r.body;

  // PUT replaces: what it does not name takes the default, as in a create.
  r = http_call(port, "PUT", task_path(id), R"({"name":"doc-3","command":"true"})");
  ASSERT_EQ(r.status, 200) << r.body;
  t = parse(r).as_object();
  EXPECT_EQ(str(t, "name"), "doc-3");
  EXPECT_EQ(str(t, "timeout"), "1h") << r.body;
  EXPECT_TRUE(t.at("labels").as_object().empty()) << r.body;
  EXPECT_EQ(num(t.at("retry").as_object(), "max_attempts"), 1) << r.body;
  // A PUT is a whole document: without a command a shell task is invalid.
  r = http_call(port, "PUT", task_path(id), R"({"name":"doc-4"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "command") << r.body;

  // Numbers as people and tools read them: `2` and `1.5`, not `2E0` and `1.5E0`.
  r = http_call(port, "PATCH", task_path(id), R"({"retry":{"multiplier":1.5}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(R"("multiplier":1.5)"), std::string::npos) << r.body;
  r = http_call(port, "PATCH", task_path(id), R"({"retry":{"multiplier":2}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(R"("multiplier":2)"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("E0"), std::string::npos) << r.body;
  r = http_call(port, "GET", "/api/v1/backpressure");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find("E0"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("worker_load":0)"), std::string::npos) << r.body;
}

TEST(semantics, login_and_user_create_take_the_same_username_field) {
  using namespace aisched::test::auth;
  temp_dir dir;
  node_process node(dir.path() + "/data", auth_args(dir.path()));
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto admin = admin_login(port);  // logs in with `username`
  ASSERT_FALSE(admin.empty()) << tail(node.log());

  // User create takes `username` (the field login reads) ...
  auto r = call(port, "POST", "/api/v1/users", admin,
                R"({"username":"alice","password":"alice-password","role":"viewer"})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_FALSE(login(port, "alice", "alice-password").empty());
  // ... and still `name`, now an alias in both.
  r = call(port, "POST", "/api/v1/users", admin,
           R"({"name":"bob","password":"bob-password","role":"viewer"})");
  ASSERT_EQ(r.status, 201) << r.body;
  r = http_call(port, "POST", "/api/v1/auth/login", R"({"name":"bob","password":"bob-password"})");
  EXPECT_EQ(r.status, 200) << r.body;
  // Two different names are a contradiction, not a guess.
  r = call(port, "POST", "/api/v1/users", admin,
           R"({"username":"carol","name":"dave","password":"carol-password"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "username") << r.body;
  r = call(port, "POST", "/api/v1/users", admin, R"({"password":"nobody-password"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "username") << r.body;
}
