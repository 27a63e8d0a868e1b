// The failed-login limits (gateway/auth_limiter.hpp) with time passed in: the
// 11th failure within a minute is refused with how long to wait, older ones
// age out, lockouts double up to their cap, a success forgets the user (not
// the source), attempts still in flight count, and memory stays bounded.
#include <gtest/gtest.h>

#include "gateway/auth_limiter.hpp"

using namespace aisched::gateway;
using namespace std::chrono_literals;

namespace {

using clock_type = failure_limiter::clock;
const clock_type::time_point t0 = clock_type::time_point{} + 1000h;

/// `n` failures of `key`, one a second from `from`; each must be allowed.
void fail(failure_limiter& l, const std::string& key, int n, clock_type::time_point from) {
  for (int i = 0; i < n; ++i) {
    auto at = from + std::chrono::seconds(i);
    ASSERT_TRUE(l.check(key, at).allowed) << "failure " << i + 1 << " of " << key;
    l.record(key, at);
  }
}

}  // namespace

TEST(failure_limiter, refuses_the_eleventh_failure_within_a_minute_with_retry_after) {
  failure_limiter l;
  fail(l, "alice", 10, t0);
  auto v = l.check("alice", t0 + 10s);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.retry_after, 60s) << "the first lockout lasts one window";
  EXPECT_FALSE(l.check("alice", t0 + 69s).allowed) << "still locked";
  EXPECT_EQ(l.check("alice", t0 + 69s).retry_after, 1s);
  EXPECT_TRUE(l.check("alice", t0 + 70s).allowed) << "the lockout is over";
  EXPECT_TRUE(l.check("bob", t0 + 10s).allowed) << "other keys are not affected";
}

TEST(failure_limiter, failures_older_than_the_window_do_not_count) {
  failure_limiter l;
  fail(l, "alice", 10, t0);  // at t0 .. t0+9s
  // At t0+60s the first has aged out: one more fits, then the window is full again.
  fail(l, "alice", 1, t0 + 60s);
  EXPECT_FALSE(l.check("alice", t0 + 60s + 500ms).allowed);
}

TEST(failure_limiter, each_lockout_lasts_twice_the_previous_up_to_the_cap) {
  limiter_options o;
  o.max_lockout = 5min;
  failure_limiter l(o);
  auto now = t0;
  std::vector<std::chrono::seconds> locks;
  for (int round = 0; round < 5; ++round) {
    fail(l, "alice", 10, now);
    now += 10s;
    auto v = l.check("alice", now);
    ASSERT_FALSE(v.allowed);
    locks.push_back(v.retry_after);
    now += v.retry_after;
  }
  EXPECT_EQ(locks, (std::vector<std::chrono::seconds>{60s, 120s, 240s, 300s, 300s}));
  // Quiet for max_lockout after the last lockout: forgiven, back to one window.
  now += 5min;
  fail(l, "alice", 10, now);
  EXPECT_EQ(l.check("alice", now + 10s).retry_after, 60s);
}

TEST(failure_limiter, reset_forgets_failures_and_lockouts_and_release_takes_one_back) {
  failure_limiter l;
  fail(l, "alice", 9, t0);
  l.reset("alice");
  fail(l, "alice", 10, t0 + 10s);  // ten more fit after the reset
  EXPECT_FALSE(l.check("alice", t0 + 20s).allowed);

  fail(l, "bob", 10, t0);
  l.release("bob");  // the tenth tested no password
  EXPECT_TRUE(l.check("bob", t0 + 10s).allowed);
  l.release("carol");  // unknown: nothing happens
  EXPECT_EQ(l.size(), 2u);
}

TEST(failure_limiter, keeps_at_most_max_keys_and_evicts_the_least_protected_first) {
  limiter_options o;
  o.max_keys = 100;
  failure_limiter l(o);
  fail(l, "victim", 10, t0);
  ASSERT_FALSE(l.check("victim", t0 + 10s).allowed);
  for (int i = 0; i < 5000; ++i) {
    auto key = "spray-" + std::to_string(i);
    auto at = t0 + 10s + std::chrono::milliseconds(i);
    ASSERT_TRUE(l.check(key, at).allowed);
    l.record(key, at);
    ASSERT_LE(l.size(), 100u);
  }
  EXPECT_FALSE(l.check("victim", t0 + 20s).allowed) << "a locked key outlives fresh ones";
  // Entries that no longer matter go first when room is needed.
  fail(l, "late", 1, t0 + 2h);
  EXPECT_EQ(l.size(), 1u) << "every entry that had expired was swept";
}

TEST(login_guard, limits_each_user_and_each_source_address) {
  login_guard g;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(g.begin("alice", "10.0.0.1", t0 + std::chrono::seconds(i)).allowed);
  auto v = g.begin("alice", "10.0.0.2", t0 + 10s);
  EXPECT_FALSE(v.allowed) << "the user is locked from any address";
  EXPECT_STREQ(v.by, "username");
  EXPECT_EQ(v.retry_after, 60s);
  // The first source sprays other names: its own limit stops it.
  auto s = g.begin("bob", "10.0.0.1", t0 + 11s);
  EXPECT_FALSE(s.allowed);
  EXPECT_STREQ(s.by, "source");
  EXPECT_TRUE(g.begin("bob", "10.0.0.2", t0 + 11s).allowed);
  EXPECT_TRUE(g.begin("carol", "", t0 + 11s).allowed) << "in-process calls have no source";
}

TEST(login_guard, a_success_forgets_the_users_failures_but_not_the_sources) {
  login_guard g;
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(g.begin("alice", "10.0.0.1", t0).allowed);
  ASSERT_TRUE(g.begin("alice", "10.0.0.2", t0).allowed);
  g.succeeded("alice", "10.0.0.2");
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(g.begin("alice", "10.0.0.3", t0 + 1s).allowed) << "ten more after the success";
  EXPECT_FALSE(g.begin("alice", "10.0.0.3", t0 + 2s).allowed);
  // 10.0.0.1 still has its nine failures: one more fits, then it is refused.
  EXPECT_TRUE(g.begin("dave", "10.0.0.1", t0 + 2s).allowed);
  EXPECT_FALSE(g.begin("erin", "10.0.0.1", t0 + 3s).allowed);
  EXPECT_TRUE(g.begin("frank", "10.0.0.2", t0 + 3s).allowed) << "the success did not count there";
}

TEST(login_guard, attempts_in_flight_count_until_they_succeed_or_are_released) {
  login_guard g;
  // Ten parallel attempts, none answered yet: an eleventh cannot slip past.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(g.begin("alice", "", t0).allowed);
  EXPECT_FALSE(g.begin("alice", "", t0).allowed);
  login_guard h;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(h.begin("bob", "10.0.0.1", t0).allowed);
  for (int i = 0; i < 10; ++i) h.released("bob", "10.0.0.1");  // e.g. the store did not answer
  EXPECT_TRUE(h.begin("bob", "10.0.0.1", t0).allowed);
}

TEST(login_guard, the_dummy_hash_is_an_argon2id_hash_made_once) {
  login_guard g;
  auto& h = g.dummy_hash();
  EXPECT_EQ(h.rfind("$argon2id$", 0), 0u) << h;
  EXPECT_EQ(&g.dummy_hash(), &h);
}

TEST(source_key, is_an_ipv4_address_itself_and_an_ipv6_address_its_64) {
  EXPECT_EQ(source_key("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(source_key("::ffff:10.1.2.3"), "10.1.2.3");
  EXPECT_EQ(source_key("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  EXPECT_EQ(source_key("2001:db8:1:2::1"), source_key("2001:db8:1:2:ffff::9"));
  EXPECT_NE(source_key("2001:db8:1:2::1"), source_key("2001:db8:1:3::1"));
  EXPECT_EQ(source_key(""), "");
}
