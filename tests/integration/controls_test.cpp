// The scheduling controls of issue #16 on a real single `aisched` node started
// as `make run` does: a pool of 4 shared by 20 tasks never runs more than 4 at
// once (sampled from the API while they run) and the waiting runs say why;
// max_concurrency 1 with overlap allow never runs two; an excluded date does
// not fire and the previews skip it; max_runs 3 fires three times, and the
// count survives a restart; bad values are 400s naming the field. Each test
// starts its own node and polls.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <map>
#include <set>
#include <string>

#include "support/node_process.hpp"
#include "support/serving_node.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

/// Every run on the node, from one listing (one consistent read of the store).
json::array all_runs(uint16_t port, const std::string& query = "") {
  auto r = http_call(port, "GET", "/api/v1/instances?limit=1000" + query);
  EXPECT_EQ(r.status, 200) << r.body;
  auto v = parse(r);
  if (!v.is_object() || !v.as_object().contains("items")) return {};
  return v.as_object()["items"].as_array();
}

json::array runs_of(uint16_t port, int64_t task) {
  return all_runs(port, "&task_id=" + std::to_string(task));
}

bool in_flight(const json::object& run) {
  auto s = str(run, "state");
  return s == "dispatched" || s == "running";
}

/// YYYY-MM-DD of the UTC day `days` from today.
std::string utc_day(int days) {
  auto iso = aisched::format_rfc3339(wall_ms() + days * 86'400'000LL);
  return iso.substr(0, 10);
}

}  // namespace

// -- pools ------------------------------------------------------------------------

TEST(controls, twenty_tasks_in_a_pool_of_four_never_run_more_than_four_at_once) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();

  auto put = http_call(port, "PUT", "/api/v1/pools/db", R"({"size":4})");
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(num(parse(put).as_object(), "size"), 4);
  std::set<int64_t> ids;
  for (int i = 0; i < 20; ++i)
    ids.insert(create_task(
        port, R"({"name":"db-)" + std::to_string(i) + R"(","command":"sleep 1","pool":"db"})"));
  ASSERT_EQ(ids.size(), 20u);
  for (auto id : ids) {
    auto r = http_call(port, "POST", task_path(id) + "/trigger");
    ASSERT_EQ(r.status, 201) << r.body;
  }
  // Sample from the API while they run: never more than the pool's size in
  // flight, and the runs held back say why. The reason is written on the
  // router's 1 s tick, so runs of 1 s keep the last wave waiting for 4 s (of
  // 0.4 s, 1.6 s: a tick late under load left none pending to say it).
  size_t most = 0, done = 0;
  std::string reason;
  bool finished = eventually(
      [&] {
        size_t flying = 0;
        done = 0;
        for (auto& v : all_runs(port)) {
          auto& run = v.as_object();
          if (!ids.count(num(run, "task_id"))) continue;
          if (in_flight(run)) ++flying;
          if (str(run, "state") == "success") ++done;
          if (str(run, "state") == "pending" && !str(run, "error").empty())
            reason = str(run, "error");
        }
        most = std::max(most, flying);
        return done == 20;
      },
      60s);
  EXPECT_TRUE(finished) << done << " of 20 runs succeeded\n" << tail(node.log());
  EXPECT_LE(most, 4u) << "the pool of 4 ran " << most << " at once";
  EXPECT_EQ(most, 4u) << "the pool should fill up (16 worker slots, 20 runs)";
  EXPECT_EQ(reason, "pool db full (4/4)");

  auto got = http_call(port, "GET", "/api/v1/pools/db");
  EXPECT_EQ(got.status, 200) << got.body;
  auto list = http_call(port, "GET", "/api/v1/pools");
  EXPECT_NE(list.body.find("\"db\""), std::string::npos) << list.body;
}

// -- max_concurrency --------------------------------------------------------------

TEST(controls, max_concurrency_one_with_overlap_allow_never_runs_two) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();

  // Slots every 200 ms, runs of 500 ms, two shards each: without the limit
  // several would overlap, as overlap "allow" permits.
  auto id = create_task(port, R"({"name":"solo","command":"sleep 0.5","schedule":"@every 200ms",)"
                              R"("overlap":"allow","shards":2,"max_concurrency":1})");
  ASSERT_NE(id, 0);
  size_t most = 0, done = 0;
  std::string reason;
  bool enough = eventually(
      [&] {
        size_t flying = 0;
        done = 0;
        for (auto& v : runs_of(port, id)) {
          auto& run = v.as_object();
          if (in_flight(run)) ++flying;
          if (str(run, "state") == "success") ++done;
          if (str(run, "state") == "pending" && !str(run, "error").empty())
            reason = str(run, "error");
        }
        most = std::max(most, flying);
        return done >= 5 && !reason.empty();
      },
      40s);
  EXPECT_TRUE(enough) << done << " runs succeeded, reason '" << reason << "'\n"
                      << tail(node.log());
  EXPECT_EQ(most, 1u) << "max_concurrency 1 ran " << most << " at once";
  EXPECT_EQ(reason, "max_concurrency 1 reached (1/1)");
  EXPECT_EQ(http_call(port, "POST", task_path(id) + "/pause").status, 200);
}

// -- exclusion calendars ----------------------------------------------------------

TEST(controls, an_excluded_date_does_not_fire_and_the_preview_skips_it) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();

  // Today and tomorrow (UTC) are excluded, so the test holds across midnight.
  auto today = utc_day(0), tomorrow = utc_day(1), after = utc_day(2);
  auto put = http_call(port, "PUT", "/api/v1/calendars/freeze",
                       R"({"description":"release freeze","dates":[")" + today + ".." +
                           tomorrow + R"("]})");
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_NE(put.body.find(today + ".." + tomorrow), std::string::npos) << put.body;

  auto frozen = create_task(port, R"({"name":"frozen","command":"true","schedule":"@every 1s",)"
                                  R"("exclude_calendar":"freeze"})");
  auto control = create_task(port, R"({"name":"control","command":"true","schedule":"@every 1s"})");
  ASSERT_NE(frozen, 0);
  ASSERT_NE(control, 0);
  // The task without the calendar fires meanwhile; the frozen one never does.
  EXPECT_TRUE(eventually([&] { return runs_of(port, control).size() >= 3; }, 20s))
      << tail(node.log());
  EXPECT_EQ(runs_of(port, frozen).size(), 0u) << "fired on an excluded date";

  // The task's preview starts after the excluded days; the control's does not.
  auto view = parse(http_call(port, "GET", task_path(frozen))).as_object();
  auto& next = view["next_fire_times"].as_array();
  ASSERT_FALSE(next.empty()) << json::serialize(view);
  EXPECT_EQ(std::string(next[0].as_string()), after + "T00:00:00Z");
  auto listed = parse(http_call(port, "GET", "/api/v1/tasks"));
  for (auto& v : listed.as_object()["items"].as_array()) {
    if (num(v.as_object(), "id") != frozen) continue;  // the list shows the same preview
    EXPECT_EQ(std::string(v.as_object().at("next_fire_times").as_array().at(0).as_string()),
              after + "T00:00:00Z");
  }
  auto plain = parse(http_call(port, "GET", task_path(control))).as_object();
  EXPECT_LT(std::string(plain["next_fire_times"].as_array()[0].as_string()), after);

  // The schedule preview takes the calendar too: a daily 12:00 skips both days.
  auto preview = http_call(port, "GET",
                           "/api/v1/schedules/next?cron=0%2012%20*%20*%20*&n=2&calendar=freeze");
  ASSERT_EQ(preview.status, 200) << preview.body;
  auto times = parse(preview).as_object()["times"].as_array();
  ASSERT_EQ(times.size(), 2u);
  EXPECT_EQ(std::string(times[0].as_string()), after + "T12:00:00Z");
  auto unknown = http_call(port, "GET", "/api/v1/schedules/next?cron=@hourly&calendar=nope");
  EXPECT_EQ(unknown.status, 400) << unknown.body;
  EXPECT_EQ(error_field(unknown), "calendar");

  // In use: the calendar cannot be deleted; once no task names it, it can.
  EXPECT_EQ(http_call(port, "DELETE", "/api/v1/calendars/freeze").status, 409);
  EXPECT_EQ(http_call(port, "PATCH", task_path(frozen), R"({"exclude_calendar":""})").status,
            200);
  EXPECT_EQ(http_call(port, "DELETE", "/api/v1/calendars/freeze").status, 204);
  EXPECT_EQ(http_call(port, "GET", "/api/v1/calendars/freeze").status, 404);
  // Without its calendar the task fires again.
  EXPECT_TRUE(eventually([&] { return !runs_of(port, frozen).empty(); }, 20s));
}

// -- max_runs ---------------------------------------------------------------------

TEST(controls, max_runs_three_fires_three_times) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();

  auto limited = create_task(port, R"({"name":"thrice","command":"true","schedule":"@every 1s",)"
                                   R"("max_runs":3})");
  auto control = create_task(port, R"({"name":"control","command":"true","schedule":"@every 1s"})");
  ASSERT_NE(limited, 0);
  ASSERT_NE(control, 0);
  ASSERT_TRUE(eventually([&] { return runs_of(port, limited).size() >= 3; }, 20s))
      << tail(node.log());
  // Once the control has fired three more slots than the limited task could
  // have by then, the limited one has still fired exactly three.
  auto third = 0LL;
  for (auto& v : runs_of(port, limited))
    third = std::max<long long>(third, rfc3339_ms(str(v.as_object(), "slot")));
  EXPECT_TRUE(eventually(
      [&] {
        size_t later = 0;
        for (auto& v : runs_of(port, control))
          if (rfc3339_ms(str(v.as_object(), "slot")) > third) ++later;
        return later >= 3;
      },
      20s));
  EXPECT_EQ(runs_of(port, limited).size(), 3u) << "max_runs 3 fired more than three times";
  auto view = parse(http_call(port, "GET", task_path(limited))).as_object();
  EXPECT_EQ(num(view, "max_runs"), 3);
  // A manual run is the operator's call: still allowed, and not counted.
  EXPECT_EQ(http_call(port, "POST", task_path(limited) + "/trigger").status, 201);
}

TEST(controls, the_max_runs_count_survives_a_restart) {
  temp_dir dir;
  auto data = dir.path() + "/data";
  auto node = std::make_unique<node_process>(data);
  ASSERT_TRUE(serving(*node)) << tail(node->log());
  auto limited = create_task(
      node->http_port(), R"({"name":"four","command":"true","schedule":"@every 1s","max_runs":4})");
  ASSERT_NE(limited, 0);
  ASSERT_TRUE(eventually([&] { return runs_of(node->http_port(), limited).size() >= 2; }, 20s));
  ASSERT_NE(node->stop(SIGTERM), -1) << "did not exit\n" << tail(node->log());
  node = std::make_unique<node_process>(data);  // the same data: a new leadership
  ASSERT_TRUE(serving(*node)) << tail(node->log());
  auto port = node->http_port();
  auto control = create_task(port, R"({"name":"control","command":"true","schedule":"@every 1s"})");
  ASSERT_TRUE(eventually([&] { return runs_of(port, limited).size() >= 4; }, 20s))
      << tail(node->log());
  auto last = 0LL;
  for (auto& v : runs_of(port, limited))
    last = std::max<long long>(last, rfc3339_ms(str(v.as_object(), "slot")));
  EXPECT_TRUE(eventually(
      [&] {
        size_t later = 0;
        for (auto& v : runs_of(port, control))
          if (rfc3339_ms(str(v.as_object(), "slot")) > last) ++later;
        return later >= 3;
      },
      20s));
  EXPECT_EQ(runs_of(port, limited).size(), 4u) << "the count restarted with the node";
}

// -- validation -------------------------------------------------------------------

TEST(controls, bad_values_are_refused_naming_the_field) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(serving(node)) << tail(node.log());
  auto port = node.http_port();
  auto expect_400 = [&](const std::string& method, const std::string& path,
                        const std::string& body, const std::string& field) {
    auto r = http_call(port, method, path, body);
    EXPECT_EQ(r.status, 400) << method << " " << path << " " << body << " -> " << r.body;
    EXPECT_EQ(error_field(r), field) << r.body;
  };
  const std::string base = R"({"name":"t","command":"true","schedule":"@hourly",)";
  expect_400("POST", "/api/v1/tasks", base + R"("max_runs":"three"})", "max_runs");
  expect_400("POST", "/api/v1/tasks", base + R"("max_concurrency":-1})", "max_concurrency");
  expect_400("POST", "/api/v1/tasks", base + R"("pool":"no such pool!"})", "pool");
  expect_400("POST", "/api/v1/tasks", base + R"("pool":"missing"})", "pool");
  expect_400("POST", "/api/v1/tasks", base + R"("exclude_calendar":"missing"})",
             "exclude_calendar");
  expect_400("POST", "/api/v1/tasks", R"({"name":"m","command":"true","max_runs":2})",
             "max_runs");  // manual only: nothing to count
  expect_400("PUT", "/api/v1/pools/db", R"({"size":-1})", "size");
  expect_400("PUT", "/api/v1/pools/db", R"({})", "size");
  expect_400("PUT", "/api/v1/pools/db", R"({"size":2,"colour":"red"})", "colour");
  expect_400("PUT", "/api/v1/calendars/h", R"({"dates":["2026-02-30"]})", "dates[0]");
  expect_400("PUT", "/api/v1/calendars/h", R"({"dates":["2026-12-26..2026-12-24"]})",
             "dates[0]");
  expect_400("PUT", "/api/v1/calendars/h", R"({"description":"no dates"})", "dates");
  EXPECT_EQ(http_call(port, "GET", "/api/v1/pools/nope").status, 404);
}
