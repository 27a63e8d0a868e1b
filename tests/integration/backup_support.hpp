// What the backup tests on real nodes share (backup_node_test, backup_group_test):
// the cluster key, reading tasks, runs, metrics and backup files through the API
// and aischedctl, filling a node with held runs, and the fixture's temporary directory.
// The readers take optional headers (auth::bearer(token)) for nodes started with --auth.
#pragma once

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
#include "support/auth_client.hpp"
#include "support/node_process.hpp"
#include "support/raft_group_process.hpp"
#include "support/test_helpers.hpp"

namespace aisched::test::backup {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

inline constexpr const char* key_hex = "6b1f3c5e7a9d0b2c4e6f8a1b3c5d7e9f0a2b4c6d8e1f3a5b7c9d0e2f4a6b8c1d";
inline constexpr const char* secret_value = "Rk7-backup-s3cret-value";

inline std::string write_key(const std::string& path) {
  std::ofstream(path) << key_hex << "\n";
  ::chmod(path.c_str(), 0600);
  return path;
}

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string cluster_id_at(uint16_t port, const auth::headers& h = {}) {
  auto r = http_call(port, "GET", "/api/v1/cluster", "", 10s, h);
  return r.status == 200 ? str(parse(r).as_object(), "cluster_id") : "";
}

/// The fields of each task that a restore must keep, by id (the id first).
inline std::vector<std::string> task_rows(uint16_t port, const auth::headers& h = {}) {
  std::vector<std::string> out;
  auto r = http_call(port, "GET", "/api/v1/tasks?limit=1000", "", 10s, h);
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

inline bool has_task(uint16_t port, int64_t id, const auth::headers& h = {}) {
  return http_call(port, "GET", "/api/v1/tasks/" + std::to_string(id), "", 10s, h).status == 200;
}

/// Task `task`'s runs on the node at `port`, from one listing (one read of its state);
/// none if it did not answer.
inline json::array runs_of(uint16_t port, int64_t task, const auth::headers& h = {}) {
  auto r = http_call(port, "GET", "/api/v1/instances?limit=1000&task_id=" + std::to_string(task),
                     "", 10s, h);
  if (r.status != 200) return {};
  auto doc = parse(r);
  auto* items = doc.is_object() ? doc.as_object().if_contains("items") : nullptr;
  return items && items->is_array() ? items->as_array() : json::array{};
}

/// The ids of task `task`'s runs on the node at `port` whose slot is at or after
/// `since_ms` and, unless `state` is "", that are in `state`.
inline std::vector<std::string> run_ids(uint16_t port, int64_t task, int64_t since_ms,
                                 const std::string& state = "", const auth::headers& h = {}) {
  std::vector<std::string> out;
  for (auto& x : runs_of(port, task, h)) {
    auto& o = x.as_object();
    if (time_ms(o.at("slot")) >= since_ms && (state.empty() || str(o, "state") == state))
      out.push_back(str(o, "id"));
  }
  return out;
}

inline json::object instance_at(uint16_t port, const std::string& id,
                                const auth::headers& h = {}) {
  auto r = http_call(port, "GET", "/api/v1/instances/" + id, "", 10s, h);
  EXPECT_EQ(r.status, 200u) << id << ": " << r.body;
  return r.status == 200 ? parse(r).as_object() : json::object{};
}

/// Triggers task `id`; the id of its run.
inline std::string trigger(uint16_t port, int64_t id, const auth::headers& h = {}) {
  auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger", "", 10s, h);
  EXPECT_EQ(r.status, 201u) << r.body;
  if (r.status != 201) return "";
  return str(parse(r).at("instances").as_array().at(0).as_object(), "id");
}

/// Waits for run `id` to reach `state`; its last view.
inline json::object await_state(uint16_t port, const std::string& id, const std::string& state,
                         std::chrono::milliseconds timeout = 20s, const auth::headers& h = {}) {
  json::object last;
  eventually(
      [&] {
        last = instance_at(port, id, h);
        return str(last, "state") == state;
      },
      timeout);
  EXPECT_EQ(str(last, "state"), state) << id << ": " << json::serialize(last);
  return last;
}

inline command_result restore(const std::vector<std::string>& args) {
  std::vector<std::string> all{AISCHED_BINARY, "restore"};
  all.insert(all.end(), args.begin(), args.end());
  return run_command(all, 60s);
}

/// The value of the unlabelled series `name` on the node at `port`'s /metrics; -1 if absent.
inline double metric(uint16_t port, const std::string& name) {
  auto r = http_call(port, "GET", "/metrics");
  auto at = r.body.find("\n" + name + " ");
  if (r.status != 200 || at == std::string::npos) return -1;
  return std::stod(r.body.substr(at + name.size() + 2));
}

/// The names in `dir` that end with `suffix`, sorted.
inline std::vector<std::string> names_ending(const std::string& dir, const std::string& suffix) {
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
inline bool await_bytes(const std::string& path, child_process& writer,
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
inline bool fill_with_held_runs(uint16_t port) {
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
inline std::vector<std::string> save_args(uint16_t port, const std::string& file) {
  return {AISCHEDCTL_BINARY, "--server", "http://127.0.0.1:" + std::to_string(port),
          "cluster",         "snapshot", "save",
          file};
}

/// `aischedctl -o json snapshot status FILE`, checked to verify; the file's count of
/// records in column family `column` (-1 if it did not verify or does not say).
inline int64_t verified_records(const std::string& file, const char* column) {
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
}  // namespace aisched::test::backup
