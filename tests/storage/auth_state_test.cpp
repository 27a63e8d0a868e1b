// Users, API tokens and audit entries in the replicated state machine, against
// a real RocksDB in a fresh temporary directory: the bootstrap admin is made only
// while no user exists, deletes are tenant-scoped (another tenant's name is
// not_found), a revoked token no longer resolves, audit pages newest first per
// tenant with a cursor and a `since` bound, and everything survives a reopen.
#include "storage/auth_state.hpp"

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "proto/errors.hpp"
#include "storage/rocks.hpp"
#include "storage/state_machine.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
namespace fs = std::filesystem;

class auth_state : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("aisched-auth-state-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    open();
  }
  void TearDown() override {
    sm_.reset();
    db_.reset();
    fs::remove_all(dir_);
  }
  void open() {
    sm_.reset();
    db_.reset();
    auto db = rocks::open(dir_.string());
    ASSERT_TRUE(db);
    db_ = std::move(*db);
    auto sm = state_machine::open(*db_);
    ASSERT_TRUE(sm);
    sm_ = std::move(*sm);
  }
  /// Applies `cmd` as the next log entry; returns its result.
  caf::expected<applied> apply(command cmd) {
    log_entry e{sm_->applied_index() + 1, 1, std::move(cmd)};
    auto r = sm_->apply({e});
    if (!r) return r.error();
    return std::move(r->at(0));
  }

  fs::path dir_;
  std::unique_ptr<rocks> db_;
  std::unique_ptr<state_machine> sm_;
};

user make_user(std::string name, std::string tenant, role r = role::viewer) {
  return user{std::move(name), std::move(tenant), r, "$argon2id$hash", 1};
}

audit_entry entry(unix_ms at, std::string tenant, std::string action) {
  return audit_entry{at, "alice", std::move(tenant), std::move(action), "1", "ok", "", "n1"};
}

TEST_F(auth_state, bootstrap_admin_is_created_only_while_no_user_exists) {
  ASSERT_TRUE(apply(put_user{make_user("admin", "default", role::admin), true}));
  auto admin = read_user(*db_, "admin");
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->r, role::admin);
  // A second node's bootstrap (another hash) changes nothing.
  auto again = make_user("admin", "default", role::admin);
  again.password_hash = "$argon2id$other";
  ASSERT_TRUE(apply(put_user{again, true}));
  EXPECT_EQ(read_user(*db_, "admin")->password_hash, "$argon2id$hash");
  ASSERT_TRUE(apply(delete_user{"default", "admin"}));
  ASSERT_TRUE(apply(put_user{make_user("bob", "default"), false}));
  ASSERT_TRUE(apply(put_user{make_user("admin", "default", role::admin), true}));
  EXPECT_FALSE(read_user(*db_, "admin")) << "users exist: no bootstrap";
}

TEST_F(auth_state, user_names_are_unique_and_deletes_are_tenant_scoped) {
  ASSERT_TRUE(apply(put_user{make_user("alice", "acme"), false}));
  auto dup = apply(put_user{make_user("alice", "beta"), false});
  ASSERT_FALSE(dup);
  EXPECT_EQ(view(dup.error()).code, errc::already_exists);
  auto other = apply(delete_user{"beta", "alice"});
  ASSERT_FALSE(other);
  EXPECT_EQ(view(other.error()).code, errc::not_found);
  EXPECT_EQ(read_users(*db_, "beta")->items.size(), 0u);
  EXPECT_EQ(read_users(*db_, "acme")->items.size(), 1u);
  ASSERT_TRUE(apply(delete_user{"acme", "alice"}));
  EXPECT_FALSE(read_user(*db_, "alice"));
}

TEST_F(auth_state, revoked_token_no_longer_resolves_on_any_replica) {
  api_token t{"tok_1", "ci", "acme", role::operator_, "hash-1", "alice", 5};
  ASSERT_TRUE(apply(put_token{t}));
  auto found = read_token_by_hash(*db_, "hash-1");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, "tok_1");
  EXPECT_EQ(found->tenant, "acme");
  EXPECT_FALSE(apply(delete_token{"beta", "tok_1"})) << "another tenant cannot revoke it";
  ASSERT_TRUE(apply(delete_token{"acme", "tok_1"}));
  auto gone = read_token_by_hash(*db_, "hash-1");
  ASSERT_FALSE(gone);
  EXPECT_EQ(view(gone.error()).code, errc::not_found);
  EXPECT_TRUE(read_tokens(*db_, "acme")->items.empty());
}

TEST_F(auth_state, audit_pages_newest_first_per_tenant_and_survives_a_reopen) {
  ASSERT_TRUE(apply(record_audit{{entry(100, "acme", "a1"), entry(101, "beta", "b1"),
                                  entry(102, "acme", "a2")}}));
  ASSERT_TRUE(apply(record_audit{{entry(200, "acme", "a3")}}));
  open();
  audit_query q;
  q.tenant = "acme";
  q.limit = 2;
  auto first = read_audit(*db_, q);
  ASSERT_TRUE(first);
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(first->items[0].action, "a3");
  EXPECT_EQ(first->items[1].action, "a2");
  ASSERT_FALSE(first->next_cursor.empty());
  q.cursor = first->next_cursor;
  auto second = read_audit(*db_, q);
  ASSERT_TRUE(second);
  ASSERT_EQ(second->items.size(), 1u);
  EXPECT_EQ(second->items[0].action, "a1");
  EXPECT_TRUE(second->next_cursor.empty());
  audit_query recent;
  recent.tenant = "acme";
  recent.since = 150;
  EXPECT_EQ(read_audit(*db_, recent)->items.size(), 1u);
  audit_query beta;
  beta.tenant = "beta";
  ASSERT_EQ(read_audit(*db_, beta)->items.size(), 1u);
  audit_query forged;
  forged.tenant = "beta";
  forged.cursor = first->next_cursor;  // an acme cursor does not page beta
  EXPECT_FALSE(read_audit(*db_, forged));
}

}  // namespace
}  // namespace aisched::storage
