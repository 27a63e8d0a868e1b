// What an integration test against one `aisched` node (node_process.hpp) shares beyond
// test_helpers.hpp: waiting until the node serves its API, the field an error answer
// names, and a task's path. A test starts its node on a temp_dir, then asserts
// serving(node) before its first request.
#pragma once

#include <cstdint>
#include <string>

#include <boost/json.hpp>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

namespace aisched::test {

/// Whether `node` runs and serves its API: the node binds (and logs) its HTTP port
/// before the actors behind it are wired, and answers 503 until they are.
inline bool serving(const node_process& node) {
  return node.running() &&
         eventually([&] { return http_call(node.http_port(), "GET", "/healthz").status == 200; });
}

/// The `error.field` of an error answer ("" if it has none; a test failure if the
/// answer is not JSON).
inline std::string error_field(const http_result& r) {
  auto v = parse(r);
  auto* e = v.is_object() ? v.as_object().if_contains("error") : nullptr;
  return e && e->is_object() ? str(e->as_object(), "field") : std::string();
}

/// The API path of task `id`.
inline std::string task_path(int64_t id) { return "/api/v1/tasks/" + std::to_string(id); }

}  // namespace aisched::test
