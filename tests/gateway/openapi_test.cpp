// The embedded OpenAPI document (gateway/openapi.json) against the gateway's
// route table (gateway/route_table.cpp): every route is documented with its
// role and scope (x-aisched-role, x-aisched-scope) and every documented
// operation is served; every operation is complete enough for a client
// (operationId, a 2xx and a 4xx answer, declared path parameters), and every
// `$ref` resolves. tests/integration/openapi_node_test.cpp checks the
// documented status codes against a real node.
#include <map>
#include <regex>
#include <set>
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "gateway/console.hpp"
#include "gateway/route_table.hpp"
#include "gateway/openapi.hpp"
#include "support/openapi.hpp"

namespace aisched::gateway {
namespace {

namespace json = boost::json;
namespace oa = test::openapi;

json::value document() {
  boost::system::error_code ec;
  auto v = json::parse(openapi_document(), ec);
  EXPECT_FALSE(ec) << "gateway/openapi.json is not valid JSON: " << ec.message();
  return v;
}

/// Every `$ref` anywhere in `v`, with where it was found.
void collect_refs(const json::value& v, const std::string& at,
                  std::vector<std::pair<std::string, const json::value*>>& out) {
  if (v.is_object()) {
    for (auto& [k, x] : v.as_object()) {
      if (k == "$ref") out.emplace_back(at, &v);
      std::string key;  // JSON pointer escaping, so "/api/v1/tasks" reads back as one key
      for (char c : k) key += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
      collect_refs(x, at + "/" + key, out);
    }
  } else if (v.is_array()) {
    size_t i = 0;
    for (auto& x : v.as_array()) collect_refs(x, at + "/" + std::to_string(i++), out);
  }
}

TEST(openapi_test, is_an_openapi_3_document) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.at("openapi").as_string(), "3.0.3");
  EXPECT_TRUE(doc.at("info").at("title").is_string());
  EXPECT_TRUE(doc.at("paths").is_object());
  for (auto name : {"Task", "Instance", "Worker", "Error", "TaskPage", "InstancePage"})
    EXPECT_TRUE(doc.at("components").at("schemas").as_object().contains(name)) << name;
}

/// "GET /api/v1/tasks/{}" for a route or an operation.
std::string op_key(std::string_view method, std::string_view path) {
  std::string m(method);
  for (auto& c : m) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return m + " " + oa::normalise(path);
}

TEST(openapi_test, documents_exactly_the_operations_of_the_route_table) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  std::set<std::string> served, documented;
  for (auto& r : routes())
    if (!is_console_path(r.pattern)) served.insert(op_key(r.method, r.pattern));  // not REST
  for (auto& o : oa::operations(doc)) documented.insert(op_key(o.method, o.path));
  for (auto& k : served)
    EXPECT_TRUE(documented.count(k)) << k << " is served but missing from gateway/openapi.json";
  for (auto& k : documented)
    EXPECT_TRUE(served.count(k)) << k << " is documented but not in gateway/route_table.cpp";
}

TEST(openapi_test, each_operation_states_the_role_and_scope_of_its_route) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  std::map<std::string, const route*> by_key;
  for (auto& r : routes()) by_key[op_key(r.method, r.pattern)] = &r;
  for (auto& o : oa::operations(doc)) {
    auto key = op_key(o.method, o.path);
    auto i = by_key.find(key);
    if (i == by_key.end()) continue;  // the test above reports it
    const auto& r = *i->second;
    auto want_role = r.min ? std::string(proto::name_of(*r.min)) : std::string("none");
    auto want_scope = r.scope == scope::cluster ? "cluster" : "tenant";
    auto* rv = o.op->if_contains("x-aisched-role");
    auto* sc = o.op->if_contains("x-aisched-scope");
    EXPECT_TRUE(rv && rv->is_string() && rv->as_string() == want_role)
        << key << ": x-aisched-role must be " << want_role;
    EXPECT_TRUE(sc && sc->is_string() && sc->as_string() == want_scope)
        << key << ": x-aisched-scope must be " << want_scope;
    auto& responses = o.op->at("responses").as_object();
    if (r.min) {
      EXPECT_TRUE(responses.contains("401")) << key << ": 401 without a token";
    }
    if (r.min && *r.min > role::viewer) {
      EXPECT_TRUE(responses.contains("403")) << key << ": 403 for lesser roles";
    }
  }
}

TEST(openapi_test, every_operation_has_an_id_a_success_and_a_client_error) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  auto ops = oa::operations(doc);
  EXPECT_GE(ops.size(), route_patterns().size() - 2);  // the console's two are not REST
  std::set<std::string> ids;
  for (auto& o : ops) {
    auto where = o.method + " " + o.path;
    auto* id = o.op->if_contains("operationId");
    if (id && id->is_string() && !id->as_string().empty())
      EXPECT_TRUE(ids.insert(std::string(id->as_string())).second)
          << where << ": operationId " << id->as_string() << " used twice";
    else
      ADD_FAILURE() << where << ": no operationId";
    auto* responses = o.op->if_contains("responses");
    if (!responses || !responses->is_object()) {
      ADD_FAILURE() << where << ": no responses";
      continue;
    }
    bool ok = false, client_error = false;
    for (auto& [code, r] : responses->as_object()) {
      ok |= code.size() == 3 && code[0] == '2';
      client_error |= code.size() == 3 && code[0] == '4';
      auto* resolved = oa::resolve(doc, r);
      EXPECT_TRUE(resolved && resolved->is_object() &&
                  resolved->as_object().contains("description"))
          << where << " " << code << ": a response needs a description";
    }
    EXPECT_TRUE(ok) << where << ": no 2xx response";
    EXPECT_TRUE(client_error) << where << ": no 4xx response";
  }
}

TEST(openapi_test, path_parameters_are_declared) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  static const std::regex param(R"(\{([^}]+)\})");
  for (auto& o : oa::operations(doc)) {
    std::set<std::string> in_path, declared;
    for (std::sregex_iterator i(o.path.begin(), o.path.end(), param), end; i != end; ++i)
      in_path.insert((*i)[1]);
    for (auto& p : o.params) {
      if (p.in != "path") continue;
      declared.insert(p.name);
      EXPECT_TRUE(p.required) << o.method << " " << o.path << ": path parameter " << p.name
                              << " must be required";
    }
    EXPECT_EQ(in_path, declared) << o.method << " " << o.path;
  }
}

TEST(openapi_test, every_ref_resolves) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  std::vector<std::pair<std::string, const json::value*>> refs;
  collect_refs(doc, "#", refs);
  EXPECT_GT(refs.size(), 50u);
  for (auto& [at, holder] : refs)
    EXPECT_TRUE(oa::resolve(doc, *holder))
        << at << ": $ref " << holder->at("$ref") << " does not resolve";
}

TEST(openapi_test, error_responses_use_the_error_envelope) {
  auto doc = document();
  ASSERT_TRUE(doc.is_object());
  auto& error = doc.at("components").at("schemas").at("Error");
  auto& inner = error.at("properties").at("error");
  EXPECT_EQ(error.at("required"), json::array{"error"});
  EXPECT_EQ(inner.at("required"), (json::array{"code", "message", "field"}));
  for (auto& o : oa::operations(doc)) {
    for (auto& [code, r] : o.op->at("responses").as_object()) {
      if (code.empty() || code[0] < '4') continue;
      auto* resolved = oa::resolve(doc, r);
      ASSERT_TRUE(resolved);
      auto* schema = resolved->as_object().if_contains("content");
      ASSERT_TRUE(schema) << o.method << " " << o.path << " " << code;
      auto* s = schema->at("application/json").as_object().if_contains("schema");
      ASSERT_TRUE(s);
      EXPECT_EQ(oa::resolve(doc, *s), &error) << o.method << " " << o.path << " " << code;
    }
  }
}

}  // namespace
}  // namespace aisched::gateway
