// Talking to an `aisched --auth` node in tests: its arguments (secret and
// bootstrap admin password files), bearer calls, logging in (polling for the
// bootstrap admin), creating users. Used by tests/integration/auth_*_test.cpp.
#pragma once

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

namespace aisched::test::auth {

constexpr const char* secret = "integration-test-secret-0123456789";
constexpr const char* admin_password = "admin-password-1";

using headers = std::map<std::string, std::string>;

inline headers bearer(const std::string& token) {
  if (token.empty()) return {};
  return {{"Authorization", "Bearer " + token}};
}

inline std::string write_file(const std::string& path, const std::string& content) {
  std::ofstream(path) << content << "\n";
  return path;
}

/// `--auth` with the secret and the bootstrap admin's password, files in `dir`.
inline std::vector<std::string> auth_args(const std::string& dir) {
  return {"--auth", "--auth-secret-file", write_file(dir + "/secret", secret),
          "--admin-password-file", write_file(dir + "/admin", admin_password)};
}

/// One request with `token` as bearer ("" sends none).
inline http_result call(uint16_t port, const std::string& method, const std::string& target,
                        const std::string& token, const std::string& body = "",
                        headers extra = {}) {
  auto h = bearer(token);
  h.insert(extra.begin(), extra.end());
  return http_call(port, method, target, body, std::chrono::seconds(10), h);
}

inline std::string error_code(const http_result& r) {
  boost::system::error_code ec;
  auto v = boost::json::parse(r.body, ec);
  if (ec || !v.is_object() || !v.as_object().contains("error")) return "";
  return str(v.at("error").as_object(), "code");
}

/// Logs in; "" (and a test failure) when it does not answer 200.
inline std::string login(uint16_t port, const std::string& user, const std::string& password) {
  auto r = http_call(port, "POST", "/api/v1/auth/login",
                     boost::json::serialize(
                         boost::json::object{{"username", user}, {"password", password}}));
  if (r.status != 200) {
    ADD_FAILURE() << "login " << user << ": " << r.status << " " << r.body;
    return "";
  }
  return str(parse(r).as_object(), "token");
}

/// The bootstrap admin exists once its proposal commits: poll the login.
inline std::string admin_login(uint16_t port) {
  std::string token;
  eventually(
      [&] {
        auto r = http_call(port, "POST", "/api/v1/auth/login",
                           R"({"username":"admin","password":")" + std::string(admin_password) +
                               "\"}");
        if (r.status == 200) token = str(parse(r).as_object(), "token");
        return !token.empty();
      },
      std::chrono::seconds(20));
  EXPECT_FALSE(token.empty()) << "the bootstrap admin never could log in";
  return token;
}

/// Creates user `name` (password "<name>-password") with `role`, in `tenant`
/// ("" = the caller's).
inline void create_user(uint16_t port, const std::string& admin, const std::string& name,
                        const std::string& role, const std::string& tenant = "") {
  boost::json::object doc{{"name", name}, {"password", name + "-password"}, {"role", role}};
  if (!tenant.empty()) doc["tenant"] = tenant;
  auto r = call(port, "POST", "/api/v1/users", admin, boost::json::serialize(doc));
  ASSERT_EQ(r.status, 201u) << r.body;
}

}  // namespace aisched::test::auth
