// Worker nodes beside a scheduler node, for the integration tests that stop,
// kill or watch them (tests/integration: dead_worker, stopped_worker,
// fencing_node, cluster_workers, cluster_admission, cluster_tls): starting
// one, the cluster port a node listens on, what the
// REST API says of a worker and of a run's attempts, and a file every run
// may append to whatever user it executes as.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

namespace aisched::test {

/// The cluster port a scheduler node logged, waiting up to `limit` for the
/// line: a node may answer HTTP (node_process's start) before it logs it.
/// The last one: the log may hold earlier incarnations. 0 if none comes.
/// `Process` is a node_process or a child_process.
template <class Process>
uint16_t cluster_port_of(const Process& node,
                         std::chrono::milliseconds limit = std::chrono::seconds(15)) {
  static const std::regex re(R"re("msg":"cluster listening","addr":"127\.0\.0\.1:(\d+)")re");
  uint16_t port = 0;
  eventually(
      [&] {
        auto log = node.log();
        for (auto it = std::sregex_iterator(log.begin(), log.end(), re);
             it != std::sregex_iterator(); ++it)
          port = static_cast<uint16_t>(std::stoi((*it)[1]));
        return port != 0;
      },
      limit);
  return port;
}

/// Worker node `id` with label `label` ("zone=b") joining 127.0.0.1:`cluster_port`;
/// its data and log under `dir`. A test failure if it does not start.
inline std::unique_ptr<child_process> start_worker_node(const std::string& dir,
                                                        const std::string& id,
                                                        uint16_t cluster_port,
                                                        const std::string& label) {
  auto p = std::make_unique<child_process>(
      std::vector<std::string>{AISCHED_BINARY, "--node-id", id, "--roles", "worker", "--join",
                               "127.0.0.1:" + std::to_string(cluster_port), "--data-dir",
                               dir + "/" + id, "--worker-label", label},
      dir + "/" + id + ".log");
  if (p->await_log(R"("msg":"worker node started")").empty())
    ADD_FAILURE() << "worker node " << id << " did not start; log:\n" << p->log();
  return p;
}

/// Status ("online", "offline" ...) of worker `id` as the node lists it; "" if unlisted.
inline std::string worker_status(uint16_t port, const std::string& id) {
  using namespace std::chrono_literals;
  auto r = http_call(port, "GET", "/api/v1/workers", "", 2s);
  if (r.status != 200) return "";
  auto v = parse(r);
  if (!v.is_object() || !v.as_object().contains("items")) return "";
  for (auto& w : v.at("items").as_array())
    if (str(w.as_object(), "id") == id) return str(w.as_object(), "status");
  return "";
}

/// GET /api/v1/instances/{id}; empty unless it answers 200.
inline boost::json::object instance_of(uint16_t port, const std::string& id) {
  using namespace std::chrono_literals;
  auto r = http_call(port, "GET", "/api/v1/instances/" + id, "", 2s);
  if (r.status != 200) return {};
  auto v = parse(r);
  return v.is_object() ? v.as_object() : boost::json::object{};
}

/// The run's attempt history, oldest first (the attempt in flight included).
inline std::vector<boost::json::object> attempts_of(uint16_t port, const std::string& id) {
  using namespace std::chrono_literals;
  std::vector<boost::json::object> out;
  auto r = http_call(port, "GET", "/api/v1/instances/" + id + "/attempts", "", 2s);
  if (r.status != 200) return out;
  auto v = parse(r);
  if (!v.is_object() || !v.as_object().contains("attempts")) return out;
  for (auto& a : v.at("attempts").as_array()) out.push_back(a.as_object());
  return out;
}

/// An empty file `dir`/side/executions that every run may append to (runs
/// may execute as another user: the directory and the file are open to all).
inline std::string shared_runs_file(const std::string& dir) {
  auto side = dir + "/side";
  EXPECT_EQ(mkdir(side.c_str(), 0777), 0);
  EXPECT_EQ(chmod(side.c_str(), 0777), 0);
  auto file = side + "/executions";
  std::ofstream(file).flush();
  EXPECT_EQ(chmod(file.c_str(), 0666), 0);
  return file;
}

}  // namespace aisched::test
