// The pure parts of authentication: roles, JWT issue, verify and expiry (clock
// injected), argon2id hashes, token hashes, headers. The route table's rules
// are tests/gateway/route_table_test.cpp's.
#include <cstdlib>

#include <gtest/gtest.h>
#include <jwt.h>

#include "gateway/auth.hpp"
#include "proto/errors.hpp"
#include "proto/random.hpp"

using namespace aisched;
using namespace aisched::gateway;

namespace {

auth_options opts() {
  auth_options o;
  o.enabled = true;
  o.secret = "0123456789abcdef-test-secret";
  o.token_ttl = std::chrono::seconds(60);
  return o;
}

proto::user alice() {
  proto::user u;
  u.name = "alice";
  u.tenant = "acme";
  u.r = role::operator_;
  return u;
}

/// A token with exactly the claims `claims_json`, signed HS256 with the
/// secret of opts(): what someone holding the secret could mint.
std::string forge(const std::string& claims_json) {
  auto o = opts();
  jwt_t* j = nullptr;
  EXPECT_EQ(jwt_new(&j), 0);
  EXPECT_EQ(jwt_add_grants_json(j, claims_json.c_str()), 0) << claims_json;
  EXPECT_EQ(jwt_set_alg(j, JWT_ALG_HS256, reinterpret_cast<const unsigned char*>(o.secret.data()),
                        static_cast<int>(o.secret.size())),
            0);
  char* s = jwt_encode_str(j);
  std::string out = s ? s : "";
  std::free(s);
  jwt_free(j);
  return out;
}

/// The claims of alice's token with `extra` appended (`extra` starts with ',').
std::string claims(const std::string& extra) {
  return R"({"sub":"alice","tenant":"acme","role":"operator","exp":2000)" + extra + "}";
}

std::string refusal(const caf::expected<principal>& who) {
  return who ? "accepted" : view(who.error()).message;
}

}  // namespace

TEST(auth_roles, are_ordered_cluster_admin_over_admin_over_operator_over_viewer) {
  EXPECT_LT(role::viewer, role::operator_);
  EXPECT_LT(role::operator_, role::admin);
  EXPECT_LT(role::admin, role::cluster_admin);
  EXPECT_EQ(proto::parse_enum<role>("cluster_admin"), role::cluster_admin);
  EXPECT_EQ(proto::name_of(role::operator_), "operator");
  EXPECT_EQ(proto::parse_enum<role>("admin"), role::admin);
  EXPECT_FALSE(proto::parse_enum<role>("root"));
}

TEST(auth_jwt, issued_token_verifies_to_the_users_principal) {
  auto token = issue_jwt(opts(), alice(), 1'000);
  ASSERT_TRUE(token) << to_string(token.error());
  auto who = verify_jwt(opts(), *token, 1'030);
  ASSERT_TRUE(who) << view(who.error()).message;
  EXPECT_EQ(who->subject, "alice");
  EXPECT_EQ(who->tenant, "acme");
  EXPECT_EQ(who->r, role::operator_);
  EXPECT_TRUE(who->authenticated);
}

TEST(auth_jwt, cluster_admin_role_survives_the_round_trip) {
  auto u = alice();
  u.r = role::cluster_admin;
  auto token = issue_jwt(opts(), u, 1'000);
  ASSERT_TRUE(token);
  auto who = verify_jwt(opts(), *token, 1'030);
  ASSERT_TRUE(who) << view(who.error()).message;
  EXPECT_EQ(who->r, role::cluster_admin);
}

TEST(auth_jwt, expired_token_is_unauthenticated) {
  auto token = issue_jwt(opts(), alice(), 1'000);
  ASSERT_TRUE(token);
  EXPECT_TRUE(verify_jwt(opts(), *token, 1'059));
  auto late = verify_jwt(opts(), *token, 1'060);
  ASSERT_FALSE(late);
  EXPECT_EQ(view(late.error()).code, errc::unauthenticated);
  EXPECT_EQ(view(late.error()).message, "token expired");
}

TEST(auth_jwt, token_signed_with_another_secret_or_tampered_is_rejected) {
  auto other = opts();
  other.secret = "a-different-secret-of-16+";
  auto token = issue_jwt(other, alice(), 1'000);
  ASSERT_TRUE(token);
  EXPECT_FALSE(verify_jwt(opts(), *token, 1'001));
  auto mine = issue_jwt(opts(), alice(), 1'000);
  ASSERT_TRUE(mine);
  auto tampered = *mine;
  tampered[tampered.find('.') + 3] ^= 1;  // flip a bit of the claims
  EXPECT_FALSE(verify_jwt(opts(), tampered, 1'001));
  EXPECT_FALSE(verify_jwt(opts(), "garbage", 1'001));
  EXPECT_FALSE(verify_jwt(opts(), "", 1'001));
}

TEST(auth_jwt, unsigned_token_is_rejected) {
  // header {"alg":"none","typ":"JWT"}, claims of an admin, no signature.
  std::string none =
      "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0."
      "eyJzdWIiOiJldmUiLCJ0ZW5hbnQiOiJkZWZhdWx0Iiwicm9sZSI6ImFkbWluIiwiZXhwIjo5OTk5OTk5OTk5fQ.";
  EXPECT_FALSE(verify_jwt(opts(), none, 1'001));
}

TEST(auth_jwt, forged_claims_of_our_issuer_verify) {
  // The forge below is faithful: with iss "aisched" and no nbf it passes.
  auto who = verify_jwt(opts(), forge(claims(R"(,"iss":"aisched")")), 1'000);
  ASSERT_TRUE(who) << view(who.error()).message;
  EXPECT_EQ(who->subject, "alice");
}

TEST(auth_jwt, token_of_another_issuer_or_of_none_is_refused) {
  EXPECT_EQ(refusal(verify_jwt(opts(), forge(claims(R"(,"iss":"other-service")")), 1'000)),
            "token of another issuer");
  EXPECT_EQ(refusal(verify_jwt(opts(), forge(claims("")), 1'000)), "token of another issuer");
  EXPECT_EQ(refusal(verify_jwt(opts(), forge(claims(R"(,"iss":1)")), 1'000)),
            "token of another issuer");
}

TEST(auth_jwt, token_before_its_nbf_is_refused_beyond_the_leeway) {
  auto leeway = jwt_leeway.count();
  auto token = forge(claims(R"(,"iss":"aisched","nbf":1500)"));
  EXPECT_EQ(refusal(verify_jwt(opts(), token, 1'000)), "token not yet valid");
  EXPECT_EQ(refusal(verify_jwt(opts(), token, 1'500 - leeway - 1)), "token not yet valid");
  EXPECT_EQ(refusal(verify_jwt(opts(), token, 1'500 - leeway)), "accepted");  // clock skew
  EXPECT_EQ(refusal(verify_jwt(opts(), token, 1'500)), "accepted");
  EXPECT_EQ(refusal(verify_jwt(opts(), token, 2'000)), "token expired");
}

TEST(auth_jwt, token_with_a_malformed_nbf_is_refused) {
  for (auto nbf : {R"("1000")", R"("soon")", "1500.5", "-1", "[]", R"({"t":1})"})
    EXPECT_EQ(refusal(verify_jwt(opts(), forge(claims(R"(,"iss":"aisched","nbf":)" +
                                                      std::string(nbf))),
                                 1'000)),
              "invalid token")
        << nbf;
}

TEST(auth_passwords, argon2id_hash_verifies_only_the_right_password) {
  auto h = hash_password("correct horse");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->rfind("$argon2id$", 0), 0u) << *h;
  EXPECT_EQ(h->find("correct horse"), std::string::npos);
  EXPECT_TRUE(verify_password(*h, "correct horse"));
  EXPECT_FALSE(verify_password(*h, "correct horsE"));
  EXPECT_FALSE(verify_password("not a hash", "correct horse"));
  auto again = hash_password("correct horse");
  ASSERT_TRUE(again);
  EXPECT_NE(*h, *again);  // salted
}

TEST(auth_tokens, sha256_and_random_secrets) {
  EXPECT_EQ(sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto a = proto::random_hex(24), b = proto::random_hex(24);
  EXPECT_EQ(a.size(), 48u);
  EXPECT_NE(a, b);
}

TEST(auth_headers, bearer_credential_is_read_from_authorization_only) {
  EXPECT_EQ(bearer_of({{"authorization", "Bearer abc.def"}}), "abc.def");
  EXPECT_EQ(bearer_of({{"authorization", "bearer  ais_x "}}), "ais_x");
  EXPECT_EQ(bearer_of({{"authorization", "Basic abc"}}), "");
  EXPECT_EQ(bearer_of({{"x-token", "Bearer abc"}}), "");
  EXPECT_EQ(bearer_of({}), "");
}

TEST(auth_names, tenant_and_user_names_are_restricted) {
  EXPECT_TRUE(valid_name("acme"));
  EXPECT_TRUE(valid_name("team-1.ops_x"));
  EXPECT_FALSE(valid_name(""));
  EXPECT_FALSE(valid_name("-x"));
  EXPECT_FALSE(valid_name("Acme"));
  EXPECT_FALSE(valid_name(std::string("a\0b", 3)));
  EXPECT_FALSE(valid_name(std::string(64, 'a')));
}
