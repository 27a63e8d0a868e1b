// The secret store's crypto (common/secret_crypto): values survive a seal/open
// round trip only under the same key and aad, wrapped data keys only under
// their cluster key, key files are read strictly, key checks tell keys apart.
#include "common/secret_crypto.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <caf/to_string.hpp>

#include "proto/errors.hpp"
#include "support/test_dir.hpp"

namespace aisched::secret_crypto {
namespace {

TEST(secret_crypto, seal_then_open_returns_the_value_and_hides_it) {
  auto k = random_key();
  std::string value = "hunter2-prod-db-password";
  auto sealed = seal(k, value, "t/db");
  EXPECT_EQ(sealed.find(value), std::string::npos);
  EXPECT_EQ(sealed.size(), 1 + 12 + value.size() + 16);
  auto back = open(k, sealed, "t/db");
  ASSERT_TRUE(back) << caf::to_string(back.error());
  EXPECT_EQ(*back, value);
}

TEST(secret_crypto, the_same_value_seals_differently_each_time) {
  auto k = random_key();
  EXPECT_NE(seal(k, "v", "a"), seal(k, "v", "a"));  // fresh nonce per seal
}

TEST(secret_crypto, open_refuses_another_key_another_aad_and_altered_bytes) {
  auto k = random_key();
  auto sealed = seal(k, "value", "tenant-a/name");
  EXPECT_FALSE(open(random_key(), sealed, "tenant-a/name"));
  EXPECT_FALSE(open(k, sealed, "tenant-b/name"));
  for (size_t i = 1; i < sealed.size(); ++i) {
    auto bent = sealed;
    bent[i] ^= 1;
    EXPECT_FALSE(open(k, bent, "tenant-a/name")) << "byte " << i;
  }
  EXPECT_FALSE(open(k, sealed.substr(0, 20), "tenant-a/name"));
}

TEST(secret_crypto, an_empty_value_round_trips) {
  auto k = random_key();
  auto back = open(k, seal(k, "", "x"), "x");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, "");
}

TEST(secret_crypto, a_wrapped_key_unwraps_only_under_its_cluster_key_tenant_and_id) {
  auto kek = random_key(), dek = random_key();
  auto w = wrap(kek, dek, "acme", "k1");
  auto back = unwrap(kek, w, "acme", "k1");
  ASSERT_TRUE(back) << caf::to_string(back.error());
  EXPECT_EQ(*back, dek);
  EXPECT_FALSE(unwrap(random_key(), w, "acme", "k1"));
  EXPECT_FALSE(unwrap(kek, w, "other", "k1"));
  EXPECT_FALSE(unwrap(kek, w, "acme", "k2"));
  // Rotation: the same data key wrapped under a new cluster key.
  auto kek2 = random_key();
  auto w2 = wrap(kek2, *back, "acme", "k1");
  auto again = unwrap(kek2, w2, "acme", "k1");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, dek);
}

TEST(secret_crypto, key_checks_are_stable_and_tell_keys_apart) {
  auto a = random_key(), b = random_key();
  EXPECT_EQ(key_check(a), key_check(a));
  EXPECT_NE(key_check(a), key_check(b));
  EXPECT_EQ(key_check(a).size(), 16u);
}

class key_file : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& data, mode_t mode = 0600) {
    auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << data;
    ::chmod(path.c_str(), mode);
    return path;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_ = test::make_test_dir("key-file-");
};

TEST_F(key_file, reads_hex_with_a_newline_and_raw_bytes) {
  std::string hex(64, 'a');
  auto k = load_key_file(write("hex", hex + "\n"), "--secrets-key-file");
  ASSERT_TRUE(k) << caf::to_string(k.error());
  for (auto b : *k) EXPECT_EQ(b, 0xaa);
  auto raw = load_key_file(write("raw", std::string(32, '\x01')), "--secrets-key-file");
  ASSERT_TRUE(raw) << caf::to_string(raw.error());
  for (auto b : *raw) EXPECT_EQ(b, 0x01);
}

TEST_F(key_file, refuses_short_non_hex_missing_and_group_readable_files_naming_the_flag) {
  auto msg = [](const caf::expected<key>& k) { return view(k.error()).message; };
  auto short_key = load_key_file(write("short", "abcd"), "--secrets-key-file");
  ASSERT_FALSE(short_key);
  EXPECT_NE(msg(short_key).find("--secrets-key-file"), std::string::npos);
  EXPECT_NE(msg(short_key).find("64 hex digits"), std::string::npos);
  EXPECT_FALSE(load_key_file(write("nonhex", std::string(64, 'z')), "--secrets-key-file"));
  EXPECT_FALSE(load_key_file((dir_ / "missing").string(), "--secrets-key-file"));
  auto open_mode = load_key_file(write("wide", std::string(64, 'a'), 0644), "--secrets-key-file");
  ASSERT_FALSE(open_mode);
  EXPECT_NE(msg(open_mode).find("chmod 600"), std::string::npos);
}

}  // namespace
}  // namespace aisched::secret_crypto
