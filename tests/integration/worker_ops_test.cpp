// Operating workers on a real single `aisched` node (all roles, built-in
// worker "n1"): live output of a running run over Server-Sent Events, the
// stored output tail, draining and removing a worker, the machine load
// workers report, and a worker whose outbox will not open taking no runs. Every wait polls with a deadline; a run that must block does
// so on a gate file the test creates, not on a timer.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/node_process.hpp"
#include "support/sse_reader.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

int64_t create_task(uint16_t port, const json::object& doc) {
  auto r = http_call(port, "POST", "/api/v1/tasks", json::serialize(doc));
  if (r.status != 201) {
    ADD_FAILURE() << "create failed (" << r.status << "): " << r.body;
    return 0;
  }
  return num(parse(r).as_object(), "id");
}

/// Triggers task `id`; returns the id of its first instance ("" on failure).
std::string trigger(uint16_t port, int64_t id) {
  auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger");
  if (r.status != 201) {
    ADD_FAILURE() << "trigger failed (" << r.status << "): " << r.body;
    return "";
  }
  return str(parse(r).at("instances").as_array().at(0).as_object(), "id");
}

std::string state_of(uint16_t port, const std::string& instance_id) {
  auto r = http_call(port, "GET", "/api/v1/instances/" + instance_id);
  return r.status == 200 ? str(parse(r).as_object(), "state") : "";
}

json::object worker_doc(uint16_t port, const std::string& id) {
  auto r = http_call(port, "GET", "/api/v1/workers");
  if (r.status != 200) return {};
  auto v = parse(r);  // kept alive: the loop walks into it
  for (auto& w : v.at("items").as_array())
    if (str(w.as_object(), "id") == id) return w.as_object();
  return {};
}

}  // namespace

TEST(worker_ops, output_streams_live_while_the_run_runs) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto gate = dir.path() + "/gate";
  auto id = create_task(
      port, {{"name", "talker"},
             {"kind", "shell"},
             {"command", "echo first-line; while [ ! -f " + gate +
                             " ]; do sleep 0.05; done; echo second-line"},
             {"at", "2099-01-01T00:00:00Z"}});
  ASSERT_GT(id, 0);
  auto run = trigger(port, id);
  ASSERT_FALSE(run.empty());

  sse_reader stream(port, "/api/v1/instances/" + run + "/output?follow=true");
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(stream.wait_for("first-line", 15s)) << stream.text() << tail(node.log());
  EXPECT_NE(stream.text().find("text/event-stream"), std::string::npos) << stream.text();
  // The run is held at the gate: the first line arrived while it runs.
  EXPECT_EQ(state_of(port, run), "running");
  EXPECT_EQ(stream.text().find("second-line"), std::string::npos);

  std::ofstream(gate) << "open\n";
  ASSERT_TRUE(stream.wait_for("event: end", 15s)) << stream.text();
  EXPECT_NE(stream.text().find("second-line"), std::string::npos) << stream.text();
  EXPECT_NE(stream.text().find(R"("state":"success")"), std::string::npos) << stream.text();
  // The live lines came once each; the stored tail was not sent again.
  auto text = stream.text();
  EXPECT_EQ(text.find("first-line"), text.rfind("first-line")) << text;
  EXPECT_TRUE(stream.wait_for("\r\n0\r\n\r\n", 5s) || stream.closed()) << "stream did not end";

  // After the run: the stored tail, as JSON and as a (short) stream.
  auto r = http_call(port, "GET", "/api/v1/instances/" + run + "/output");
  ASSERT_EQ(r.status, 200u) << r.body;
  auto out = str(parse(r).as_object(), "output");
  EXPECT_NE(out.find("first-line\nsecond-line"), std::string::npos) << out;
  sse_reader again(port, "/api/v1/instances/" + run + "/output?follow=true");
  ASSERT_TRUE(again.wait_for("event: end", 10s)) << again.text();
  EXPECT_NE(again.text().find("second-line"), std::string::npos) << again.text();

  auto missing = run.substr(0, run.find('-')) + "-0-0";
  EXPECT_EQ(http_call(port, "GET", "/api/v1/instances/" + missing + "/output?follow=true").status,
            404u) << missing;
}

TEST(worker_ops, drained_worker_takes_no_runs_until_taken_back) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  // The built-in worker reports its machine's load in its heartbeats.
  ASSERT_TRUE(eventually([&] {
    auto w = worker_doc(port, "n1");
    return !w.empty() && num(w, "memory_percent") > 0;
  }, 15s)) << json::serialize(worker_doc(port, "n1"));
  auto cpu = num(worker_doc(port, "n1"), "cpu_percent");
  EXPECT_GE(cpu, 0);
  EXPECT_LE(cpu, 100);

  auto r = http_call(port, "POST", "/api/v1/workers/n1/drain");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(str(parse(r).as_object(), "status"), "draining");
  auto id = create_task(port, {{"name", "nothing"}, {"kind", "noop"}, {"at", "2099-01-01T00:00:00Z"}});
  auto run = trigger(port, id);
  ASSERT_FALSE(run.empty());
  // No other worker exists: the run waits. (A bounded look, then the real check below.)
  EXPECT_FALSE(eventually([&] { return state_of(port, run) != "pending"; }, 1500ms))
      << state_of(port, run);
  // The worker's own heartbeats do not undo an operator's drain.
  EXPECT_EQ(str(worker_doc(port, "n1"), "status"), "draining");

  r = http_call(port, "POST", "/api/v1/workers/n1/undrain");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(str(parse(r).as_object(), "status"), "online");
  EXPECT_TRUE(eventually([&] { return state_of(port, run) == "success"; }, 15s))
      << state_of(port, run);

  EXPECT_EQ(http_call(port, "POST", "/api/v1/workers/ghost/drain").status, 404u);
  EXPECT_EQ(http_call(port, "DELETE", "/api/v1/workers/ghost").status, 404u);
}

TEST(worker_ops, external_worker_heartbeat_load_and_removal) {
  temp_dir dir;
  node_process node(dir.path() + "/data", {"--roles", "scheduler,gateway"});
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  ASSERT_TRUE(await_ready(port)) << http_call(port, "GET", "/readyz").body;
  auto r = http_call(port, "POST", "/api/v1/workers",
                     R"({"id": "ext", "callback_url": "http://127.0.0.1:9", "max_load": 4})");
  ASSERT_EQ(r.status, 201u) << r.body;
  // The registration's answer is the one place the worker's credential shows.
  auto credential = str(parse(r).as_object(), "credential");
  ASSERT_EQ(credential.size(), 64u) << r.body;
  EXPECT_EQ(http_call(port, "GET", "/api/v1/workers").body.find(credential), std::string::npos);
  std::map<std::string, std::string> cred{{"X-Worker-Credential", credential}};
  // Without it, or with another, a heartbeat is refused.
  EXPECT_EQ(http_call(port, "POST", "/api/v1/workers/ext/heartbeat", R"({"load": 1})").status,
            403u);
  EXPECT_EQ(http_call(port, "POST", "/api/v1/workers/ext/heartbeat", R"({"load": 1})", 10s,
                      {{"X-Worker-Credential", std::string(64, '0')}})
                .status,
            403u);
  r = http_call(port, "POST", "/api/v1/workers/ext/heartbeat",
                R"({"load": 2, "cpu_percent": 37, "memory_percent": 55})", 10s, cred);
  ASSERT_EQ(r.status, 200u) << r.body;
  auto w = worker_doc(port, "ext");
  EXPECT_EQ(num(w, "cpu_percent"), 37);
  EXPECT_EQ(num(w, "memory_percent"), 55);
  EXPECT_EQ(num(w, "load"), 2);

  r = http_call(port, "POST", "/api/v1/workers/ext/heartbeat", R"({"cpu_percent": 101})");
  EXPECT_EQ(r.status, 400u) << r.body;
  EXPECT_NE(r.body.find(R"("field":"cpu_percent")"), std::string::npos) << r.body;
  r = http_call(port, "POST", "/api/v1/workers/ext/heartbeat", R"({"draining": true})", 10s, cred);
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(str(worker_doc(port, "ext"), "status"), "draining");

  EXPECT_EQ(http_call(port, "DELETE", "/api/v1/workers/ext").status, 204u);
  EXPECT_TRUE(worker_doc(port, "ext").empty());
  // A forgotten worker is told to register again.
  EXPECT_EQ(http_call(port, "POST", "/api/v1/workers/ext/heartbeat", "{}").status, 404u);
}

TEST(worker_ops, a_worker_whose_outbox_will_not_open_takes_no_runs) {
  // A regular file where the built-in worker's outbox directory goes: RocksDB
  // cannot open it, so reports could not survive a restart of the worker.
  temp_dir dir;
  auto data = dir.path() + "/data";
  std::filesystem::create_directories(data);
  std::filesystem::permissions(data, std::filesystem::perms::owner_all);  // the node's alone
  std::ofstream(data + "/worker-outbox") << "not a directory\n";
  node_process node(data);
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  ASSERT_TRUE(eventually([&] { return !worker_doc(port, "n1").empty(); }, 15s)) << tail(node.log());
  EXPECT_EQ(num(worker_doc(port, "n1"), "max_load"), 0)
      << "the worker registered capacity its outbox cannot back: "
      << json::serialize(worker_doc(port, "n1"));

  auto id = create_task(port, {{"name", "nothing"}, {"kind", "noop"}, {"at", "2099-01-01T00:00:00Z"}});
  auto run = trigger(port, id);
  ASSERT_FALSE(run.empty());
  std::string why;
  EXPECT_TRUE(eventually([&] {
    auto r = http_call(port, "GET", "/api/v1/instances/" + run);
    if (r.status != 200) return false;
    auto x = parse(r).as_object();
    why = str(x, "state") + ": " + str(x, "error");
    return str(x, "state") == "pending" && why.find("take no runs") != std::string::npos;
  }, 15s)) << "the run should wait, saying why; it is " << why;
  EXPECT_NE(node.log().find("worker outbox failed"), std::string::npos) << tail(node.log());
  auto m = http_call(port, "GET", "/metrics");
  EXPECT_NE(m.body.find("worker_outbox_errors_total 1"), std::string::npos);
}
