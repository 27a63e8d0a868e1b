// The real `aischedctl` binary against a real `aisched` node: tasks created from
// a file and read back as tables and JSON, pause/resume, a triggered run followed
// to success, a running run's output followed to its end, the exit codes scripts
// rely on, `cron next`, workers and events. One node serves the whole suite (each
// test makes its own tasks) to keep it fast.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

class aischedctl : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<temp_dir>();
    node_ = std::make_unique<node_process>(dir_->path() + "/data");
  }
  static void TearDownTestSuite() {
    node_.reset();
    dir_.reset();
  }
  void SetUp() override { ASSERT_TRUE(node_->running()) << "the node did not start"; }

  /// Runs aischedctl against the node with `args`.
  static command_result ctl(std::vector<std::string> args, const std::string& input = "") {
    return ctl_at("http://127.0.0.1:" + std::to_string(node_->http_port()), std::move(args), input);
  }

  static command_result ctl_at(const std::string& server, std::vector<std::string> args,
                               const std::string& input = "") {
    args.insert(args.begin(), {AISCHEDCTL_BINARY, "--server", server});
    return run_command(args, 10s, input);
  }

  /// Writes `text` to a file in the suite's directory and returns its path.
  static std::string write_file(const std::string& name, const std::string& text) {
    auto path = dir_->path() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  /// Creates a task from a document file through aischedctl; returns its id (0 on failure).
  static int64_t create(const std::string& doc) {
    auto r = ctl({"task", "create", "-f", write_file("task.json", doc), "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? num(json_of(r).as_object(), "id") : 0;
  }

  /// stdout of `r` as JSON (a test failure and an empty object if it is not).
  static json::value json_of(const command_result& r) {
    boost::system::error_code ec;
    auto v = json::parse(r.out, ec);
    if (ec || !v.is_object()) {
      ADD_FAILURE() << "stdout is not a JSON object: " << r.out << "\nstderr: " << r.err;
      return json::object{};
    }
    return v;
  }

  static std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

  static inline std::unique_ptr<temp_dir> dir_;
  static inline std::unique_ptr<node_process> node_;
};

/// The line of a table whose first column is `id` ("" if none).
std::string row_of(const std::string& table, int64_t id) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(std::to_string(id) + " ", 0) == 0) return line;
  return "";
}

}  // namespace

TEST_F(aischedctl, creates_from_a_file_and_shows_it_in_get_and_list) {
  auto id = create(R"({"name": "ctl-nightly", "command": "true", "schedule": "0 3 * * *",
                       "timezone": "Europe/Berlin", "labels": {"team": "ctl"}})");
  ASSERT_GT(id, 0);

  auto got = ctl({"task", "get", std::to_string(id), "-o", "json"});
  ASSERT_EQ(got.exit_code, 0) << got.err;
  auto task = json_of(got).as_object();
  EXPECT_EQ(str(task, "name"), "ctl-nightly");
  EXPECT_EQ(task.at("next_fire_times").as_array().size(), 5u);

  auto fields = ctl({"task", "get", std::to_string(id)});
  ASSERT_EQ(fields.exit_code, 0) << fields.err;
  EXPECT_NE(fields.out.find("\nname "), std::string::npos) << fields.out;
  EXPECT_NE(fields.out.find("ctl-nightly"), std::string::npos) << fields.out;
  EXPECT_NE(fields.out.find("team=ctl"), std::string::npos) << fields.out;

  // The table: a header, then one aligned row per task.
  auto listed = ctl({"task", "list", "--all"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  auto header = lines(listed.out).at(0);
  auto row = row_of(listed.out, id);
  ASSERT_FALSE(row.empty()) << listed.out;
  EXPECT_EQ(header.find("NAME"), row.find("ctl-nightly")) << listed.out;
  EXPECT_EQ(header.find("SCHEDULE"), row.find("0 3 * * *")) << listed.out;
  EXPECT_EQ(header.find("STATE"), row.find("active")) << listed.out;

  // The same through stdin, and the client-side filters in JSON.
  auto piped = ctl({"task", "create", "-f", "-", "-o", "json"},
                   R"({"name": "ctl-other", "command": "true", "labels": {"team": "other"}})");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  auto other = num(json_of(piped).as_object(), "id");
  auto by_label = ctl({"task", "list", "--all", "--label", "team=ctl", "-o", "json"});
  ASSERT_EQ(by_label.exit_code, 0) << by_label.err;
  auto items = json_of(by_label).at("items").as_array();
  ASSERT_EQ(items.size(), 1u) << by_label.out;
  EXPECT_EQ(num(items[0].as_object(), "id"), id);
  auto by_name = json_of(ctl({"task", "list", "--all", "--name", "other", "-o", "json"}));
  ASSERT_EQ(by_name.at("items").as_array().size(), 1u);
  EXPECT_EQ(num(by_name.at("items").as_array()[0].as_object(), "id"), other);

  // Paging: one task a page, the next cursor named on stderr.
  auto page = ctl({"task", "list", "--limit", "1"});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_EQ(lines(page.out).size(), 2u) << page.out;
  EXPECT_NE(page.err.find("--cursor"), std::string::npos) << page.err;

  auto deleted = ctl({"task", "delete", std::to_string(other)});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_EQ(ctl({"task", "get", std::to_string(other)}).exit_code, 3);
}

TEST_F(aischedctl, pause_and_resume_change_the_state) {
  auto id = create(R"({"name": "ctl-pausable", "command": "true", "schedule": "@every 1h"})");
  ASSERT_GT(id, 0);
  auto paused = ctl({"task", "pause", std::to_string(id)});
  ASSERT_EQ(paused.exit_code, 0) << paused.err;
  auto task = json_of(ctl({"task", "get", std::to_string(id), "-o", "json"}));
  EXPECT_TRUE(task.at("paused").as_bool());
  EXPECT_NE(row_of(ctl({"task", "list", "--all"}).out, id).find("paused"), std::string::npos);
  auto active = create(R"({"name": "ctl-active", "command": "true"})");
  auto only_paused = json_of(ctl({"task", "list", "--all", "--state", "paused", "-o", "json"}));
  std::vector<int64_t> paused_ids;
  for (auto& t : only_paused.at("items").as_array()) paused_ids.push_back(num(t.as_object(), "id"));
  EXPECT_NE(std::find(paused_ids.begin(), paused_ids.end(), id), paused_ids.end());
  EXPECT_EQ(std::find(paused_ids.begin(), paused_ids.end(), active), paused_ids.end());

  auto resumed = ctl({"task", "resume", std::to_string(id), "-o", "json"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_FALSE(json_of(resumed).at("paused").as_bool());
  EXPECT_FALSE(
      json_of(ctl({"task", "get", std::to_string(id), "-o", "json"})).at("paused").as_bool());
}

TEST_F(aischedctl, trigger_makes_a_run_that_run_list_shows_reaching_success) {
  auto id = create(R"({"name": "ctl-echo", "command": "echo hello-from-ctl"})");
  ASSERT_GT(id, 0);
  auto triggered = ctl({"task", "trigger", std::to_string(id), "-o", "json"});
  ASSERT_EQ(triggered.exit_code, 0) << triggered.err;
  auto runs = json_of(triggered).at("instances").as_array();
  ASSERT_EQ(runs.size(), 1u) << triggered.out;
  auto run_id = str(runs[0].as_object(), "id");

  std::string last;
  bool succeeded = eventually(
      [&] {
        auto r = ctl({"run", "list", "--task", std::to_string(id), "-o", "json"});
        last = r.out + r.err;
        if (r.exit_code != 0) return false;
        auto page = json_of(r);  // kept alive: the loop walks into it
        for (auto& x : page.at("items").as_array())
          if (str(x.as_object(), "id") == run_id && str(x.as_object(), "state") == "success")
            return true;
        return false;
      },
      10s);
  ASSERT_TRUE(succeeded) << last;

  auto table = ctl({"task", "runs", std::to_string(id)});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find(run_id), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("success"), std::string::npos) << table.out;
  auto filtered = json_of(
      ctl({"run", "list", "--task", std::to_string(id), "--state", "failed", "-o", "json"}));
  EXPECT_TRUE(filtered.at("items").as_array().empty());

  auto logs = ctl({"run", "logs", run_id});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "hello-from-ctl\n");
  // The run has ended: following prints its output and returns.
  auto followed = ctl({"run", "logs", run_id, "--follow"});
  ASSERT_EQ(followed.exit_code, 0) << followed.err;
  EXPECT_NE(followed.out.find("hello-from-ctl"), std::string::npos) << followed.out;
  auto shown = ctl({"run", "get", run_id});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("output:\nhello-from-ctl"), std::string::npos) << shown.out;
}

// Issue #43: `run list` had no ERROR column, so a run waiting for a worker said why
// only in `run get`.
TEST_F(aischedctl, run_list_shows_why_a_run_waits_in_its_error_column) {
  auto id = create(R"({"name": "ctl-nowhere", "command": "true", "labels": {"zone": "ctl-none"}})");
  ASSERT_GT(id, 0);
  auto triggered = ctl({"task", "trigger", std::to_string(id), "-o", "json"});
  ASSERT_EQ(triggered.exit_code, 0) << triggered.err;
  std::string last;
  bool said = eventually(
      [&] {
        auto r = ctl({"run", "list", "--task", std::to_string(id)});
        last = r.out + r.err;
        auto rows = lines(r.out);
        return r.exit_code == 0 && rows.size() >= 2 &&
               rows[0].find("ERROR") != std::string::npos &&
               rows[1].find("matches zone=ctl-none") != std::string::npos;
      },
      10s);
  EXPECT_TRUE(said) << last;
  EXPECT_EQ(ctl({"task", "delete", std::to_string(id)}).exit_code, 0);
}

TEST_F(aischedctl, follow_prints_a_running_runs_output_until_it_ends) {
  auto id = create(R"({"name": "ctl-slow", "command": "echo first; sleep 1; echo second"})");
  ASSERT_GT(id, 0);
  auto triggered = ctl({"task", "trigger", std::to_string(id), "-o", "json"});
  ASSERT_EQ(triggered.exit_code, 0) << triggered.err;
  auto run_id = str(json_of(triggered).at("instances").as_array().at(0).as_object(), "id");
  auto followed = ctl({"run", "logs", run_id, "--follow"});
  ASSERT_EQ(followed.exit_code, 0) << followed.err;
  EXPECT_NE(followed.out.find("first\n"), std::string::npos) << followed.out;
  EXPECT_NE(followed.out.find("second\n"), std::string::npos) << followed.out;
  // It returned because the run ended, not because it gave up.
  auto run = json_of(ctl({"run", "get", run_id, "-o", "json"}));
  EXPECT_EQ(str(run.as_object(), "state"), "success");
  EXPECT_EQ(ctl({"run", "logs", "987654-1-0", "--follow"}).exit_code, 3);
}

TEST_F(aischedctl, exit_codes_tell_scripts_what_went_wrong) {
  auto missing = ctl({"task", "get", "987654"});
  EXPECT_EQ(missing.exit_code, 3) << missing.err;
  EXPECT_EQ(missing.err.rfind("error: not_found: ", 0), 0u) << missing.err;
  EXPECT_TRUE(missing.out.empty()) << missing.out;
  EXPECT_EQ(ctl({"run", "get", "987654-1-0"}).exit_code, 3);
  auto malformed_run = ctl({"run", "get", "no-such-run"});
  EXPECT_EQ(malformed_run.exit_code, 5);
  EXPECT_NE(malformed_run.err.find("(field: id)"), std::string::npos) << malformed_run.err;

  auto bad_cron =
      ctl({"task", "create", "-f",
           write_file("bad.json", R"({"name": "x", "command": "y", "schedule": "0 25 * * *"})")});
  EXPECT_EQ(bad_cron.exit_code, 5) << bad_cron.err;
  EXPECT_EQ(bad_cron.err.rfind("error: invalid_argument: ", 0), 0u) << bad_cron.err;
  EXPECT_NE(bad_cron.err.find("(field: schedule)"), std::string::npos) << bad_cron.err;
  auto unknown = ctl({"task", "create", "-f", "-"}, R"({"name": "x", "comand": "y"})");
  EXPECT_EQ(unknown.exit_code, 5);
  EXPECT_NE(unknown.err.find("(field: comand)"), std::string::npos) << unknown.err;
  EXPECT_EQ(ctl({"task", "create", "-f", "-"}, "{not json").exit_code, 5);

  auto id = create(R"({"name": "ctl-versioned", "command": "true"})");
  ASSERT_GT(id, 0);
  auto doc = write_file("patch.json", R"({"timeout": "5m"})");
  auto stale = ctl({"task", "update", std::to_string(id), "-f", doc, "--version", "7"});
  EXPECT_EQ(stale.exit_code, 4) << stale.err;
  auto fresh =
      ctl({"task", "update", std::to_string(id), "-f", doc, "--version", "1", "-o", "json"});
  EXPECT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_EQ(str(json_of(fresh).as_object(), "timeout"), "5m");

  for (std::vector<std::string> usage : {std::vector<std::string>{"task", "get"},
                                         {"task", "get", "abc"},
                                         {"task", "frobnicate"},
                                         {"task", "list", "-o", "yaml"},
                                         {"task", "create", "-f", dir_->path() + "/absent.json"},
                                         {}}) {
    auto r = ctl(usage);
    EXPECT_EQ(r.exit_code, 2) << "for args: " << ::testing::PrintToString(usage) << "\n" << r.err;
    EXPECT_FALSE(r.err.empty());
  }

  // Nobody listens on a port that was free a moment ago.
  auto port = free_port();
  ASSERT_NE(port, 0);
  auto down = ctl_at("http://127.0.0.1:" + std::to_string(port), {"task", "list"});
  EXPECT_EQ(down.exit_code, 1) << down.err;
  EXPECT_EQ(down.err.rfind("error: unreachable: ", 0), 0u) << down.err;

  auto help = ctl({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Exit codes: 0 ok, 1 server error"), std::string::npos) << help.out;
}

TEST_F(aischedctl, cron_next_prints_n_times) {
  auto r = ctl({"cron", "next", "*/5 * * * *", "--tz", "Asia/Shanghai", "--n", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto times = lines(r.out);
  ASSERT_EQ(times.size(), 4u) << r.out;
  for (size_t i = 0; i < times.size(); ++i) {
    auto t = rfc3339_ms(times[i]);
    ASSERT_GT(t, 0) << times[i];
    EXPECT_EQ(t % (5 * 60 * 1000), 0) << times[i];
    if (i > 0) {
      EXPECT_EQ(t - rfc3339_ms(times[i - 1]), 5 * 60 * 1000);
    }
  }
  auto as_json = ctl({"cron", "next", "0 9 * * 1-5", "-n", "3", "-o", "json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_EQ(json_of(as_json).at("times").as_array().size(), 3u);
  auto bad = ctl({"cron", "next", "0 25 * * *"});
  EXPECT_EQ(bad.exit_code, 5) << bad.err;
}

TEST_F(aischedctl, cluster_workers_backpressure_version_and_events) {
  auto cluster = ctl({"cluster", "status"});
  ASSERT_EQ(cluster.exit_code, 0) << cluster.err;
  EXPECT_NE(cluster.out.find("leader n1"), std::string::npos) << cluster.out;
  // Each member's build and data format, in columns of their own.
  EXPECT_NE(cluster.out.find("VERSION"), std::string::npos) << cluster.out;
  EXPECT_NE(cluster.out.find(std::string(AISCHED_VERSION) + "  "), std::string::npos)
      << cluster.out;
  auto workers = ctl({"worker", "list", "-o", "json"});
  ASSERT_EQ(workers.exit_code, 0) << workers.err;
  EXPECT_FALSE(json_of(workers).at("items").as_array().empty()) << workers.out;
  auto drained = ctl({"worker", "drain", "n1"});
  ASSERT_EQ(drained.exit_code, 0) << drained.err;
  EXPECT_EQ(drained.out, "worker n1: draining\n");
  auto listed = json_of(ctl({"worker", "list", "-o", "json"}));
  EXPECT_EQ(str(listed.at("items").as_array().at(0).as_object(), "status"), "draining");
  auto undrained = ctl({"worker", "undrain", "n1", "-o", "json"});
  ASSERT_EQ(undrained.exit_code, 0) << undrained.err;
  EXPECT_EQ(str(json_of(undrained).as_object(), "status"), "online");
  EXPECT_EQ(ctl({"worker", "drain", "no-such-worker"}).exit_code, 3);

  auto pressure = ctl({"backpressure"});
  ASSERT_EQ(pressure.exit_code, 0) << pressure.err;
  EXPECT_NE(pressure.out.find("state"), std::string::npos) << pressure.out;
  auto version = ctl({"version", "-o", "json"});
  ASSERT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(str(json_of(version).at("server").as_object(), "node_id"), "n1");

  auto id = create(R"({"name": "ctl-on-deploy", "command": "true", "event": "ctl-deploy"})");
  ASSERT_GT(id, 0);
  auto fired = ctl({"event", "fire", "ctl-deploy", "-f", "-", "-o", "json"}, R"({"sha": "abc"})");
  ASSERT_EQ(fired.exit_code, 0) << fired.err;
  auto tasks = json_of(fired).at("fired_tasks").as_array();
  ASSERT_EQ(tasks.size(), 1u) << fired.out;
  EXPECT_EQ(tasks[0].to_number<int64_t>(), id);
}

TEST_F(aischedctl, sets_pools_and_calendars_that_tasks_then_name) {
  auto set = ctl({"pool", "set", "ctl-db", "--size", "3", "-o", "json"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(num(json_of(set).as_object(), "size"), 3);
  auto pools = ctl({"pool", "list"});
  ASSERT_EQ(pools.exit_code, 0) << pools.err;
  EXPECT_NE(pools.out.find("ctl-db"), std::string::npos) << pools.out;

  auto cal = ctl({"calendar", "set", "ctl-holidays", "--date", "2030-12-25", "--date",
                  "2030-12-31..2031-01-01", "--description", "closed", "-o", "json"});
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  auto dates = json_of(cal).as_object().at("dates").as_array();
  EXPECT_EQ(dates.size(), 2u);
  // The preview takes the calendar (the server skips its dates; see controls_test).
  auto next = ctl({"cron", "next", "@daily", "--calendar", "ctl-holidays", "-n", "2", "-o", "json"});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(json_of(next).as_object().at("times").as_array().size(), 2u);
  auto unknown = ctl({"cron", "next", "@daily", "--calendar", "ctl-none"});
  EXPECT_NE(unknown.exit_code, 0) << "an unknown calendar is an error, not an empty preview";
  auto bad = ctl({"calendar", "set", "ctl-bad", "--date", "2030-02-30"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("dates[0]"), std::string::npos) << bad.err;

  auto id = create(R"({"name":"ctl-limited","command":"true","schedule":"0 3 * * *",
                       "pool":"ctl-db","exclude_calendar":"ctl-holidays","max_runs":2})");
  ASSERT_GT(id, 0);
  auto in_use = ctl({"calendar", "delete", "ctl-holidays"});
  EXPECT_NE(in_use.exit_code, 0) << "a task still excludes it";
  EXPECT_NE(in_use.err.find(std::to_string(id)), std::string::npos) << in_use.err;
  EXPECT_EQ(ctl({"task", "delete", std::to_string(id)}).exit_code, 0);
  EXPECT_EQ(ctl({"calendar", "delete", "ctl-holidays"}).exit_code, 0);
}

// Issue #43: `pool get` showed the size but not how much of it runs hold.
TEST_F(aischedctl, pool_get_shows_the_slots_its_running_runs_hold) {
  ASSERT_EQ(ctl({"pool", "set", "ctl-busy", "--size", "2"}).exit_code, 0);
  auto idle = ctl({"pool", "get", "ctl-busy", "-o", "json"});
  ASSERT_EQ(idle.exit_code, 0) << idle.err;
  EXPECT_EQ(num(json_of(idle).as_object(), "in_use"), 0) << idle.out;
  auto id = create(R"({"name": "ctl-pooled", "command": "sleep 5", "pool": "ctl-busy"})");
  ASSERT_GT(id, 0);
  auto triggered = ctl({"task", "trigger", std::to_string(id), "-o", "json"});
  ASSERT_EQ(triggered.exit_code, 0) << triggered.err;
  std::string last;
  bool shown = eventually(
      [&] {
        auto r = ctl({"pool", "get", "ctl-busy"});
        last = r.out + r.err;
        for (auto& line : lines(r.out))
          if (line.rfind("in_use", 0) == 0 && line.find(" 1") != std::string::npos) return true;
        return false;
      },
      10s);
  EXPECT_TRUE(shown) << last;
  auto runs = json_of(triggered).at("instances").as_array();
  if (!runs.empty()) ctl({"run", "cancel", str(runs[0].as_object(), "id")});
}
