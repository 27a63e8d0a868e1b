// Tests for the alerter actor on a real actor_system (its POSTs run on real
// run_pool threads, which the test coordinator cannot schedule) against
// loopback webhook receivers: one POST per final failure and webhook with its
// Idempotency-Key, none for a failure applied again, none while not leading,
// and a refused POST retried with backoff until it is delivered or the
// attempts run out; a backup_failed from the backup actor is posted too. A
// stand-in store answers the task's name. Every wait polls the alerter's own
// counters with a deadline.
#include "actors/alerter/alerter_actor.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/send.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "proto/registry.hpp"
#include "support/http_receiver.hpp"

namespace aisched::alerter {
namespace {

using namespace std::chrono_literals;
using proto::instance;
using proto::instance_state;

struct alerter_test_config : caf::actor_system_config {
  alerter_test_config() { proto::register_types(*this); }
};

/// Stands in for the store: every task is called "nightly".
caf::behavior naming_store(caf::event_based_actor*) {
  return {[](proto::get_task_atom, const std::string&, uint64_t id) {
    proto::task t;
    t.id = id;
    t.name = "nightly";
    return t;
  }};
}

instance failure(std::string id, uint32_t attempt = 1) {
  instance x;
  x.id = std::move(id);
  x.task_id = 7;
  x.state = instance_state::failed;
  x.attempt = attempt;
  x.exit_code = 3;
  x.error = "exit status 3";
  return x;
}

class alerter_actor_test : public ::testing::Test {
 protected:
  alerter_actor_test() : sys_(cfg_), self_(sys_) {
    store_ = caf::actor_cast<proto::store_actor>(sys_.spawn(naming_store));
    pool_ = std::make_shared<worker::run_pool>(2);
  }

  ~alerter_actor_test() override {
    if (alerter_) caf::anon_send_exit(alerter_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(store_, caf::exit_reason::user_shutdown);
    pool_->stop();
  }

  void start(std::vector<std::string> webhooks, uint32_t max_attempts = 6) {
    alerter_options opts;
    opts.webhooks = std::move(webhooks);
    opts.node_id = "n1";
    opts.max_attempts = max_attempts;
    opts.initial_backoff = 20;  // the test waits for every retry
    opts.max_backoff = 40;
    alerter_ = sys_.spawn(alerter_actor_impl, store_, opts, pool_);
  }

  void lead(bool leading) {
    caf::anon_send(alerter_, proto::leader_atom::value, proto::leadership{leading, 1, "n1"});
  }

  void commit(std::vector<instance> xs) {
    proto::applied a;
    a.index = ++index_;
    a.instances = std::move(xs);
    caf::anon_send(alerter_, proto::committed_atom::value, a);
  }

  /// The alerter's counters (sent, failed, queued, ...) as aisched-inspect shows them.
  std::map<std::string, std::string> counters() {
    std::map<std::string, std::string> out;
    self_->request(alerter_, 5s, proto::inspect_atom::value)
        .receive([&](proto::actor_summary& s) { out = std::move(s.details); },
                 [&](caf::error& e) { ADD_FAILURE() << sys_.render(e); });
    return out;
  }

  /// Waits (at most 10 s) until the alerter has nothing queued and counts
  /// `sent` deliveries and `failed` ones.
  bool settled(const std::string& sent, const std::string& failed = "0") {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      auto c = counters();
      if (c["queued"] == "0" && c["sent"] == sent && c["failed"] == failed) return true;
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "alerter counters: sent " << counters()["sent"] << ", failed "
                  << counters()["failed"] << ", queued " << counters()["queued"];
    return false;
  }

  alerter_test_config cfg_;
  caf::actor_system sys_;
  caf::scoped_actor self_;
  proto::store_actor store_;
  std::shared_ptr<worker::run_pool> pool_;
  proto::alerter_actor alerter_;
  uint64_t index_ = 0;
};

TEST_F(alerter_actor_test, a_final_failure_is_posted_once_to_each_webhook) {
  test::http_receiver a, b;
  start({a.url(), b.url()});
  lead(true);
  commit({failure("7-100-0", 2)});
  commit({failure("7-100-0", 2)});  // the same failure applied again (a replayed batch)
  ASSERT_TRUE(settled("2"));

  for (auto* r : {&a, &b}) {
    auto got = r->requests();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].header("Idempotency-Key"), std::optional<std::string>("7-100-0#2"));
    auto doc = boost::json::parse(got[0].body).as_object();
    EXPECT_EQ(doc.at("type").as_string(), "run_failed");
    EXPECT_EQ(doc.at("task_name").as_string(), "nightly");
    EXPECT_EQ(doc.at("instance_id").as_string(), "7-100-0");
    EXPECT_EQ(doc.at("exit_code").as_int64(), 3);
    EXPECT_EQ(doc.at("node").as_string(), "n1");
  }
}

TEST_F(alerter_actor_test, only_the_leader_alerts_and_only_final_failures) {
  test::http_receiver hook;
  start({hook.url()});
  lead(false);
  commit({failure("7-200-0")});  // a follower applies it too: not its alert
  lead(true);
  auto ok = failure("7-201-0");
  ok.state = instance_state::success;
  auto waiting = failure("7-202-0");
  waiting.state = instance_state::retry_waiting;  // another attempt follows
  auto late = failure("7-203-0");
  late.state = instance_state::timed_out;
  commit({ok, waiting, late});
  ASSERT_TRUE(settled("1"));
  auto got = hook.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].header("Idempotency-Key"), std::optional<std::string>("7-203-0#1"));
}

TEST_F(alerter_actor_test, a_refused_post_is_retried_until_delivered) {
  test::http_receiver hook({500, 503, 200});
  start({hook.url()});
  lead(true);
  commit({failure("7-300-0")});
  ASSERT_TRUE(settled("1"));
  EXPECT_EQ(hook.requests().size(), 3u);
}

TEST_F(alerter_actor_test, a_post_refused_every_time_gives_up_after_max_attempts) {
  test::http_receiver hook({500});
  start({hook.url()}, 3);
  lead(true);
  commit({failure("7-400-0")});
  ASSERT_TRUE(settled("0", "1"));
  EXPECT_EQ(hook.requests().size(), 3u);
}

TEST_F(alerter_actor_test, failing_scheduled_backups_are_posted_as_backup_failed) {
  test::http_receiver hook;
  start({hook.url()});
  // Sent by this node's backup actor, which runs only while the node leads.
  caf::anon_send(alerter_, proto::backup_failed_atom::value,
                 std::string("scheduled backup: cannot create /b/x.tmp: Permission denied"),
                 std::string("/b"), uint64_t{3}, unix_ms{1'780'000'000'000}, unix_ms{0});
  ASSERT_TRUE(settled("1"));
  auto got = hook.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].header("Idempotency-Key"),
            std::optional<std::string>("backup_failed#n1#1780000000000"));
  auto doc = boost::json::parse(got[0].body).as_object();
  EXPECT_EQ(doc.at("type").as_string(), "backup_failed");
  EXPECT_EQ(doc.at("node").as_string(), "n1");
  EXPECT_EQ(doc.at("dir").as_string(), "/b");
  EXPECT_EQ(doc.at("consecutive_failures").to_number<uint64_t>(), 3u);
  EXPECT_TRUE(doc.at("last_success_at").is_null());
  EXPECT_NE(std::string(doc.at("error").as_string()).find("Permission denied"), std::string::npos);
}

}  // namespace
}  // namespace aisched::alerter
