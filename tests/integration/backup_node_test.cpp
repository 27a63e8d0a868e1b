// Backups on real nodes (issue 46): a node's state saved with GET
// /api/v1/cluster/snapshot and with `aischedctl cluster snapshot save`,
// inspected with `aischedctl snapshot status`, restored with `aisched restore`
// into a new data directory, and a node started on it: its tasks, finished runs
// and secrets (a run still opens its secret) are the saved ones, the run that
// was in flight ended worker_lost, and its cluster id is a new one. A used data
// directory and a damaged file are refused. Scheduled backups (--backup-dir, every
// 1 s here, keep 2) rotate, and the newest restores. One file restored into the three
// members of a new group: they elect a leader, serve the saved tasks and runs under one
// new cluster id, give new ids, fire the periodic task, and two of them go on after the
// leader's SIGKILL. A save cut by the node's SIGKILL leaves no file, and the save after
// the node's restart verifies. In a group of three: a save cut by the leader's SIGKILL
// leaves no partial file, and a save through a surviving member (from the next leader)
// verifies with every run; scheduled backups (every member with its own --backup-dir)
// move to the next leader and rotate in every directory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <csignal>

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "proto/time.hpp"
#include "support/node_process.hpp"
#include "support/raft_group_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr const char* key_hex = "6b1f3c5e7a9d0b2c4e6f8a1b3c5d7e9f0a2b4c6d8e1f3a5b7c9d0e2f4a6b8c1d";
constexpr const char* secret_value = "Rk7-backup-s3cret-value";

std::string write_key(const std::string& path) {
  std::ofstream(path) << key_hex << "\n";
  ::chmod(path.c_str(), 0600);
  return path;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string cluster_id_at(uint16_t port) {
  auto r = http_call(port, "GET", "/api/v1/cluster");
  return r.status == 200 ? str(parse(r).as_object(), "cluster_id") : "";
}

/// The fields of each task that a restore must keep, by id (the id first).
std::vector<std::string> task_rows(uint16_t port) {
  std::vector<std::string> out;
  auto r = http_call(port, "GET", "/api/v1/tasks?limit=1000");
  EXPECT_EQ(r.status, 200u) << r.body;
  auto doc = parse(r);
  for (auto& t : doc.at("items").as_array()) {
    auto& o = t.as_object();
    auto* paused = o.if_contains("paused");
    out.push_back(std::to_string(num(o, "id")) + " " + str(o, "name") + " " +
                  str(o, "schedule") + " " + str(o, "at") + " " + str(o, "command") + " " +
                  (paused && paused->is_bool() && paused->get_bool() ? "paused" : "active"));
  }
  return out;
}

bool has_task(uint16_t port, int64_t id) {
  return http_call(port, "GET", "/api/v1/tasks/" + std::to_string(id)).status == 200;
}

/// The ids of task `task`'s runs on the node at `port` whose slot is at or after
/// `since_ms` and, unless `state` is "", that are in `state`.
std::vector<std::string> run_ids(uint16_t port, int64_t task, int64_t since_ms,
                                 const std::string& state = "") {
  std::vector<std::string> out;
  auto r = http_call(port, "GET", "/api/v1/instances?limit=1000&task_id=" + std::to_string(task));
  if (r.status != 200) return out;
  auto doc = parse(r);
  for (auto& x : doc.at("items").as_array()) {
    auto& o = x.as_object();
    if (time_ms(o.at("slot")) >= since_ms && (state.empty() || str(o, "state") == state))
      out.push_back(str(o, "id"));
  }
  return out;
}

json::object instance_at(uint16_t port, const std::string& id) {
  auto r = http_call(port, "GET", "/api/v1/instances/" + id);
  EXPECT_EQ(r.status, 200u) << id << ": " << r.body;
  return r.status == 200 ? parse(r).as_object() : json::object{};
}

/// Triggers task `id`; the id of its run.
std::string trigger(uint16_t port, int64_t id) {
  auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger");
  EXPECT_EQ(r.status, 201u) << r.body;
  if (r.status != 201) return "";
  return str(parse(r).at("instances").as_array().at(0).as_object(), "id");
}

/// Waits for run `id` to reach `state`; its last view.
json::object await_state(uint16_t port, const std::string& id, const std::string& state,
                         std::chrono::milliseconds timeout = 20s) {
  json::object last;
  eventually(
      [&] {
        last = instance_at(port, id);
        return str(last, "state") == state;
      },
      timeout);
  EXPECT_EQ(str(last, "state"), state) << id << ": " << json::serialize(last);
  return last;
}

command_result restore(const std::vector<std::string>& args) {
  std::vector<std::string> all{AISCHED_BINARY, "restore"};
  all.insert(all.end(), args.begin(), args.end());
  return run_command(all, 60s);
}

/// The value of the unlabelled series `name` on the node at `port`'s /metrics; -1 if absent.
double metric(uint16_t port, const std::string& name) {
  auto r = http_call(port, "GET", "/metrics");
  auto at = r.body.find("\n" + name + " ");
  if (r.status != 200 || at == std::string::npos) return -1;
  return std::stod(r.body.substr(at + name.size() + 2));
}

/// The names in `dir` that end with `suffix`, sorted.
std::vector<std::string> names_ending(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    auto n = e.path().filename().string();
    if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Polls (every millisecond) until file `path` holds a byte; false if `writer`
/// exits or `timeout` passes first.
bool await_bytes(const std::string& path, child_process& writer,
                 std::chrono::milliseconds timeout = 30s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline && writer.running()) {
    std::error_code ec;
    auto size = fs::file_size(path, ec);
    if (!ec && size > 0) return true;
    struct timespec ms{0, 1'000'000};
    nanosleep(&ms, nullptr);
  }
  return false;
}

constexpr int held_batches = 50, held_per_batch = 100;

/// Creates a paused task on the node at `port` and enqueues held_batches x
/// held_per_batch runs with a 10 kB payload each (a paused task's runs stay pending):
/// a file of about 50 MB, far more than the socket buffers between node and CLI hold.
/// False (the test failed) if a call did not succeed.
bool fill_with_held_runs(uint16_t port) {
  auto held = create_task(port, R"({"name":"held","command":"true"})");
  EXPECT_NE(held, 0);
  if (held == 0) return false;
  auto task_path = "/api/v1/tasks/" + std::to_string(held);
  auto paused = http_call(port, "POST", task_path + "/pause");
  EXPECT_EQ(paused.status, 200u) << paused.body;
  if (paused.status != 200) return false;
  json::array payloads;
  for (int k = 0; k < held_per_batch; ++k)
    payloads.push_back(json::object{{"blob", std::string(10'000, 'x')}});
  auto body = json::serialize(json::object{{"payloads", std::move(payloads)}});
  for (int b = 0; b < held_batches; ++b) {
    auto r = http_call(port, "POST", task_path + "/runs", body, 30s);
    EXPECT_EQ(r.status, 202u) << "batch " << b << ": " << r.body;
    if (r.status != 202) return false;
  }
  return true;
}

/// `aischedctl --server <the node at port> cluster snapshot save FILE`.
std::vector<std::string> save_args(uint16_t port, const std::string& file) {
  return {AISCHEDCTL_BINARY, "--server", "http://127.0.0.1:" + std::to_string(port),
          "cluster",         "snapshot", "save",
          file};
}

/// `aischedctl -o json snapshot status FILE`, checked to verify; the file's count of
/// records in column family `column` (-1 if it did not verify or does not say).
int64_t verified_records(const std::string& file, const char* column) {
  auto status = run_command({AISCHEDCTL_BINARY, "-o", "json", "snapshot", "status", file}, 60s);
  EXPECT_EQ(status.exit_code, 0) << file << ": " << status.out << status.err;
  boost::system::error_code ec;
  auto doc = json::parse(status.out, ec);
  EXPECT_FALSE(ec) << status.out;
  if (status.exit_code != 0 || ec || !doc.is_object()) return -1;
  auto& o = doc.as_object();
  EXPECT_EQ(str(o, "checksum"), "ok") << status.out;
  auto* counts = o.if_contains("records_by_column");
  if (str(o, "checksum") != "ok" || !counts || !counts->is_object()) return -1;
  auto* n = counts->as_object().if_contains(column);
  return n && n->is_int64() ? n->as_int64() : n && n->is_uint64() ? int64_t(n->as_uint64()) : 0;
}

class backup_node : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.path() + "/" + name; }
  temp_dir dir_;
};

TEST_F(backup_node, saved_state_restores_into_a_new_cluster) {
  auto key = write_key(path("secrets.key"));
  auto sleep_arg = unique_sleep_arg(60);
  std::string restored_dir = path("restored");
  std::vector<std::string> tasks_before;
  std::string run_done, run_in_flight, cluster_before, file = path("route.snapshot");
  int64_t uses_secret = 0;
  {
    node_process a(path("data"), {"--secrets-key-file", key});
    ASSERT_TRUE(a.running());
    auto port = a.http_port();
    ASSERT_TRUE(await_ready(port));
    ASSERT_EQ(http_call(port, "PUT", "/api/v1/secrets/db",
                        json::serialize(json::object{{"value", secret_value}}))
                  .status,
              200u);
    create_task(port, R"({"name":"nightly","command":"true","schedule":"0 3 * * *"})");
    auto quick = create_task(port, R"({"name":"quick","command":"true"})");
    auto slow = create_task(port, json::serialize(json::object{
                                      {"name", "slow"}, {"command", "sleep " + sleep_arg}}));
    uses_secret = create_task(
        port, json::serialize(json::object{
                  {"name", "uses-secret"},
                  // The value in two parts: the task never holds it whole.
                  {"command", R"(test "${DB#Rk7-backup-}" = "s3cret-value")"},
                  {"secrets", json::object{{"DB", "db"}}}}));
    ASSERT_TRUE(quick && slow && uses_secret);
    run_done = trigger(port, quick);
    await_state(port, run_done, "success");
    run_in_flight = trigger(port, slow);
    await_state(port, run_in_flight, "running");
    tasks_before = task_rows(port);
    cluster_before = cluster_id_at(port);
    ASSERT_FALSE(cluster_before.empty());

    auto saved = http_call(port, "GET", "/api/v1/cluster/snapshot", "", 30s);
    ASSERT_EQ(saved.status, 200u) << saved.body;
    EXPECT_EQ(saved.content_type, "application/octet-stream");
    EXPECT_FALSE(saved.headers["x-aisched-snapshot-index"].empty());
    EXPECT_EQ(saved.headers["x-aisched-cluster-id"], cluster_before);
    std::ofstream(file, std::ios::binary) << saved.body;

    // The same through aischedctl: FILE.tmp, verified, renamed.
    auto server = "http://127.0.0.1:" + std::to_string(port);
    auto ctl_file = path("ctl.snapshot");
    auto ctl = run_command({AISCHEDCTL_BINARY, "--server", server, "cluster", "snapshot", "save",
                            ctl_file},
                           30s);
    EXPECT_EQ(ctl.exit_code, 0) << ctl.err;
    EXPECT_NE(ctl.out.find("(verified)"), std::string::npos) << ctl.out;
    EXPECT_TRUE(fs::exists(ctl_file));
    EXPECT_FALSE(fs::exists(ctl_file + ".tmp"));
  }  // the old node stops: its run in flight never reports

  auto status = run_command({AISCHEDCTL_BINARY, "snapshot", "status", file});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("checksum: ok"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find(cluster_before), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("tasks"), std::string::npos) << status.out;

  auto done = restore({"--from", file, "--data-dir", restored_dir, "--node-id", "n1",
                       "--secrets-key-file", key});
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  EXPECT_NE(done.out.find("New cluster id"), std::string::npos) << done.out;

  node_process b(restored_dir, {"--secrets-key-file", key});
  ASSERT_TRUE(b.running()) << b.log();
  auto port = b.http_port();
  ASSERT_TRUE(await_ready(port)) << tail(b.log());
  auto cluster_after = cluster_id_at(port);
  EXPECT_FALSE(cluster_after.empty());
  EXPECT_NE(cluster_after, cluster_before);
  EXPECT_EQ(task_rows(port), tasks_before);
  EXPECT_EQ(str(instance_at(port, run_done), "state"), "success");
  auto lost = instance_at(port, run_in_flight);
  EXPECT_EQ(str(lost, "state"), "failed") << json::serialize(lost);
  EXPECT_EQ(str(lost, "error").rfind("worker_lost", 0), 0u) << json::serialize(lost);
  auto secrets = parse(http_call(port, "GET", "/api/v1/secrets")).at("items").as_array();
  ASSERT_EQ(secrets.size(), 1u);
  EXPECT_EQ(str(secrets[0].as_object(), "name"), "db");
  // The secret still opens: a run that compares it succeeds.
  await_state(port, trigger(port, uses_secret), "success");
  all_gone(sleep_arg);  // the old node's run, if it outlived its node
}

TEST_F(backup_node, scheduled_backups_rotate_and_the_newest_restores) {
  auto backups = path("backups");  // created by the node
  std::vector<std::string> tasks_before;
  std::string cluster_before;
  {
    node_process a(path("data"),
                   {"--backup-dir", backups, "--backup-interval", "1s", "--backup-keep", "2"});
    ASSERT_TRUE(a.running());
    auto port = a.http_port();
    ASSERT_TRUE(await_ready(port));
    ASSERT_TRUE(create_task(port, R"({"name":"kept","command":"true","schedule":"@every 1h"})"));
    tasks_before = task_rows(port);
    cluster_before = cluster_id_at(port);
    // Three more backups after the task: the newest holds it, and rotation ran.
    auto written = metric(port, "backups_total");
    ASSERT_GE(written, 0) << "backups_total is not served";
    ASSERT_TRUE(eventually([&] { return metric(port, "backups_total") >= written + 3; }, 20s))
        << tail(a.log());
    EXPECT_EQ(metric(port, "backup_failures_total"), 0);
    EXPECT_GT(metric(port, "backup_last_success_timestamp_seconds"), 0);
    auto kept = names_ending(backups, ".snap");
    EXPECT_GE(kept.size(), 1u);
    EXPECT_LE(kept.size(), 2u) << "--backup-keep 2";
    EXPECT_EQ(http_call(port, "GET", "/readyz").status, 200u);
    // A backup being written when the node stops is abandoned, its .tmp removed.
    EXPECT_EQ(a.stop(SIGTERM), 0) << tail(a.log());
  }
  auto kept = names_ending(backups, ".snap");
  ASSERT_GE(kept.size(), 1u);
  EXPECT_LE(kept.size(), 2u);
  EXPECT_TRUE(names_ending(backups, ".tmp").empty());
  auto newest = backups + "/" + kept.back();
  auto status = run_command({AISCHEDCTL_BINARY, "snapshot", "status", newest});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("checksum: ok"), std::string::npos) << status.out;

  auto restored_dir = path("restored");
  auto done = restore({"--from", newest, "--data-dir", restored_dir, "--node-id", "n1"});
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  node_process b(restored_dir);
  ASSERT_TRUE(b.running()) << b.log();
  ASSERT_TRUE(await_ready(b.http_port())) << tail(b.log());
  EXPECT_EQ(task_rows(b.http_port()), tasks_before);
  EXPECT_NE(cluster_id_at(b.http_port()), cluster_before);
}

TEST_F(backup_node, restore_refuses_a_used_directory_and_a_damaged_file) {
  std::string file = path("node.snapshot");
  {
    node_process a(path("data"));
    ASSERT_TRUE(a.running());
    ASSERT_TRUE(await_ready(a.http_port()));
    create_task(a.http_port(), R"({"name":"kept","command":"true","schedule":"@every 1h"})");
    auto saved = http_call(a.http_port(), "GET", "/api/v1/cluster/snapshot", "", 30s);
    ASSERT_EQ(saved.status, 200u) << saved.body;
    std::ofstream(file, std::ios::binary) << saved.body;
  }
  auto used = path("used");
  fs::create_directories(used);
  std::ofstream(used + "/keep-me") << "an operator's file\n";
  auto r = restore({"--from", file, "--data-dir", used, "--node-id", "n1"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("not empty"), std::string::npos) << r.err;
  EXPECT_EQ(std::distance(fs::directory_iterator(used), fs::directory_iterator()), 1);

  auto bytes = read_all(file);
  ASSERT_GT(bytes.size(), 200u);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x20);
  auto damaged = path("damaged.snapshot");
  std::ofstream(damaged, std::ios::binary) << bytes;
  auto fresh = path("fresh");
  r = restore({"--from", damaged, "--data-dir", fresh, "--node-id", "n1"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("checksum mismatch"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(fresh));
  auto verdict = run_command({AISCHEDCTL_BINARY, "snapshot", "status", damaged});
  EXPECT_NE(verdict.exit_code, 0);
  EXPECT_NE(verdict.err.find("checksum mismatch"), std::string::npos) << verdict.err;
}

TEST_F(backup_node, restore_seeds_a_three_member_group) {
  auto file = path("node.snapshot");
  auto sleep_arg = unique_sleep_arg(60);
  std::vector<std::string> tasks_before, fired_before;
  std::string cluster_before, run_done, run_in_flight;
  int64_t every = 0, held = 0;
  {
    node_process a(path("data"));
    ASSERT_TRUE(a.running());
    auto port = a.http_port();
    ASSERT_TRUE(await_ready(port));
    every = create_task(port, R"({"name":"every","command":"true","schedule":"@every 2s"})");
    held = create_task(port, R"({"name":"held","command":"true","schedule":"@every 2s"})");
    auto in_an_hour = aisched::format_rfc3339(wall_ms() + 3'600'000);
    auto once = create_task(port, json::serialize(json::object{
                                      {"name", "once"}, {"command", "true"}, {"at", in_an_hour}}));
    auto quick = create_task(port, R"({"name":"quick","command":"true"})");
    auto slow = create_task(port, json::serialize(json::object{
                                      {"name", "slow"}, {"command", "sleep " + sleep_arg}}));
    ASSERT_TRUE(every && held && once && quick && slow);
    ASSERT_EQ(http_call(port, "POST", "/api/v1/tasks/" + std::to_string(held) + "/pause").status,
              200u);
    run_done = trigger(port, quick);
    await_state(port, run_done, "success");
    run_in_flight = trigger(port, slow);
    await_state(port, run_in_flight, "running");
    // Runs of the periodic task that ended before the save are in the file.
    ASSERT_TRUE(eventually(
        [&] {
          fired_before = run_ids(port, every, 0, "success");
          return !fired_before.empty();
        },
        20s))
        << tail(a.log());
    tasks_before = task_rows(port);
    cluster_before = cluster_id_at(port);
    ASSERT_FALSE(cluster_before.empty());
    auto server = "http://127.0.0.1:" + std::to_string(port);
    auto ctl = run_command(
        {AISCHEDCTL_BINARY, "--server", server, "cluster", "snapshot", "save", file}, 30s);
    ASSERT_EQ(ctl.exit_code, 0) << ctl.out << ctl.err;
  }  // the old node stops

  // Each member of the new group restored from the same file with the same --peers.
  raft_group g(path("group"), 3, {}, 0, /*start_members=*/false);
  std::set<std::string> new_ids;  // the cluster id each restore names
  for (size_t i = 0; i < 3; ++i) {
    auto done = restore({"--from", file, "--data-dir", g.data_dir(i), "--node-id", g.id(i),
                         "--peers", g.peers()});
    ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(done.out, m, std::regex(R"(New cluster id (\S+))"))) << done.out;
    new_ids.insert(m[1].str());
  }
  ASSERT_EQ(new_ids.size(), 1u) << "one file and one --peers make one cluster id";
  auto new_id = *new_ids.begin();
  EXPECT_NE(new_id, cluster_before);
  auto started_ms = wall_ms();
  for (size_t i = 0; i < 3; ++i) g.start(i);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << "no agreed leader\n" << g.dump();

  // Every member serves the saved tasks and finished runs, with their ids, under the new id.
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(g.id(i));
    auto port = g.port(i);
    EXPECT_EQ(task_rows(port), tasks_before);
    EXPECT_EQ(cluster_id_at(port), new_id);
    EXPECT_EQ(str(instance_at(port, run_done), "state"), "success");
    for (auto& run : fired_before)
      EXPECT_EQ(str(instance_at(port, run), "state"), "success") << run;
  }
  // The run in flight in the backup ended worker_lost, and every member holds the
  // same view of it: the members of one group agree on the state at each index.
  std::set<std::string> lost_views;
  std::string shown;
  for (size_t i = 0; i < 3; ++i) {
    auto lost = instance_at(g.port(i), run_in_flight);
    auto view = json::serialize(lost);
    EXPECT_EQ(str(lost, "state"), "failed") << g.id(i) << ": " << view;
    EXPECT_EQ(str(lost, "error").rfind("worker_lost", 0), 0u) << g.id(i) << ": " << view;
    lost_views.insert(view);
    shown += g.id(i) + ": " + view + "\n";
  }
  EXPECT_EQ(lost_views.size(), 1u) << "the members disagree on the lost run:\n" << shown;

  // A task created now gets an id none of the restored tasks has, on every member.
  std::set<int64_t> restored;
  for (auto& row : tasks_before) restored.insert(std::stoll(row.substr(0, row.find(' '))));
  auto fresh = create_task(g.port(leader), R"({"name":"after-restore","command":"true"})");
  ASSERT_NE(fresh, 0) << g.dump();
  EXPECT_EQ(restored.count(fresh), 0u) << "task id " << fresh << " was given again";
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(eventually([&] { return has_task(g.port(i), fresh); })) << g.id(i);

  // The periodic task fires on the new group; the paused one stays paused (two runs
  // 2 s apart span a slot of its 2 s schedule).
  ASSERT_TRUE(eventually(
      [&] { return run_ids(g.port(leader), every, started_ms, "success").size() >= 2; }, 30s))
      << g.dump();
  EXPECT_TRUE(run_ids(g.port(leader), held, started_ms).empty()) << "the paused task fired";

  // The leader SIGKILLed: the two others elect one and accept a write.
  g.kill(leader);
  auto rest = g.running_members();
  ASSERT_EQ(rest.size(), 2u);
  ASSERT_NE(g.await_leader(rest, 20s), none) << g.dump();
  int64_t late = 0;
  ASSERT_TRUE(eventually(
      [&] {
        auto r = http_call(g.port(rest[0]), "POST", "/api/v1/tasks",
                           R"({"name":"after-kill","command":"true"})");
        if (r.status == 201) late = num(parse(r).as_object(), "id");
        return late > 0;
      },
      20s))
      << g.dump();
  for (auto m : rest) EXPECT_TRUE(eventually([&] { return has_task(g.port(m), late); })) << g.id(m);
  all_gone(sleep_arg);  // the old node's run, if it outlived its node
}

TEST_F(backup_node, a_save_cut_by_a_leader_kill_leaves_no_file_and_the_next_save_verifies) {
  constexpr int batches = held_batches, per_batch = held_per_batch;
  auto data = path("data"), file = path("cut.snapshot"), tmp = file + ".tmp";
  auto save = [&file](uint16_t port) { return save_args(port, file); };
  {
    node_process a(data);
    ASSERT_TRUE(a.running());
    auto port = a.http_port();
    ASSERT_TRUE(await_ready(port));
    // 5 000 pending runs with a 10 kB payload each: a file of about 50 MB.
    ASSERT_TRUE(fill_with_held_runs(port)) << tail(a.log());

    child_process ctl(save(port), path("ctl.log"));
    // Once the CLI receives, it is stopped: the node can then hand the kernel no
    // more than the socket buffers hold, so the kill falls inside the transfer.
    ASSERT_TRUE(await_bytes(tmp, ctl)) << ctl.log();
    ASSERT_TRUE(freeze(ctl.pid())) << "the save ended before it could be cut\n" << ctl.log();
    a.stop(SIGKILL);
    bool whole = a.log().find(R"("msg":"snapshot saved")") != std::string::npos;
    int status = ctl.stop(SIGCONT, 60s);  // resumes it, then waits for its exit
    ASSERT_TRUE(WIFEXITED(status)) << status << "\n" << ctl.log();
    EXPECT_EQ(WEXITSTATUS(status), 1)
        << ctl.log() << (whole ? "(the node had sent the whole file before its kill)" : "");
    EXPECT_NE(ctl.log().find("incomplete_snapshot"), std::string::npos) << ctl.log();
    EXPECT_NE(ctl.log().find("nothing was kept"), std::string::npos) << ctl.log();
    EXPECT_FALSE(fs::exists(file));
    EXPECT_FALSE(fs::exists(tmp));
  }

  // Restarted on its data dir, the node saves again, and the file verifies offline
  // with every acknowledged run in it.
  node_process b(data, {}, 60s);
  ASSERT_TRUE(b.running()) << b.log();
  ASSERT_TRUE(await_ready(b.http_port())) << tail(b.log());
  auto saved = run_command(save(b.http_port()), 120s);
  ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err;
  EXPECT_NE(saved.out.find("(verified)"), std::string::npos) << saved.out;
  EXPECT_TRUE(fs::exists(file));
  EXPECT_FALSE(fs::exists(tmp));
  auto status = run_command({AISCHEDCTL_BINARY, "-o", "json", "snapshot", "status", file}, 60s);
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  boost::system::error_code ec;
  auto doc = json::parse(status.out, ec);
  ASSERT_FALSE(ec) << status.out;
  auto& o = doc.as_object();
  EXPECT_EQ(str(o, "checksum"), "ok") << status.out;
  EXPECT_EQ(num(o.at("records_by_column").as_object(), "instances"), batches * per_batch)
      << status.out;
}

/// Whether the member at `port` names a leader other than itself, reachable, with the
/// address its HTTP serves at: what `aischedctl cluster snapshot save` needs to save
/// from the leader through that member.
bool knows_leader_http(uint16_t port) {
  auto r = http_call(port, "GET", "/api/v1/cluster", "", 2s);
  if (r.status != 200) return false;
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object()) return false;
  auto* members = v.as_object().if_contains("members");
  if (!members || !members->is_array()) return false;
  for (auto& m : members->as_array()) {
    auto& o = m.as_object();
    auto* self = o.if_contains("self");
    auto* reachable = o.if_contains("reachable");
    if (str(o, "role") == "leader" && self && self->is_bool() && !self->get_bool() &&
        reachable && reachable->is_bool() && reachable->get_bool() && !str(o, "http_addr").empty())
      return true;
  }
  return false;
}

TEST_F(backup_node, a_save_cut_by_the_group_leaders_kill_fails_cleanly_and_the_next_leader_saves) {
  auto file = path("cut.snapshot"), tmp = file + ".tmp";
  raft_group g(path("group"), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  // 5 000 pending runs with a 10 kB payload each: a file of about 50 MB.
  ASSERT_TRUE(fill_with_held_runs(g.port(leader))) << g.dump();

  child_process ctl(save_args(g.port(leader), file), path("ctl.log"));
  // Once the CLI receives, it is stopped: the leader can then hand the kernel no
  // more than the socket buffers hold, so its kill falls inside the transfer.
  ASSERT_TRUE(await_bytes(tmp, ctl)) << ctl.log();
  ASSERT_TRUE(freeze(ctl.pid())) << "the save ended before it could be cut\n" << ctl.log();
  g.kill(leader);
  int status = ctl.stop(SIGCONT, 60s);  // resumes it, then waits for its exit
  ASSERT_TRUE(WIFEXITED(status)) << status << "\n" << ctl.log();
  EXPECT_FALSE(fs::exists(tmp)) << ctl.log();
  if (WEXITSTATUS(status) == 0) {
    // The leader had sent the whole file before its kill: kept only once verified.
    EXPECT_NE(ctl.log().find("(verified)"), std::string::npos) << ctl.log();
    ASSERT_TRUE(fs::exists(file)) << ctl.log();
    EXPECT_EQ(verified_records(file, "instances"), held_batches * held_per_batch);
  } else {
    EXPECT_EQ(WEXITSTATUS(status), 1) << ctl.log();
    EXPECT_NE(ctl.log().find("incomplete_snapshot"), std::string::npos) << ctl.log();
    EXPECT_NE(ctl.log().find("nothing was kept"), std::string::npos) << ctl.log();
    EXPECT_FALSE(fs::exists(file)) << "a partial file was left\n" << ctl.log();
  }

  // The two others elect a leader; a save through the one that follows (the CLI
  // asks it where the leader serves) gets the file from it, with every acknowledged run.
  auto rest = g.running_members();
  ASSERT_EQ(rest.size(), 2u) << g.dump();
  auto next = g.await_leader(rest, 20s);
  ASSERT_NE(next, none) << g.dump();
  auto through = rest[0] == next ? rest[1] : rest[0];
  ASSERT_TRUE(eventually([&] { return knows_leader_http(g.port(through)); }, 15s))
      << g.id(through) << " does not know where its leader serves\n" << g.dump();
  auto file2 = path("next.snapshot");
  auto saved = run_command(save_args(g.port(through), file2), 120s);
  ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err << "\n" << g.dump();
  EXPECT_NE(saved.out.find("(verified)"), std::string::npos) << saved.out;
  EXPECT_TRUE(fs::exists(file2));
  EXPECT_FALSE(fs::exists(file2 + ".tmp"));
  EXPECT_EQ(verified_records(file2, "instances"), held_batches * held_per_batch)
      << "acknowledged runs are missing from the next leader's snapshot";
}

TEST_F(backup_node, scheduled_backups_go_on_after_a_leader_change) {
  // Every member with the same flags, each with its own directory.
  auto backups = [this](const std::string& id) { return path("backups-" + id); };
  raft_group g(path("group"), 3,
               {"--backup-dir", path("backups-{id}"), "--backup-interval", "1s", "--backup-keep",
                "2"});
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  ASSERT_TRUE(create_task(g.port(leader), R"({"name":"kept","command":"true","schedule":"@every 1h"})"))
      << g.dump();
  // Three backups from the leader: its directory was rotated at least once.
  ASSERT_TRUE(eventually([&] { return metric(g.port(leader), "backups_total") >= 3; }, 20s))
      << g.dump();
  ASSERT_FALSE(names_ending(backups(g.id(leader)), ".snap").empty()) << g.dump();

  // What each directory holds at the kill: a new file after it is a new backup.
  std::vector<std::set<std::string>> before;
  for (size_t i = 0; i < 3; ++i) {
    auto names = names_ending(backups(g.id(i)), ".snap");
    before.emplace_back(names.begin(), names.end());
  }
  g.kill(leader);
  auto rest = g.running_members();
  ASSERT_EQ(rest.size(), 2u) << g.dump();
  auto next = g.await_leader(rest, 20s);
  ASSERT_NE(next, none) << g.dump();
  auto next_dir = backups(g.id(next));
  auto new_files = [&](size_t i) {
    std::vector<std::string> out;
    for (auto& n : names_ending(backups(g.id(i)), ".snap"))
      if (!before[i].count(n)) out.push_back(n);
    return out;
  };
  ASSERT_TRUE(eventually([&] { return !new_files(next).empty(); }, 20s))
      << "the new leader " << g.id(next) << " wrote no backup\n" << g.dump();
  for (auto& n : new_files(next)) EXPECT_EQ(n.rfind("aisched-", 0), 0u) << n;
  // Two more from it: its own directory rotated too.
  auto written = metric(g.port(next), "backups_total");
  ASSERT_GE(written, 1) << g.dump();
  ASSERT_TRUE(
      eventually([&] { return metric(g.port(next), "backups_total") >= written + 2; }, 20s))
      << g.dump();
  EXPECT_EQ(metric(g.port(next), "backup_failures_total"), 0) << g.dump();
  // Only the leader writes: the member that follows wrote none since the kill.
  auto follower = rest[0] == next ? rest[1] : rest[0];
  if (g.agreed_leader(rest) == next) {
    EXPECT_TRUE(new_files(follower).empty()) << g.id(follower) << " wrote backups as a follower";
  }

  for (size_t i = 0; i < 3; ++i)
    EXPECT_LE(names_ending(backups(g.id(i)), ".snap").size(), 2u)
        << g.id(i) << ": --backup-keep 2";
  // The newest of the new leader verifies and holds the task (copied first: the
  // leader rotates its directory while the test reads it).
  auto copy = path("newest.snap");
  std::string newest;
  ASSERT_TRUE(eventually(
      [&] {
        auto kept = names_ending(next_dir, ".snap");
        if (kept.empty()) return false;
        newest = kept.back();
        std::error_code ec;
        fs::copy_file(next_dir + "/" + newest, copy, fs::copy_options::overwrite_existing, ec);
        return !ec;
      },
      10s))
      << g.dump();
  EXPECT_FALSE(before[next].count(newest)) << newest << " is older than the kill";
  EXPECT_EQ(verified_records(copy, "tasks"), 1) << newest;
}

}  // namespace
