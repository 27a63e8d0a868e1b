// The OpenAPI document a real node serves (GET /api/v1/openapi.json) against
// what the node answers: every documented operation is exercised where that is
// safe (reads; writes only on their error paths: a malformed or wrong-typed
// body, an unknown id, an invalid query value, a body over --max-body-bytes),
// and each answer must be a documented status with a documented content type,
// carrying the top-level required fields of the documented JSON schema; error
// answers must have the Error envelope. Not a schema validator on purpose.
#include <map>
#include <set>
#include <string>
#include <string_view>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/openapi.hpp"

using namespace aisched::test;
namespace json = boost::json;
namespace oa = aisched::test::openapi;

namespace {

constexpr size_t max_body = 4096;  // passed as --max-body-bytes, to probe 413 cheaply

/// Whether parameter `p`'s schema has `key` (type, format) equal to `value`.
bool schema_says(const oa::parameter& p, const char* key, std::string_view value) {
  auto* s = p.schema && p.schema->is_object() ? p.schema->as_object().if_contains(key) : nullptr;
  return s && s->is_string() && s->as_string() == value;
}

json::value parse_or_null(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  return ec ? json::value(nullptr) : v;
}

/// "application/json; charset=utf-8" -> "application/json".
std::string media_type(const std::string& content_type) {
  return content_type.substr(0, content_type.find(';'));
}

class openapi_node : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = std::make_unique<node_process>(dir_.path() + "/data",
                                           std::vector<std::string>{"--max-body-bytes",
                                                                    std::to_string(max_body)});
    ASSERT_TRUE(node_->running());
    auto r = http_call(node_->http_port(), "GET", "/api/v1/openapi.json");
    ASSERT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(media_type(r.content_type), "application/json");
    doc_ = parse_or_null(r.body);
    ASSERT_TRUE(doc_.is_object()) << "the served document is not a JSON object";
    ops_ = oa::operations(doc_);
    ASSERT_FALSE(ops_.empty());
  }

  const oa::operation& op(const std::string& method, const std::string& path) {
    for (auto& o : ops_)
      if (o.method == method && o.path == path) return o;
    ADD_FAILURE() << method << " " << path << " is not documented";
    return ops_.front();
  }

  /// Sends the request and checks the answer against operation `o`'s
  /// documentation; `want_class` 2 or 4 also requires a 2xx or 4xx status
  /// (0: any documented one). Returns the answer.
  http_result check(const oa::operation& o, const std::string& target, const std::string& body,
                    int want_class, const std::string& why) {
    auto method = o.method;
    for (auto& c : method) c = static_cast<char>(std::toupper(c));
    auto r = http_call(node_->http_port(), method, target, body);
    auto where = method + " " + target + " (" + why + "): answered " +
                 std::to_string(r.status) + " " + r.body.substr(0, 300);
    ++checked_;
    if (want_class) {
      EXPECT_EQ(static_cast<int>(r.status / 100), want_class) << where;
    }
    auto* documented = o.response(doc_, r.status);
    if (!documented) {
      ADD_FAILURE() << where << "; status " << r.status << " is not documented for "
                    << o.method << " " << o.path;
      return r;
    }
    auto* content = documented->if_contains("content");
    if (!content) {
      EXPECT_TRUE(r.body.empty()) << where << "; documented without a body";
      return r;
    }
    auto type = media_type(r.content_type);
    auto* media = content->as_object().if_contains(type);
    if (!media) {
      ADD_FAILURE() << where << "; content type " << r.content_type << " is not documented";
      return r;
    }
    if (type != "application/json") return r;
    auto v = parse_or_null(r.body);
    EXPECT_FALSE(v.is_null()) << where << "; not JSON";
    if (r.status >= 400) {  // the Error envelope, whatever the schema says
      auto* e = v.is_object() ? v.as_object().if_contains("error") : nullptr;
      EXPECT_TRUE(e && e->is_object()) << where << "; no error object";
      if (e && e->is_object())
        for (auto f : {"code", "message", "field"}) {
          auto* x = e->as_object().if_contains(f);
          EXPECT_TRUE(x && x->is_string()) << where << "; error." << f << " is not a string";
        }
    }
    auto* schema_ref = media->as_object().if_contains("schema");
    auto* schema = schema_ref ? oa::resolve(doc_, *schema_ref) : nullptr;
    auto* required = schema && schema->is_object() ? schema->as_object().if_contains("required")
                                                   : nullptr;
    if (required && required->is_array()) {
      EXPECT_TRUE(v.is_object()) << where << "; documented as an object";
      for (auto& f : required->as_array())
        EXPECT_TRUE(v.is_object() && v.as_object().contains(f.as_string()))
            << where << "; required field " << f.as_string() << " missing";
    }
    return r;
  }

  /// `path` with each `{param}` replaced by `value_of(param)`.
  template <class Fn>
  static std::string fill(const std::string& path, Fn value_of) {
    std::string out;
    for (size_t i = 0; i < path.size();) {
      if (path[i] != '{') {
        out += path[i++];
        continue;
      }
      auto end = path.find('}', i);
      out += value_of(path.substr(i + 1, end - i - 1));
      i = end + 1;
    }
    return out;
  }

  /// The collection a templated path is under: "/api/v1/tasks/{id}/pause" -> "tasks".
  static std::string collection(const std::string& path) {
    // AI feature paths name their collection one level down: /api/v1/ai/tasks/{id}/duration,
    // /api/v1/ai/analyze/{instance_id}.
    if (path.rfind("/api/v1/ai/tasks/", 0) == 0) return "tasks";
    if (path.rfind("/api/v1/ai/analyze/", 0) == 0) return "instances";
    auto start = std::string("/api/v1/").size();
    return path.compare(0, start, "/api/v1/") ? "" : path.substr(start, path.find('/', start) - start);
  }

  std::string real_id(const std::string& path) {
    auto c = collection(path);
    if (c == "tasks") return task_id_;
    if (c == "instances") return instance_id_;
    if (c == "workers") return worker_id_;
    if (c == "ai") return "";  // no conversation exists on a node without a model
    if (c == "pools") return "openapi-pool";
    if (c == "calendars") return "openapi-calendar";
    return "openapi-test-event";  // events: nobody subscribes, so it fires nothing
  }

  /// An id of the right form that names nothing; "" when there is none (events).
  static std::string unknown_id(const std::string& path) {
    auto c = collection(path);
    if (c == "tasks") return "999999";
    if (c == "instances") return "999999-1000-0";
    if (c == "workers") return "no-such-worker";
    if (c == "ai") return "c-0000000000000000";
    // pools, calendars: a PUT to an unknown name creates it (no 4xx to expect).
    return "";
  }

  /// The query string of the documented examples, with `override` set.
  static std::string query(const oa::operation& o,
                           const std::map<std::string, std::string>& override = {}) {
    std::map<std::string, std::string> q = override;
    for (auto& p : o.params)
      if (p.in == "query" && p.example && !q.count(p.name))
        q[p.name] = p.example->is_string() ? std::string(p.example->as_string())
                                           : json::serialize(*p.example);
    std::string out;
    for (auto& [k, v] : q) {
      out += (out.empty() ? "?" : "&") + k + "=";
      for (char c : v) {  // enough escaping for the examples used ("0 3 * * *", zones, times)
        if (c == ' ') out += "%20";
        else if (c == '+') out += "%2B";
        else out += c;
      }
    }
    return out;
  }

  static bool has_body(const oa::operation& o) { return o.op->contains("requestBody"); }

  /// The example of the operation's JSON request body schema, else "{}": with
  /// an unknown id, a valid body reaches the lookup instead of failing validation.
  std::string body_example(const oa::operation& o) {
    auto* schema = o.op->at("requestBody").as_object().at("content").at("application/json")
                       .as_object().if_contains("schema");
    auto* s = schema ? oa::resolve(doc_, *schema) : nullptr;
    auto* example = s && s->is_object() ? s->as_object().if_contains("example") : nullptr;
    return example ? json::serialize(*example) : "{}";
  }

  temp_dir dir_;
  std::unique_ptr<node_process> node_;
  json::value doc_;
  std::vector<oa::operation> ops_;
  std::string task_id_, instance_id_, worker_id_ = "openapi-worker";
  int checked_ = 0;
};

TEST_F(openapi_node, every_documented_operation_answers_as_documented) {
  // Something real for the {id} routes, made through documented operations.
  auto created = check(op("post", "/api/v1/tasks"), "/api/v1/tasks",
                       R"({"name":"openapi-sample","kind":"noop","schedule":"@every 1h"})", 2,
                       "create the sample task");
  ASSERT_EQ(created.status, 201u);
  task_id_ = std::to_string(parse_or_null(created.body).at("id").as_int64());
  auto fired = check(op("post", "/api/v1/tasks/{id}/trigger"),
                     "/api/v1/tasks/" + task_id_ + "/trigger", "", 2, "run the sample task");
  ASSERT_EQ(fired.status, 201u);
  instance_id_ = parse_or_null(fired.body).at("instances").at(0).at("id").as_string().c_str();
  // Let the run end first, so the worker registered below never gets it and the
  // followed output stream ends at once.
  ASSERT_TRUE(eventually(
      [&] {
        auto r = http_call(node_->http_port(), "GET", "/api/v1/instances/" + instance_id_);
        auto v = parse_or_null(r.body);
        auto* s = v.is_object() ? v.as_object().if_contains("state") : nullptr;
        return s && s->is_string() &&
               std::set<std::string>{"success", "failed", "timed_out", "cancelled"}.count(
                   std::string(s->as_string()));
      },
      std::chrono::seconds(20)))
      << "the sample run did not end";
  check(op("put", "/api/v1/pools/{name}"), "/api/v1/pools/openapi-pool", R"({"size":2})", 2,
        "create a pool");
  check(op("put", "/api/v1/calendars/{name}"), "/api/v1/calendars/openapi-calendar",
        R"({"dates":["2030-12-25"]})", 2, "create a calendar");
  check(op("post", "/api/v1/workers"), "/api/v1/workers",
        R"({"id":"openapi-worker","callback_url":"http://127.0.0.1:9/","labels":{"pool":"none"}})",
        2, "register a worker");

  for (auto& o : ops_) {
    auto real = fill(o.path, [&](const std::string&) { return real_id(o.path); });

    // Reads succeed on real ids with the documented examples.
    bool has_real_id = o.path.find('{') == std::string::npos || !real_id(o.path).empty();
    if (o.method == "get" && has_real_id) {
      check(o, real + query(o), "", 2, "read");
      for (auto& p : o.params)  // a boolean switches a mode (?follow=true): try it too
        if (p.in == "query" && schema_says(p, "type", "boolean")) {
          auto r = check(o, real + query(o, {{p.name, "true"}}), "", 2, p.name + "=true");
          if (media_type(r.content_type) == "text/event-stream") {
            EXPECT_NE(r.body.find("event: end"), std::string::npos) << r.body;
          }
        }
    }

    // Invalid query values: integers, enums and times that do not parse.
    for (auto& p : o.params) {
      if (p.in != "query") continue;
      bool has_enum = p.schema && p.schema->is_object() && p.schema->as_object().contains("enum");
      if (schema_says(p, "type", "integer") || schema_says(p, "format", "date-time") || has_enum) check(o, real + query(o, {{p.name, "not-valid"}}), "", 4, p.name + "=not-valid");
    }

    // Unknown ids, and non-numbers where an id is an integer.
    if (o.path.find('{') != std::string::npos) {
      auto unknown = unknown_id(o.path);
      auto body = has_body(o) ? body_example(o) : "";
      if (!unknown.empty())
        check(o, fill(o.path, [&](const std::string&) { return unknown; }) + query(o), body, 4,
              "unknown id");
      for (auto& p : o.params)
        if (p.in == "path" && schema_says(p, "type", "integer"))
          check(o, fill(o.path, [&](const std::string&) { return "not-a-number"; }) + query(o),
                body, 4, "non-integer id");
    }

    // Bodies that must be refused before anything changes.
    if (has_body(o)) {
      check(o, real + query(o), "{", 4, "malformed JSON");
      check(o, real + query(o), "[]", 4, "an array, not an object");
    }

    // Every route refuses a body over --max-body-bytes, before routing.
    check(o, real + query(o), std::string(max_body + 1, 'x'), 4, "body too large");
  }
  EXPECT_GT(checked_, 2 * static_cast<int>(ops_.size()));
}

}  // namespace
