// The challenge-response of cluster admission (proto/cluster_link_auth.hpp),
// without sockets: proofs bind the secret, both nonces, both node ids, the role
// and the side; the gate accepts each challenge's proof once, refuses a
// reflected server proof, a replay, an expired or unknown challenge; the
// secret file must exist, hold at least 32 bytes and be private to its owner.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "proto/cluster_link_auth.hpp"
#include "proto/errors.hpp"
#include "proto/private_file.hpp"
#include "support/test_dir.hpp"

using namespace aisched;
using namespace aisched::proto::cluster_auth;
using namespace std::chrono_literals;

namespace {

const std::string secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

transcript sample() {
  return {"worker:w1", fresh_nonce(), fresh_nonce(), "AAAA#1", "BBBB#2"};
}

/// What an honest client computes from the gate's challenge.
std::string client_proof(const std::string& key, const transcript& base,
                         const gate::challenge& c) {
  auto t = base;
  t.server_nonce = c.server_nonce;
  return proof(key, side::client, t);
}

}  // namespace

TEST(cluster_auth, proof_is_a_hex_hmac_that_verifies_only_with_the_same_inputs) {
  auto t = sample();
  auto p = proof(secret, side::client, t);
  EXPECT_EQ(p.size(), 64u);
  EXPECT_EQ(p, proof(secret, side::client, t));
  EXPECT_TRUE(verify(secret, side::client, t, p));
  EXPECT_FALSE(verify(secret + "x", side::client, t, p)) << "another secret";
  // Every field is bound: change any one and the proof no longer verifies.
  for (auto field : {&transcript::role, &transcript::client_nonce, &transcript::server_nonce,
                     &transcript::client_node, &transcript::server_node}) {
    auto changed = t;
    changed.*field += "0";
    EXPECT_FALSE(verify(secret, side::client, changed, p));
  }
  // Moving bytes between adjacent fields is not the same transcript.
  auto shifted = t;
  shifted.client_node = "AAAA#1B";
  shifted.server_node = "BBB#2";
  EXPECT_FALSE(verify(secret, side::client, shifted, p));
  EXPECT_FALSE(verify(secret, side::client, t, p.substr(0, 63)));
  EXPECT_FALSE(verify(secret, side::client, t, ""));
}

TEST(cluster_auth, a_server_proof_is_never_a_client_proof) {
  auto t = sample();
  auto server = proof(secret, side::server, t);
  EXPECT_NE(server, proof(secret, side::client, t));
  EXPECT_FALSE(verify(secret, side::client, t, server));
  EXPECT_TRUE(verify(secret, side::server, t, server));
}

TEST(cluster_auth, gate_admits_a_client_that_knows_the_secret_once) {
  gate g(secret);
  auto t = sample();
  auto now = gate::clock::now();
  auto c = g.issue("AAAA#1/7", t.role, t.client_nonce, t.client_node, t.server_node, now);
  ASSERT_TRUE(c) << view(c.error()).message;
  EXPECT_TRUE(is_nonce(c->server_nonce));
  // The client checks the server first: the server's proof is over our nonce.
  auto seen = t;
  seen.server_nonce = c->server_nonce;
  EXPECT_TRUE(verify(secret, side::server, seen, c->server_proof));

  auto p = client_proof(secret, t, *c);
  auto role = g.accept("AAAA#1/7", p, now);
  ASSERT_TRUE(role) << view(role.error()).message;
  EXPECT_EQ(*role, "worker:w1");
  // A replay of the same proof finds no challenge.
  auto again = g.accept("AAAA#1/7", p, now);
  ASSERT_FALSE(again);
  EXPECT_EQ(view(again.error()).code, errc::unauthenticated);
  EXPECT_EQ(g.pending(), 0u);
}

TEST(cluster_auth, gate_refuses_a_reflected_server_proof_and_a_wrong_secret) {
  gate g(secret);
  auto t = sample();
  auto now = gate::clock::now();
  auto c = g.issue("k", t.role, t.client_nonce, t.client_node, t.server_node, now);
  ASSERT_TRUE(c);
  // Reflection: hand the gate its own proof back.
  auto r = g.accept("k", c->server_proof, now);
  ASSERT_FALSE(r);
  EXPECT_EQ(view(r.error()).code, errc::unauthenticated);
  // The challenge is used up by the failed attempt: no second guess on it.
  EXPECT_FALSE(g.accept("k", client_proof(secret, t, *c), now));

  c = g.issue("k", t.role, t.client_nonce, t.client_node, t.server_node, now);
  ASSERT_TRUE(c);
  r = g.accept("k", client_proof("another secret of at least thirty-two bytes", t, *c), now);
  ASSERT_FALSE(r);
  EXPECT_NE(view(r.error()).message.find("wrong cluster secret"), std::string::npos);
}

TEST(cluster_auth, an_old_proof_does_not_answer_a_new_challenge) {
  gate g(secret);
  auto t = sample();
  auto now = gate::clock::now();
  auto first = g.issue("k", t.role, t.client_nonce, t.client_node, t.server_node, now);
  ASSERT_TRUE(first);
  auto old_proof = client_proof(secret, t, *first);
  ASSERT_TRUE(g.accept("k", old_proof, now));
  // Same client nonce again (a replaying client cannot pick ours): our nonce is fresh.
  auto second = g.issue("k", t.role, t.client_nonce, t.client_node, t.server_node, now);
  ASSERT_TRUE(second);
  EXPECT_NE(second->server_nonce, first->server_nonce);
  EXPECT_FALSE(g.accept("k", old_proof, now));
}

TEST(cluster_auth, a_proof_is_accepted_only_from_the_challenged_connection_and_in_time) {
  gate g(secret, 1024, 10s);
  auto t = sample();
  auto now = gate::clock::now();
  auto c = g.issue("k", t.role, t.client_nonce, t.client_node, t.server_node, now);
  ASSERT_TRUE(c);
  auto p = client_proof(secret, t, *c);
  EXPECT_FALSE(g.accept("other", p, now)) << "another connection never got this challenge";
  EXPECT_FALSE(g.accept("k", p, now + 11s)) << "expired";

  // Bounded: the oldest waiting challenge goes first.
  gate small(secret, 2, 10s);
  for (auto key : {"a", "b", "c"})
    ASSERT_TRUE(small.issue(key, t.role, t.client_nonce, t.client_node, t.server_node, now));
  EXPECT_EQ(small.pending(), 2u);
  EXPECT_FALSE(small.accept("a", "00", now));
}

TEST(cluster_auth, gate_rejects_malformed_challenges) {
  gate g(secret);
  auto now = gate::clock::now();
  auto bad = g.issue("k", "worker:w1", "short", "A", "B", now);
  ASSERT_FALSE(bad);
  EXPECT_EQ(view(bad.error()).field, "nonce");
  EXPECT_FALSE(g.issue("k", "worker:w1", std::string(64, 'G'), "A", "B", now));
  EXPECT_FALSE(g.issue("k", "", fresh_nonce(), "A", "B", now));
  EXPECT_FALSE(g.issue("k", std::string(129, 'r'), fresh_nonce(), "A", "B", now));
  EXPECT_EQ(g.pending(), 0u);
}

TEST(cluster_auth, nonces_are_fresh) {
  auto a = fresh_nonce(), b = fresh_nonce();
  EXPECT_TRUE(is_nonce(a));
  EXPECT_NE(a, b);
}

TEST(cluster_auth, secret_file_must_exist_be_long_enough_and_private) {
  auto dir = aisched::test::make_test_dir("cluster_auth");
  ASSERT_FALSE(dir.empty());
  auto write = [&](const std::string& name, const std::string& content, mode_t mode) {
    auto path = (dir / name).string();
    std::ofstream(path) << content;
    ::chmod(path.c_str(), mode);
    return path;
  };
  auto message = [](const caf::expected<std::string>& r) {
    return r ? std::string("(accepted)") : view(r.error()).message;
  };
  auto missing = (dir / "missing").string();
  auto r = read_secret_file(missing);
  ASSERT_FALSE(r);
  EXPECT_NE(message(r).find(missing), std::string::npos) << message(r);

  r = read_secret_file(write("empty", "\n", 0600));
  ASSERT_FALSE(r);
  EXPECT_NE(message(r).find("empty"), std::string::npos) << message(r);

  r = read_secret_file(write("short", "0123456789abcdef0123456789abcde\n", 0600));  // 31 bytes
  ASSERT_FALSE(r);
  EXPECT_NE(message(r).find("at least 32"), std::string::npos) << message(r);

  for (mode_t mode : {0640, 0604, 0660}) {
    r = read_secret_file(write("shared", secret + "\n", mode));
    ASSERT_FALSE(r) << std::oct << mode;
    EXPECT_NE(message(r).find("chmod 600"), std::string::npos) << message(r);
  }

  r = read_secret_file(write("good", secret + "\n", 0600));
  ASSERT_TRUE(r) << message(r);
  EXPECT_EQ(*r, secret) << "the trailing newline of `openssl rand -hex 32` is not part of it";
  std::filesystem::remove_all(dir);
}

TEST(private_file, is_read_whole_only_when_its_owner_alone_may_access_it) {
  auto dir = aisched::test::make_test_dir("private_file");
  ASSERT_FALSE(dir.empty());
  auto path = (dir / "key").string();
  std::ofstream(path, std::ios::binary) << "raw\nbytes\n";
  ::chmod(path.c_str(), 0600);
  auto r = proto::read_private_file(path, "--secrets-key-file");
  ASSERT_TRUE(r) << view(r.error()).message;
  EXPECT_EQ(*r, "raw\nbytes\n");  // what it holds is the caller's to judge
  ::chmod(path.c_str(), 0644);
  r = proto::read_private_file(path, "--secrets-key-file");
  ASSERT_FALSE(r);
  EXPECT_EQ(view(r.error()).field, "secrets-key-file");
  EXPECT_NE(view(r.error()).message.find("chmod 600 '" + path + "'"), std::string::npos)
      << view(r.error()).message;
  r = proto::read_private_file(dir.string(), "--secrets-key-file");
  ASSERT_FALSE(r);
  EXPECT_NE(view(r.error()).message.find("not a regular file"), std::string::npos);
  std::filesystem::remove_all(dir);
}
