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
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

bool serving(node_process& node) {
  return node.running() &&
         eventually([&] { return http_call(node.http_port(), "GET", "/healthz").status == 200; });
}

/// The `error.field` of an error answer ("" if it has none).
std::string error_field(const http_result& r) {
  auto v = parse(r);
  auto* e = v.is_object() ? v.as_object().if_contains("error") : nullptr;
  return e && e->is_object() ? str(e->as_object(), "field") : std::string();
}

/// Creates a task; its id, or 0 after recording a failure.
int64_t create(uint16_t port, const std::string& body) {
  auto r = http_call(port, "POST", "/api/v1/tasks", body);
  if (r.status != 201) {
    ADD_FAILURE() << "create failed (" << r.status << "): " << r.body << "\nrequest: " << body;
    return 0;
  }
  return num(parse(r).as_object(), "id");
}

std::string rfc3339(int64_t ms) { return aisched::format_rfc3339(ms); }

std::string task_path(int64_t id) { return "/api/v1/tasks/" + std::to_string(id); }

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
  auto id = create(port, R"({"name":"ok","command":"true","schedule":"0 3 * * *"})");
  ASSERT_NE(id, 0);
  r = http_call(port, "PATCH", task_path(id), R"({"schedule":"0 0 31 4 *"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "schedule") << r.body;
  r = http_call(port, "PATCH", task_path(id), R"({"schedule":"","at":"2020-01-01T00:00:00Z"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_field(r), "at") << r.body;
  // A one-shot in the future is fine, and editing another field of it later is too.
  auto soon = rfc3339(wall_ms() + 3'600'000);
  auto once = create(port, R"({"name":"once","command":"true","at":")" + soon + R"("})");
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
  auto id = create(port, R"({"name":"window","command":"true","schedule":"@every 1h","end_at":")" +
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
