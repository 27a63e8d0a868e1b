// Ids that must not collide, on real `aisched` nodes at default flags (issue
// 41 items 7 and 8): bulk enqueues to one task from many producers at once
// are all accepted, each run once under its own ordered id; and worker ids are
// scoped by tenant, so a tenant that registers another tenant's worker id
// first neither blocks that tenant's registration nor learns it exists.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/auth_client.hpp"
#include "support/http_receiver.hpp"
#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

/// The ids of every instance of task `id` (pages of 200); nullopt if a page failed.
std::optional<std::vector<std::string>> instance_ids(uint16_t port, int64_t id) {
  std::vector<std::string> out;
  std::string cursor;
  for (int page = 0; page < 1000; ++page) {
    auto r = http_call(port, "GET", "/api/v1/instances?task_id=" + std::to_string(id) +
                                        "&limit=200" + (cursor.empty() ? "" : "&cursor=" + cursor));
    if (r.status != 200) return std::nullopt;
    auto v = parse(r).as_object();
    for (auto& x : v.at("items").as_array()) out.push_back(str(x.as_object(), "id"));
    cursor = str(v, "next_cursor");
    if (cursor.empty()) return out;
  }
  return std::nullopt;
}

/// The slot of run id `{task}-{slot}-{k}`.
int64_t slot_of(const std::string& run_id) {
  auto a = run_id.find('-');
  auto b = run_id.rfind('-');
  return std::stoll(run_id.substr(a + 1, b - a - 1));
}

}  // namespace

TEST(bulk_enqueue_ids, concurrent_producers_are_never_refused_and_each_run_exists_once) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  ASSERT_TRUE(await_ready(port));
  auto id = create_task(port, R"({"name":"bulk","kind":"noop"})");
  ASSERT_NE(id, 0);

  constexpr size_t producers = 8, requests = 25, per_request = 3;
  struct answer {
    unsigned status = 0;
    std::string body;
    std::vector<std::string> ids;
  };
  std::vector<std::vector<answer>> answers(producers, std::vector<answer>(requests));
  std::vector<std::thread> threads;
  for (size_t p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (size_t i = 0; i < requests; ++i) {
        auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/runs",
                           payloads_body(per_request), 30s);
        auto& a = answers[p][i];
        a.status = r.status;
        a.body = r.body;
        boost::system::error_code ec;
        auto v = json::parse(r.body, ec);
        if (ec || !v.is_object() || !v.as_object().contains("instance_ids")) continue;
        for (auto& x : v.at("instance_ids").as_array()) a.ids.emplace_back(x.as_string());
      }
    });
  for (auto& t : threads) t.join();

  size_t refused = 0;
  std::set<std::string> acknowledged;
  std::set<int64_t> slots;
  for (size_t p = 0; p < producers; ++p) {
    int64_t previous = 0;
    for (auto& a : answers[p]) {
      if (a.status != 202) {
        ++refused;
        ADD_FAILURE() << "refused: " << a.status << " " << a.body;
        continue;
      }
      ASSERT_EQ(a.ids.size(), per_request) << a.body;
      auto slot = slot_of(a.ids.front());
      for (auto& x : a.ids) {
        EXPECT_TRUE(acknowledged.insert(x).second) << "run id answered twice: " << x;
        EXPECT_EQ(slot_of(x), slot) << "one batch, one slot: " << a.body;
      }
      EXPECT_TRUE(slots.insert(slot).second) << "two batches share slot " << slot;
      EXPECT_GT(slot, previous) << "a producer's later batch sorts before its earlier one";
      previous = slot;
    }
  }
  EXPECT_EQ(refused, 0u);
  EXPECT_EQ(acknowledged.size(), producers * requests * per_request);

  // Every acknowledged run exists, once, and nothing else does.
  auto stored = instance_ids(port, id);
  ASSERT_TRUE(stored);
  std::map<std::string, int> seen;
  for (auto& x : *stored) seen[x] += 1;
  for (auto& [x, n] : seen) EXPECT_EQ(n, 1) << x << " listed " << n << " times";
  EXPECT_EQ(seen.size(), acknowledged.size());
  for (auto& x : acknowledged) EXPECT_EQ(seen.count(x), 1u) << "acknowledged run missing: " << x;
}

namespace {

/// A node with --auth and two tenants: alice of acme, bob of bravo (operators).
class tenant_worker_ids : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = std::make_unique<node_process>(dir_.path() + "/data", auth::auth_args(dir_.path()));
    ASSERT_TRUE(node_->running());
    port_ = node_->http_port();
    auto admin = auth::admin_login(port_);
    auth::create_user(port_, admin, "alice", "operator", "acme");
    auth::create_user(port_, admin, "bob", "operator", "bravo");
    alice_ = auth::login(port_, "alice", "alice-password");
    bob_ = auth::login(port_, "bob", "bob-password");
  }

  /// Registers external worker `id` calling back to `rx`; the answer.
  http_result register_worker(const std::string& token, const std::string& id,
                              const http_receiver& rx) {
    return auth::call(port_, "POST", "/api/v1/workers", token,
                      json::serialize(json::object{
                          {"id", id}, {"callback_url", rx.url("")}, {"max_load", 4}}));
  }

  /// Triggers a run of a new noop task of the caller; returns the run's id.
  std::string run_of(const std::string& token, const std::string& name) {
    auto r = auth::call(port_, "POST", "/api/v1/tasks", token,
                        json::serialize(json::object{{"name", name}, {"kind", "noop"}}));
    EXPECT_EQ(r.status, 201u) << r.body;
    auto id = num(parse(r).as_object(), "id");
    r = auth::call(port_, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger", token);
    EXPECT_EQ(r.status, 201u) << r.body;
    if (r.status != 201) return "";
    return str(parse(r).at("instances").as_array().at(0).as_object(), "id");
  }

  json::object run(const std::string& token, const std::string& id) {
    auto r = auth::call(port_, "GET", "/api/v1/instances/" + id, token);
    return r.status == 200 ? parse(r).as_object() : json::object{};
  }

  json::array workers_of(const std::string& token) {
    auto r = auth::call(port_, "GET", "/api/v1/workers", token);
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.status == 200 ? parse(r).at("items").as_array() : json::array{};
  }

  static bool delivered(const http_receiver& rx, const std::string& run_id) {
    for (auto& q : rx.requests())
      if (q.body.find(run_id) != std::string::npos) return true;
    return false;
  }

  temp_dir dir_;
  std::unique_ptr<node_process> node_;
  uint16_t port_ = 0;
  std::string alice_, bob_;
};

}  // namespace

TEST_F(tenant_worker_ids, another_tenant_registering_the_id_first_neither_blocks_nor_sees_it) {
  http_receiver bobs(std::vector<int>{202}), alices(std::vector<int>{202});
  auto squat = register_worker(bob_, "wA", bobs);
  ASSERT_EQ(squat.status, 201u) << squat.body;
  auto bob_credential = str(parse(squat).as_object(), "credential");

  // Acme's own registration of its id succeeds, as if bravo's did not exist.
  auto own = register_worker(alice_, "wA", alices);
  ASSERT_EQ(own.status, 201u) << "bravo's worker blocks acme's id: " << own.body;
  auto registered = parse(own).as_object();
  EXPECT_EQ(str(registered, "id"), "wA") << json::serialize(registered);
  EXPECT_EQ(str(registered, "tenant"), "acme") << json::serialize(registered);
  auto alice_credential = str(registered, "credential");

  // Acme's run reaches acme's worker, never bravo's, and names it as acme does.
  auto run_id = run_of(alice_, "acme-job");
  ASSERT_FALSE(run_id.empty());
  EXPECT_TRUE(eventually([&] { return delivered(alices, run_id); }, 15s))
      << json::serialize(run(alice_, run_id));
  EXPECT_FALSE(delivered(bobs, run_id)) << "bravo's worker received acme's run";
  EXPECT_EQ(str(run(alice_, run_id), "worker_id"), "wA");
  // Acme's worker reports as itself; bravo's credential is not acme's worker's.
  auto report = [&](const std::string& credential) {
    return auth::call(port_, "POST", "/api/v1/instances/" + run_id + "/report", alice_,
                      R"({"worker_id":"wA","attempt":1,"state":"success","output":"ok"})",
                      {{"X-Worker-Credential", credential}});
  };
  EXPECT_EQ(report(bob_credential).status, 403u);
  auto accepted = report(alice_credential);
  EXPECT_EQ(accepted.status, 200u) << accepted.body;
  EXPECT_EQ(str(run(alice_, run_id), "state"), "success");

  // Bravo's run reaches bravo's worker only.
  auto bobs_run = run_of(bob_, "bravo-job");
  EXPECT_TRUE(eventually([&] { return delivered(bobs, bobs_run); }, 15s));
  EXPECT_FALSE(delivered(alices, bobs_run)) << "acme's worker received bravo's run";

  // Each tenant sees one worker wA, its own, and acts on its own only.
  for (auto [token, tenant, rx] :
       {std::tuple{alice_, "acme", &alices}, std::tuple{bob_, "bravo", &bobs}}) {
    auto items = workers_of(token);
    ASSERT_EQ(items.size(), 1u) << tenant << ": " << json::serialize(items);
    auto& w = items[0].as_object();
    EXPECT_EQ(str(w, "id"), "wA") << json::serialize(w);
    EXPECT_EQ(str(w, "tenant"), tenant) << json::serialize(w);
    EXPECT_EQ(str(w, "callback_url"), rx->url("")) << json::serialize(w);
  }
  auto beat = auth::call(port_, "POST", "/api/v1/workers/wA/heartbeat", bob_, "{}",
                         {{"X-Worker-Credential", alice_credential}});
  EXPECT_EQ(beat.status, 403u) << "bravo's heartbeat reached acme's worker: " << beat.body;
  // Bravo draining its wA (removal is an admin's) leaves acme's wA taking runs.
  ASSERT_EQ(auth::call(port_, "POST", "/api/v1/workers/wA/drain", bob_).status, 200u);
  auto acmes = workers_of(alice_);
  ASSERT_EQ(acmes.size(), 1u);
  EXPECT_NE(str(acmes[0].as_object(), "status"), "draining")
      << "bravo's drain reached acme's worker: " << json::serialize(acmes);
  // An id only another tenant holds is not found, not "taken".
  ASSERT_EQ(register_worker(bob_, "wB", bobs).status, 201u);
  auto other = auth::call(port_, "POST", "/api/v1/workers/wB/drain", alice_);
  EXPECT_EQ(other.status, 404u) << other.body;
}
