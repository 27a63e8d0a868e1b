// Cluster TLS (--tls-cert/--tls-key/--tls-ca): certificates are made at test time
// with tools/make-cluster-certs.sh (the openssl CLI) for the cluster's CA and for a
// foreign one. A TLS group of three elects a leader, replicates a write made on a
// follower and sees every member over TLS; a worker node with a certificate of the
// cluster CA registers and runs a task, while one with a foreign CA's certificate and
// one without TLS never register and the scheduler keeps working; bad credentials
// stop startup with exit 2 and name the file. Every process is started by the
// harness in tests/support/ and killed by pid; all waiting is polling with deadlines.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"
#include "support/worker_nodes.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

/// Runs tools/make-cluster-certs.sh `dir` `nodes`...; false (and a test failure) if it fails.
bool make_certs(const std::string& dir, const std::vector<std::string>& nodes) {
  std::vector<std::string> args{"/bin/sh", AISCHED_MAKE_CERTS, dir};
  args.insert(args.end(), nodes.begin(), nodes.end());
  auto r = run_command(args, 30s);
  if (r.exit_code != 0)
    ADD_FAILURE() << "make-cluster-certs.sh failed (is `openssl` installed? tools/bootstrap.sh "
                     "installs it): "
                  << r.exit_code << "\n"
                  << r.out << r.err;
  return r.exit_code == 0;
}

/// The TLS flags of `node`, whose certificate and key are in `dir`, trusting `ca`.
std::vector<std::string> tls_flags(const std::string& dir, const std::string& node,
                                   const std::string& ca) {
  return {"--tls-cert", dir + "/" + node + ".pem", "--tls-key", dir + "/" + node + ".key",
          "--tls-ca", ca};
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// The leader every one of `ports` names in GET /api/v1/cluster; "" while they disagree.
std::string agreed_leader(const std::vector<uint16_t>& ports) {
  std::set<std::string> named;
  for (auto p : ports) {
    auto r = http_call(p, "GET", "/api/v1/cluster", "", 2s);
    if (r.status != 200) return "";
    named.insert(str(parse(r).as_object(), "leader"));
  }
  return named.size() == 1 ? *named.begin() : "";
}

/// Ids of the workers GET /api/v1/workers lists.
std::set<std::string> listed_workers(uint16_t port) {
  std::set<std::string> out;
  auto r = http_call(port, "GET", "/api/v1/workers");
  if (r.status != 200) return out;
  auto v = parse(r);  // kept: a range-for over parse(r).at(...) would dangle
  for (auto& w : v.at("items").as_array()) out.insert(str(w.as_object(), "id"));
  return out;
}

/// A worker node `id` joining 127.0.0.1:`cluster_port` with `extra` flags; data and log under `dir`.
std::unique_ptr<child_process> worker_node(const std::string& dir, const std::string& id,
                                           uint16_t cluster_port,
                                           const std::vector<std::string>& extra) {
  return std::make_unique<child_process>(
      std::vector<std::string>{AISCHED_BINARY, "--node-id", id, "--roles", "worker", "--join",
                               "127.0.0.1:" + std::to_string(cluster_port), "--data-dir",
                               dir + "/" + id} +
          extra,
      dir + "/" + id + ".log");
}

}  // namespace

// Members of a pair connect in one direction only (raft::dials: the smaller id
// dials, the other waits for its hello): two members dialing each other at once
// made CAF 0.17.6's BASP close both connections of the crossing pair, and TLS
// handshakes are slow enough that this happened on every reconnect.
TEST(cluster_tls, three_members_over_tls_elect_and_replicate) {
  temp_dir dir;
  auto certs = dir.path() + "/certs";
  ASSERT_TRUE(make_certs(certs, {"n1", "n2", "n3"}));
  std::vector<std::string> ids{"n1", "n2", "n3"}, cluster_addrs;
  std::string peers;
  std::set<uint16_t> taken;
  for (auto& id : ids) {
    uint16_t p = 0;
    while (p == 0 || taken.count(p)) p = free_port();
    taken.insert(p);
    cluster_addrs.push_back("127.0.0.1:" + std::to_string(p));
    peers += (peers.empty() ? "" : ",") + id + "=" + cluster_addrs.back();
  }
  std::vector<std::unique_ptr<node_process>> members;
  std::vector<uint16_t> ports;
  for (size_t i = 0; i < ids.size(); ++i) {
    members.push_back(std::make_unique<node_process>(
        dir.path() + "/" + ids[i],
        std::vector<std::string>{"--node-id", ids[i], "--peers", peers} +
            tls_flags(certs, ids[i], certs + "/ca.pem"),
        20s, cluster_addrs[i]));
    ASSERT_TRUE(members.back()->running());
    ports.push_back(members.back()->http_port());
    // The line that names the transport may follow the HTTP answer.
    EXPECT_NE(cluster_port_of(*members.back()), 0) << tail(members.back()->log());
    EXPECT_NE(members.back()->log().find(R"("transport":"tls")"), std::string::npos)
        << tail(members.back()->log());
  }
  auto dump = [&] {
    std::string out;
    for (size_t i = 0; i < members.size(); ++i)
      out += "--- " + ids[i] + "\n" + tail(members[i]->log(), 2000) + "\n";
    return out;
  };
  std::string leader;
  ASSERT_TRUE(eventually([&] { return !(leader = agreed_leader(ports)).empty(); }, 15s))
      << "no agreed leader over TLS\n"
      << dump();

  // A write on a follower reaches the leader (gateway -> leader's endpoint over
  // TLS) and every member's state (raft over TLS).
  size_t follower = ids[0] == leader ? 1 : 0;
  // Right after the election the follower's link to the leader's endpoint may
  // still be opening: it answers 503 (retry), as a client is told to.
  http_result r;
  eventually([&] {
    r = http_call(ports[follower], "POST", "/api/v1/tasks", R"({"name":"over-tls","kind":"noop"})",
                  5s, {{"Idempotency-Key", "over-tls-1"}});
    return r.status != 503;
  }, 15s);
  ASSERT_EQ(r.status, 201u) << r.body << "\n" << dump();
  auto id = std::to_string(num(parse(r).as_object(), "id"));
  for (size_t i = 0; i < ids.size(); ++i)
    EXPECT_TRUE(eventually([&] {
      auto t = http_call(ports[i], "GET", "/api/v1/tasks/" + id);
      return t.status == 200 && str(parse(t).as_object(), "name") == "over-tls";
    })) << ids[i] << " lacks task "
        << id << "\n"
        << dump();

  // The follower's gateway reaches every member's endpoint for its status (the
  // last member pair may still be connecting: a write needs a majority only),
  // and the links stay up while the views are asked for again and again.
  auto all_reachable = [&] {
    r = http_call(ports[follower], "GET", "/api/v1/cluster");
    if (r.status != 200) return false;
    auto view = parse(r);
    for (auto& m : view.at("members").as_array())
      if (!m.as_object().at("reachable").as_bool() || str(m.as_object(), "http_addr").empty())
        return false;
    return true;
  };
  ASSERT_TRUE(eventually(all_reachable, 15s)) << r.body << "\n" << dump();
  // From here on no link goes. (While the members start, two of them may dial
  // each other at once, and CAF closes one of the two connections: that link
  // comes back within a reconnect and is not what this checks.)
  std::vector<size_t> seen;
  for (auto& m : members) seen.push_back(m->log().size());
  for (int k = 0; k < 10; ++k)
    for (auto p : ports) ASSERT_EQ(http_call(p, "GET", "/api/v1/cluster").status, 200u);
  EXPECT_TRUE(all_reachable()) << r.body << "\n" << dump();
  for (size_t i = 0; i < members.size(); ++i)
    EXPECT_EQ(members[i]->log().find("raft " + ids[i] + ": lost", seen[i]), std::string::npos)
        << dump();
}

TEST(cluster_tls, only_worker_nodes_with_a_cluster_certificate_register) {
  temp_dir dir;
  auto certs = dir.path() + "/certs", foreign = dir.path() + "/foreign";
  ASSERT_TRUE(make_certs(certs, {"n1", "w-good"}));
  ASSERT_TRUE(make_certs(foreign, {"w-foreign"}));
  // The intruder trusts the cluster CA as well (its certificate is no secret),
  // so its own side of the handshake succeeds: the scheduler must refuse it.
  auto trust = dir.path() + "/intruder-trust.pem";
  {
    std::ofstream out(trust);
    out << std::ifstream(foreign + "/ca.pem").rdbuf() << std::ifstream(certs + "/ca.pem").rdbuf();
  }
  node_process node(dir.path() + "/n1",
                    std::vector<std::string>{"--roles", "scheduler,gateway"} +
                        tls_flags(certs, "n1", certs + "/ca.pem"));
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  auto cport = cluster_port_of(node);
  ASSERT_NE(cport, 0) << node.log();

  // The good worker connects before the intruders start. CAF 0.17.6's BASP
  // broker cleans up a closed connection later, by its handle, which is the
  // socket's number; when a refused intruder's socket number goes to the good
  // worker's connection, accepted in between, that late cleanup drops the good
  // worker's route (its dispatch then times out). Seen about once in 20 runs
  // with all three starting at once; see README "Cluster security".
  auto good = worker_node(dir.path(), "w-good", cport, tls_flags(certs, "w-good", certs + "/ca.pem"));
  ASSERT_TRUE(eventually([&] { return listed_workers(port).count("w-good") > 0; }, 15s))
      << tail(good->log());
  auto intruder = worker_node(dir.path(), "w-foreign", cport, tls_flags(foreign, "w-foreign", trust));
  auto plain = worker_node(dir.path(), "w-plain", cport, {});
  auto intruders_listed = [&] {
    auto ws = listed_workers(port);
    return ws.count("w-foreign") || ws.count("w-plain");
  };
  auto logs = [&] {
    return "--- scheduler\n" + tail(node.log()) + "\n--- w-good\n" + tail(good->log()) +
           "\n--- w-foreign\n" + tail(intruder->log()) + "\n--- w-plain\n" + tail(plain->log());
  };

  // The good worker registers and runs a task (the scheduler has no built-in worker).
  bool intruded = false;
  ASSERT_TRUE(eventually([&] {
    intruded = intruded || intruders_listed();
    return listed_workers(port).count("w-good") > 0;
  }, 15s)) << logs();
  auto r = http_call(port, "POST", "/api/v1/tasks", R"({"name":"tls-run","command":"echo over tls"})");
  ASSERT_EQ(r.status, 201u) << r.body;
  auto task = std::to_string(num(parse(r).as_object(), "id"));
  ASSERT_TRUE(eventually([&] {
    r = http_call(port, "POST", "/api/v1/tasks/" + task + "/trigger");
    return r.status != 503;  // 503 until the trigger leads and has rebuilt its state
  })) << r.body;
  ASSERT_EQ(r.status, 201u) << r.body;
  auto instance = str(parse(r).at("instances").as_array().at(0).as_object(), "id");
  json::object x;
  ASSERT_TRUE(eventually([&] {
    intruded = intruded || intruders_listed();
    auto g = http_call(port, "GET", "/api/v1/instances/" + instance);
    if (g.status == 200) x = parse(g).as_object();
    return str(x, "state") == "success";
  }, 15s)) << json::serialize(x) << "\n" << logs();
  EXPECT_EQ(str(x, "worker_id"), "w-good") << json::serialize(x);
  EXPECT_NE(str(x, "output").find("over tls"), std::string::npos) << json::serialize(x);

  // Both intruders have been turned away at least once (their registrar says
  // why), and neither was ever listed meanwhile.
  const std::string refused = "cannot register with the cluster";
  ASSERT_TRUE(eventually([&] {
    intruded = intruded || intruders_listed();
    return intruder->log().find(refused) != std::string::npos &&
           plain->log().find(refused) != std::string::npos;
  }, 15s)) << logs();
  EXPECT_FALSE(intruded || intruders_listed()) << http_call(port, "GET", "/api/v1/workers").body;
  EXPECT_TRUE(intruder->running() && plain->running()) << logs();

  // The scheduler keeps working after refusing them.
  EXPECT_EQ(http_call(port, "GET", "/healthz").status, 200u) << logs();
  r = http_call(port, "POST", "/api/v1/tasks", R"({"name":"after","kind":"noop"})");
  EXPECT_EQ(r.status, 201u) << r.body << "\n" << logs();
  EXPECT_TRUE(listed_workers(port).count("w-good")) << logs();
}

TEST(cluster_tls, bad_credentials_stop_startup_with_exit_2) {
  temp_dir dir;
  auto certs = dir.path() + "/certs";
  ASSERT_TRUE(make_certs(certs, {"n1", "n2"}));
  auto start = [&](const std::vector<std::string>& flags) {
    return run_command(std::vector<std::string>{AISCHED_BINARY, "--data-dir", dir.path() + "/n1",
                                                "--http-addr", "127.0.0.1:0", "--cluster-addr",
                                                "127.0.0.1:0"} +
                       flags);
  };
  auto missing = certs + "/missing.pem";
  auto r = start({"--tls-cert", missing, "--tls-key", certs + "/n1.key", "--tls-ca", certs + "/ca.pem"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;

  // A key that is not the certificate's.
  r = start({"--tls-cert", certs + "/n1.pem", "--tls-key", certs + "/n2.key", "--tls-ca",
             certs + "/ca.pem"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(certs + "/n2.key"), std::string::npos) << r.err;

  // A CA that did not sign the certificate.
  r = start({"--tls-cert", certs + "/n1.pem", "--tls-key", certs + "/n1.key", "--tls-ca",
             certs + "/n2.pem"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(certs + "/n1.pem"), std::string::npos) << r.err;

  // Some but not all of the three.
  r = start({"--tls-cert", certs + "/n1.pem"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--tls-ca"), std::string::npos) << r.err;
}
