// gateway::error_response: an error answer carries its REST code in
// http_response::error_code as well as in its body, so the audit log records
// it without parsing the body back (gateway/access.cpp).
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "gateway/api.hpp"
#include "proto/errors.hpp"

namespace aisched::gateway {
namespace {

namespace json = boost::json;

std::string body_code(const http_response& res) {
  return std::string(json::parse(res.body).at("error").at("code").as_string());
}

TEST(error_response_test, an_error_answer_carries_its_code) {
  auto res = error_response(make_error(errc::not_found, "id", "no task 'x'"));
  EXPECT_EQ(res.status, 404u);
  EXPECT_EQ(res.error_code, "not_found");
  EXPECT_EQ(body_code(res), res.error_code);
  // A reused Idempotency-Key has a REST code errc has not.
  res = error_response(make_error(errc::already_exists, "Idempotency-Key", "used before"));
  EXPECT_EQ(res.status, 422u);
  EXPECT_EQ(res.error_code, "idempotency_key_reused");
  EXPECT_EQ(body_code(res), res.error_code);
}

TEST(error_response_test, own_codes_have_the_same_shape) {
  auto res = error_response(501, "secrets_disabled", "no key", "secrets");
  EXPECT_EQ(res.status, 501u);
  EXPECT_EQ(res.error_code, "secrets_disabled");
  EXPECT_EQ(res.body,
            R"({"error":{"code":"secrets_disabled","message":"no key","field":"secrets"}})");
  res = method_not_allowed("GET, PUT");
  EXPECT_EQ(res.status, 405u);
  EXPECT_EQ(res.error_code, "method_not_allowed");
  EXPECT_EQ(res.body,
            R"({"error":{"code":"method_not_allowed","message":"method not allowed","field":""}})");
  ASSERT_EQ(res.headers.size(), 1u);
  EXPECT_EQ(res.headers[0].second, "GET, PUT");
}

TEST(error_response_test, other_answers_have_no_error_code) {
  EXPECT_EQ(json_response(200, json::object{{"status", "ok"}}).error_code, "");
  EXPECT_EQ(json_response(503, json::object{{"ready", false}}).error_code, "");
}

}  // namespace
}  // namespace aisched::gateway
