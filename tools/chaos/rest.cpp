// aisched-chaos, runs at rest; see rest.hpp.
#include "tools/chaos/rest.hpp"

#include <boost/json/string.hpp>

namespace aisched::chaos {

namespace {

/// What the router commits on a waiting run of a paused task (actors/router/waiting.cpp).
constexpr const char* paused_reason = "task paused: the run waits for its resume";

bool string_is(const boost::json::object& o, const char* key, const char* value) {
  auto* v = o.if_contains(key);
  return v && v->is_string() && v->get_string() == value;
}

}  // namespace

bool final_state(const std::string& s) {
  return s == "success" || s == "failed" || s == "timed_out" || s == "cancelled";
}

bool held_by_pause(const boost::json::object& run, const boost::json::object* task) {
  if (!task || !string_is(run, "state", "pending") || !string_is(run, "error", paused_reason))
    return false;
  auto* paused = task->if_contains("paused");
  return paused && paused->is_bool() && paused->get_bool();
}

}  // namespace aisched::chaos
