// Reading gateway/openapi.json in tests: following local `$ref`s and listing
// operations with their parameters. Header-only over Boost.JSON; not a schema
// validator (the tests check status codes and top-level required fields only).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

namespace aisched::test::openapi {

namespace json = boost::json;

/// The HTTP methods an OpenAPI path item may hold operations for.
inline const std::vector<std::string>& methods() {
  static const std::vector<std::string> m{"get", "put", "post", "delete", "options",
                                          "head", "patch", "trace"};
  return m;
}

/// `v`, or what its `$ref` ("#/components/...") points to, followed until a
/// value without `$ref`; nullptr when a reference does not resolve (or loops).
inline const json::value* resolve(const json::value& doc, const json::value& v) {
  const json::value* cur = &v;
  for (int hops = 0; hops < 16; ++hops) {
    auto* ref = cur->is_object() ? cur->as_object().if_contains("$ref") : nullptr;
    if (!ref) return cur;
    if (!ref->is_string() || ref->as_string().empty() || ref->as_string()[0] != '#')
      return nullptr;  // only local references are used
    boost::system::error_code ec;
    auto pointer = std::string_view(ref->as_string()).substr(1);
    cur = doc.find_pointer(pointer, ec);
    if (!cur || ec) return nullptr;
  }
  return nullptr;
}

/// "/api/v1/tasks/{id}" and "/api/v1/tasks/{task}" both become "/api/v1/tasks/{}".
inline std::string normalise(std::string_view path) {
  std::string out;
  bool in_param = false;
  for (char c : path) {
    if (c == '{') in_param = true;
    if (!in_param) out += c;
    if (c == '}') {
      out += "{}";
      in_param = false;
    }
  }
  return out;
}

struct parameter {
  std::string name, in;  // "path" or "query"
  bool required = false;
  const json::value* schema = nullptr;   // resolved; may be null
  const json::value* example = nullptr;  // may be null
};

struct operation {
  std::string path, method;  // "/api/v1/tasks/{id}", "get"
  const json::object* op = nullptr;
  std::vector<parameter> params;  // path-level and operation-level, resolved

  /// The resolved response object documented for `status`, or nullptr.
  const json::object* response(const json::value& doc, unsigned status) const {
    auto* responses = op->if_contains("responses");
    if (!responses || !responses->is_object()) return nullptr;
    auto* r = responses->as_object().if_contains(std::to_string(status));
    auto* resolved = r ? resolve(doc, *r) : nullptr;
    return resolved && resolved->is_object() ? &resolved->as_object() : nullptr;
  }
};

/// Every operation in the document, in document order. References that do not
/// resolve are skipped here (the unit test reports them).
inline std::vector<operation> operations(const json::value& doc) {
  std::vector<operation> out;
  auto* paths = doc.as_object().if_contains("paths");
  if (!paths || !paths->is_object()) return out;
  for (auto& [path, item_v] : paths->as_object()) {
    if (!item_v.is_object()) continue;
    auto& item = item_v.as_object();
    auto add_params = [&](const json::value* list, std::vector<parameter>& into) {
      if (!list || !list->is_array()) return;
      for (auto& p_v : list->as_array()) {
        auto* p = resolve(doc, p_v);
        if (!p || !p->is_object()) continue;
        auto& o = p->as_object();
        parameter x;
        if (auto* n = o.if_contains("name"); n && n->is_string()) x.name = n->as_string();
        if (auto* i = o.if_contains("in"); i && i->is_string()) x.in = i->as_string();
        if (auto* r = o.if_contains("required"); r && r->is_bool()) x.required = r->as_bool();
        if (auto* s = o.if_contains("schema")) x.schema = resolve(doc, *s);
        x.example = o.if_contains("example");
        // An operation-level parameter overrides a path-level one of the same name and place.
        bool replaced = false;
        for (auto& old : into)
          if (old.name == x.name && old.in == x.in) {
            old = x;
            replaced = true;
          }
        if (!replaced) into.push_back(x);
      }
    };
    std::vector<parameter> shared;
    add_params(item.if_contains("parameters"), shared);
    for (auto& m : methods()) {
      auto* op = item.if_contains(m);
      if (!op || !op->is_object()) continue;
      operation o{std::string(path), m, &op->as_object(), shared};
      add_params(op->as_object().if_contains("parameters"), o.params);
      out.push_back(std::move(o));
    }
  }
  return out;
}

}  // namespace aisched::test::openapi
