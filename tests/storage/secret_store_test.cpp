// The secret store in the replicated state machine, on a real RocksDB: values
// are sealed before they are applied and open again only through the keeper
// holding the cluster key; neither the database files nor a snapshot hold a
// value in clear; versions count sets on every batching; a rotation re-wraps
// data keys so only the new cluster key is needed; a wrong key is detected.
#include "storage/secret_keeper.hpp"

#include <fstream>
#include <iterator>

#include "storage/secret_store.hpp"
#include "storage/snapshot.hpp"
#include "storage/state_machine_fixture.hpp"

namespace aisched::storage::testing_support {
namespace {

constexpr const char* value = "pa55-w0rd-only-runs-see";

class secret_store : public state_machine_test {
 protected:
  /// Sets `name` of `tenant` through `k` the way the gateway does.
  void set(secret_keeper& k, const std::string& tenant, const std::string& name,
           const std::string& v) {
    auto s = k.seal(tenant, name, v, 1'000);
    ASSERT_TRUE(s) << view(s.error()).message;
    if (s->first_key) must_apply(*s->first_key);
    must_apply(put_secret{s->record});
  }

  /// Every byte of every file under the data directory.
  std::string all_bytes() {
    EXPECT_FALSE(db_->flush());
    std::string out;
    for (auto& f : fs::recursive_directory_iterator(dir_)) {
      if (!f.is_regular_file()) continue;
      std::ifstream in(f.path(), std::ios::binary);
      out.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return out;
  }

  secret_crypto::key cluster_key_ = secret_crypto::random_key();
};

TEST_F(secret_store, a_value_set_opens_for_its_tenant_and_is_listed_without_it) {
  secret_keeper k(*db_, cluster_key_, std::nullopt);
  set(k, "acme", "prod-db", value);
  auto v = k.reveal("acme", {"prod-db"});
  ASSERT_TRUE(v) << view(v.error()).message;
  EXPECT_EQ(v->at("prod-db"), value);
  auto l = k.list("acme");
  ASSERT_TRUE(l);
  ASSERT_EQ(l->size(), 1u);
  EXPECT_EQ(l->front().name, "prod-db");
  EXPECT_EQ(l->front().version, 1u);
  EXPECT_TRUE(l->front().sealed.empty());
  auto other = k.reveal("globex", {"prod-db"});
  ASSERT_FALSE(other);
  EXPECT_EQ(code_of(other.error()), errc::not_found);
  EXPECT_TRUE(*k.exists("acme", "prod-db"));
  EXPECT_FALSE(*k.exists("globex", "prod-db"));
}

TEST_F(secret_store, neither_the_database_files_nor_a_snapshot_hold_a_value) {
  secret_keeper k(*db_, cluster_key_, std::nullopt);
  set(k, "acme", "prod-db", value);
  set(k, "acme", "api", value + std::string("-2"));
  auto bytes = all_bytes();
  EXPECT_NE(bytes.find("prod-db"), std::string::npos);  // the scan does see the records
  EXPECT_EQ(bytes.find(value), std::string::npos);
  auto snap = snapshot_export::open(*db_);
  ASSERT_TRUE(snap);
  std::string chunks;
  while (!(*snap)->done()) {
    auto c = (*snap)->next_chunk(1 << 20);
    ASSERT_TRUE(c);
    chunks += *c;
  }
  EXPECT_NE(chunks.find("prod-db"), std::string::npos);
  EXPECT_EQ(chunks.find(value), std::string::npos);
}

TEST_F(secret_store, versions_count_sets_also_within_one_batch) {
  secret_keeper k(*db_, cluster_key_, std::nullopt);
  set(k, "acme", "x", "one");
  auto a = k.seal("acme", "x", "two", 1'000), b = k.seal("acme", "x", "three", 2'000);
  ASSERT_TRUE(a && b);
  auto rs = apply({put_secret{a->record}, put_secret{b->record}});
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_TRUE(rs[0] && rs[1]);
  EXPECT_EQ(k.list("acme")->front().version, 3u);
  EXPECT_EQ(k.reveal("acme", {"x"})->at("x"), "three");
}

TEST_F(secret_store, a_second_first_key_and_a_value_under_another_key_are_refused) {
  secret_keeper k(*db_, cluster_key_, std::nullopt);
  auto racing = k.seal("acme", "x", "v", 1'000);  // a gateway that saw no key yet
  set(k, "acme", "y", "w");                // another one created the key first
  ASSERT_TRUE(racing && racing->first_key);
  auto dup = apply_one(*racing->first_key);
  ASSERT_FALSE(dup);
  EXPECT_EQ(code_of(dup.error()), errc::already_exists);
  auto stale = apply_one(put_secret{racing->record});
  ASSERT_FALSE(stale);
  EXPECT_EQ(code_of(stale.error()), errc::version_conflict);
  auto again = k.seal("acme", "x", "v", 2'000);  // what the gateway does on already_exists
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->first_key);
  must_apply(put_secret{again->record});
  EXPECT_EQ(k.reveal("acme", {"x"})->at("x"), "v");
}

TEST_F(secret_store, a_deleted_secret_is_gone_and_deleting_it_again_is_not_found) {
  secret_keeper k(*db_, cluster_key_, std::nullopt);
  set(k, "acme", "x", "v");
  must_apply(delete_secret{"acme", "x"});
  EXPECT_FALSE(*k.exists("acme", "x"));
  auto again = apply_one(delete_secret{"acme", "x"});
  ASSERT_FALSE(again);
  EXPECT_EQ(code_of(again.error()), errc::not_found);
}

TEST_F(secret_store, a_wrong_cluster_key_fails_the_check_naming_the_flag) {
  {
    secret_keeper k(*db_, cluster_key_, std::nullopt);
    set(k, "acme", "x", "v");
    EXPECT_FALSE(k.check());
  }
  secret_keeper wrong(*db_, secret_crypto::random_key(), std::nullopt);
  auto err = wrong.check();
  ASSERT_TRUE(err);
  EXPECT_NE(view(err).message.find("--secrets-key-file"), std::string::npos);
  EXPECT_FALSE(wrong.reveal("acme", {"x"}));
}

TEST_F(secret_store, a_keeper_without_the_key_lists_names_and_opens_nothing) {
  {
    secret_keeper k(*db_, cluster_key_, std::nullopt);
    set(k, "acme", "x", "v");
  }
  secret_keeper none(*db_, std::nullopt, std::nullopt);
  EXPECT_FALSE(none.enabled());
  EXPECT_FALSE(none.check());  // nothing to check: the node starts, setting is refused
  EXPECT_EQ(none.list("acme")->size(), 1u);
  EXPECT_TRUE(*none.exists("acme", "x"));
  auto s = none.seal("acme", "y", "w", 1'000);
  ASSERT_FALSE(s);
  EXPECT_EQ(code_of(s.error()), errc::unavailable);
  EXPECT_FALSE(none.reveal("acme", {"x"}));
  EXPECT_FALSE(none.rewrap_all());
}

TEST_F(secret_store, rotation_rewraps_data_keys_so_the_new_key_alone_opens_every_secret) {
  {
    secret_keeper old_key(*db_, cluster_key_, std::nullopt);
    set(old_key, "acme", "x", "vx");
    set(old_key, "globex", "y", "vy");
  }
  auto fresh = secret_crypto::random_key();
  secret_keeper rotating(*db_, fresh, cluster_key_);
  EXPECT_FALSE(rotating.check());  // the previous key still opens what is not re-wrapped
  auto cmd = rotating.rewrap_all();
  ASSERT_TRUE(cmd) << view(cmd.error()).message;
  EXPECT_EQ(cmd->keys.size(), 2u);
  must_apply(*cmd);
  reopen();
  secret_keeper after(*db_, fresh, std::nullopt);
  EXPECT_FALSE(after.check());
  EXPECT_EQ(after.reveal("acme", {"x"})->at("x"), "vx");
  EXPECT_EQ(after.reveal("globex", {"y"})->at("y"), "vy");
  secret_keeper retired(*db_, cluster_key_, std::nullopt);
  EXPECT_TRUE(retired.check());
}

}  // namespace
}  // namespace aisched::storage::testing_support
