// The agent's tools; see tools.hpp.
#include "actors/llm_agent/tools.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "proto/errors.hpp"

namespace aisched::llm {

namespace json = boost::json;

namespace {

enum class arg_type { string, integer, boolean, object, objects };  // objects: an array of objects

struct param {
  const char* name;
  arg_type type;
  bool required;
  const char* description;
};

struct tool_def {
  const char* name;
  const char* description;
  std::vector<param> params;
};

const char* type_name(arg_type t) {
  switch (t) {
    case arg_type::string: return "string";
    case arg_type::integer: return "integer";
    case arg_type::boolean: return "boolean";
    case arg_type::object: return "object";
    case arg_type::objects: return "array";
  }
  return "string";
}

const std::vector<tool_def>& defs() {
  static const std::vector<tool_def> all{
      {"query_tasks", "List scheduled tasks, optionally filtered.",
       {{"name", arg_type::string, false, "substring of the task name"},
        {"labels", arg_type::string, false, "label selector KEY=VALUE pairs separated by commas, e.g. zone=eu"},
        {"state", arg_type::string, false, "\"paused\" or \"active\""},
        {"limit", arg_type::integer, false, "at most this many (default 50)"}}},
      {"query_instances", "List runs (instances) of tasks, newest first, optionally filtered.",
       {{"task_id", arg_type::integer, false, "only runs of this task"},
        {"state", arg_type::string, false,
         "pending, dispatched, running, success, failed, timed_out, cancelled or retry_waiting"},
        {"since", arg_type::string, false, "RFC 3339 time: runs from then on"},
        {"until", arg_type::string, false, "RFC 3339 time: runs before then"},
        {"limit", arg_type::integer, false, "at most this many (default 50)"}}},
      {"query_workers", "List workers with their state, labels and load.", {}},
      {"get_task_detail", "Get one task's full definition, state and next fire times.",
       {{"task_id", arg_type::integer, true, "the task id"}}},
      {"get_system_health",
       "Get the scheduler's health: backpressure level, backlog, worker load and cluster members.", {}},
      {"analyze_failure", "Get the failure analysis (cause, severity, fix) of one run.",
       {{"instance_id", arg_type::string, true, "the instance id, e.g. 42-1764471600000-0"}}},
      {"create_task",
       "Create a task. Fields as in the REST task document: name, kind (shell|http|container), "
       "command, schedule (cron with 5 or 6 fields or @every 10s), timezone, labels, timeout "
       "(e.g. 10m), retry, http {method,url,headers,body}, image.",
       {{"name", arg_type::string, true, "unique task name"},
        {"kind", arg_type::string, false, "shell (default), http or container"},
        {"command", arg_type::string, false, "shell command (kind shell or container)"},
        {"schedule", arg_type::string, false, "cron expression or @every duration; empty: manual only"},
        {"timezone", arg_type::string, false, "IANA time zone of the schedule, default UTC"},
        {"labels", arg_type::object, false, "string labels, e.g. {\"zone\":\"eu\"}"},
        {"timeout", arg_type::string, false, "run timeout such as 30s or 10m"},
        {"jitter", arg_type::string, false,
         "spread the fire time by a deterministic offset up to this duration, e.g. 30s"},
        {"retry", arg_type::object, false, "retry policy {policy,max_attempts,initial,max}"},
        {"http", arg_type::object, false, "kind http: {method,url,headers,body}"},
        {"image", arg_type::string, false, "kind container: the image"},
        {"max_runs", arg_type::integer, false, "end the schedule after this many fires (0: never)"},
        {"max_concurrency", arg_type::integer, false,
         "at most this many runs of the task at once, across shards and attempts (0: any)"},
        {"pool", arg_type::string, false,
         "an existing pool (GET /api/v1/pools) shared with other tasks: bounds their runs at once"},
        {"exclude_calendar", arg_type::string, false,
         "an existing calendar (GET /api/v1/calendars) of dates the schedule skips"},
        {"retention", arg_type::object, false,
         "how long finished runs are kept: {keep_for (e.g. 24h), keep_runs}; 0: the cluster "
         "default (168h, 1000 runs)"}}},
      {"trigger_task", "Run a task now (a manual fire).",
       {{"task_id", arg_type::integer, true, "the task id"}}},
      {"enqueue_runs",
       "Enqueue many runs of a task at once, one per payload (at most 1000), like a bulk add to a "
       "queue; each payload is substituted as {{event.payload.key}}.",
       {{"task_id", arg_type::integer, true, "the task id"},
        {"payloads", arg_type::objects, true, "one JSON object per run"}}},
      {"pause_task", "Pause a task (no more scheduled runs) or resume it.",
       {{"task_id", arg_type::integer, true, "the task id"},
        {"resume", arg_type::boolean, false, "true resumes instead of pausing"}}},
      {"retry_failed_instance",
       "Start another attempt of a failed, timed-out or cancelled run (the same run, its attempt "
       "count goes up; the earlier attempts stay in its history).",
       {{"instance_id", arg_type::string, true, "the failed instance id"}}},
      {"delete_task",
       "Delete a task and stop its schedule. Destructive: the user is asked to confirm first.",
       {{"task_id", arg_type::integer, true, "the task id"}}},
      {"get_worker_load_history", "Get a worker's load samples over a time range.",
       {{"worker_id", arg_type::string, true, "the worker id"},
        {"since", arg_type::string, false, "RFC 3339 start, default 1 hour ago"},
        {"until", arg_type::string, false, "RFC 3339 end, default now"}}},
      {"cluster_status", "Get the scheduler group's members, leader and raft state.", {}},
      {"next_fire_times", "Compute the next fire times of a cron expression or @every schedule.",
       {{"cron", arg_type::string, true, "the schedule expression"},
        {"timezone", arg_type::string, false, "IANA time zone, default UTC"},
        {"n", arg_type::integer, false, "how many times (default 5, at most 100)"},
        {"end_at", arg_type::string, false, "RFC 3339 time: list nothing after it (a task's end_at)"},
        {"calendar", arg_type::string, false,
         "skip the dates of this exclusion calendar (a task's exclude_calendar)"}}},
  };
  return all;
}

std::string schema_of(const tool_def& d) {
  json::object props;
  json::array required;
  for (auto& p : d.params) {
    props[p.name] = {{"type", type_name(p.type)}, {"description", p.description}};
    if (p.type == arg_type::objects) props[p.name].as_object()["items"] = {{"type", "object"}};
    if (p.required) required.push_back(json::string(p.name));
  }
  json::object o{{"type", "object"}, {"properties", std::move(props)}};
  if (!required.empty()) o["required"] = std::move(required);
  return json::serialize(o);
}

bool has_type(const json::value& v, arg_type t) {
  switch (t) {
    case arg_type::string: return v.is_string();
    case arg_type::integer:
      return v.is_uint64() || (v.is_int64() && v.get_int64() >= 0) ||
             (v.is_double() && v.get_double() >= 0 && v.get_double() == static_cast<double>(static_cast<uint64_t>(v.get_double())));
    case arg_type::boolean: return v.is_bool();
    case arg_type::object: return v.is_object();
    case arg_type::objects:
      return v.is_array() && std::all_of(v.get_array().begin(), v.get_array().end(),
                                         [](const json::value& x) { return x.is_object(); });
  }
  return false;
}

caf::error bad(const std::string& field, const std::string& msg) {
  return make_error(errc::invalid_argument, field, msg);
}

std::string text(const json::object& a, const char* k) {
  auto* v = a.if_contains(k);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::string number(const json::object& a, const char* k) {
  auto* v = a.if_contains(k);
  if (!v) return {};
  if (v->is_uint64()) return std::to_string(v->get_uint64());
  if (v->is_int64()) return std::to_string(v->get_int64());
  if (v->is_double()) return std::to_string(static_cast<uint64_t>(v->get_double()));
  return {};
}

gateway::http_request get_req(std::string path, std::map<std::string, std::string> query = {}) {
  gateway::http_request r;
  r.method = "GET";
  r.path = std::move(path);
  r.query = std::move(query);
  return r;
}

gateway::http_request post_req(std::string path, std::string body = "{}") {
  gateway::http_request r;
  r.method = "POST";
  r.path = std::move(path);
  r.body = std::move(body);
  r.headers["content-type"] = "application/json";
  return r;
}

/// Copies the optional arguments in `names` that are present into a query.
std::map<std::string, std::string> query_of(const json::object& a,
                                            std::initializer_list<std::pair<const char*, const char*>> names) {
  std::map<std::string, std::string> q;
  for (auto& [arg, key] : names) {
    auto s = text(a, arg);
    if (s.empty()) s = number(a, arg);
    if (!s.empty()) q[key] = s;
  }
  return q;
}

tool_plan build(const std::string& name, const json::object& a) {
  tool_plan p;
  p.tool = name;
  auto add = [&](gateway::http_request r, std::string label = "") {
    p.steps.push_back({std::move(label), std::move(r)});
  };
  auto tasks = std::string("/api/v1/tasks/");
  if (name == "query_tasks") {
    auto q = query_of(a, {{"name", "name"}, {"labels", "labels"}, {"state", "state"}, {"limit", "limit"}});
    if (!q.count("limit")) q["limit"] = "50";
    add(get_req("/api/v1/tasks", std::move(q)));
  } else if (name == "query_instances") {
    auto q = query_of(a, {{"task_id", "task_id"}, {"state", "state"}, {"since", "since"},
                          {"until", "until"}, {"limit", "limit"}});
    if (!q.count("limit")) q["limit"] = "50";
    add(get_req("/api/v1/instances", std::move(q)));
  } else if (name == "query_workers") {
    add(get_req("/api/v1/workers"));
  } else if (name == "get_task_detail") {
    add(get_req(tasks + number(a, "task_id")));
  } else if (name == "get_system_health") {
    add(get_req("/api/v1/backpressure"), "backpressure");
    add(get_req("/api/v1/cluster"), "cluster");
    add(get_req("/api/v1/instances", {{"state", "failed"}, {"limit", "10"}}), "recent_failures");
  } else if (name == "analyze_failure") {
    add(get_req("/api/v1/instances/" + text(a, "instance_id") + "/analysis"));
  } else if (name == "create_task") {
    add(post_req("/api/v1/tasks", json::serialize(a)));
    p.summary = "create task '" + text(a, "name") + "'";
  } else if (name == "trigger_task") {
    add(post_req(tasks + number(a, "task_id") + "/trigger"));
    p.summary = "run task " + number(a, "task_id") + " now";
  } else if (name == "enqueue_runs") {
    json::object body{{"payloads", a.at("payloads")}};
    add(post_req(tasks + number(a, "task_id") + "/runs", json::serialize(body)));
    p.summary = "enqueue " + std::to_string(a.at("payloads").get_array().size()) + " runs of task " +
                number(a, "task_id");
  } else if (name == "pause_task") {
    auto* r = a.if_contains("resume");
    bool resume = r && r->is_bool() && r->get_bool();
    add(post_req(tasks + number(a, "task_id") + (resume ? "/resume" : "/pause")));
    p.summary = (resume ? "resume task " : "pause task ") + number(a, "task_id");
  } else if (name == "retry_failed_instance") {
    add(post_req("/api/v1/instances/" + text(a, "instance_id") + "/retry"));
    p.summary = "retry instance " + text(a, "instance_id") + " as its next attempt";
  } else if (name == "delete_task") {
    gateway::http_request r;
    r.method = "DELETE";
    r.path = tasks + number(a, "task_id");
    add(std::move(r));
    p.destructive = true;
    p.summary = "delete task " + number(a, "task_id");
  } else if (name == "get_worker_load_history") {
    add(get_req("/api/v1/workers/" + text(a, "worker_id") + "/load-history",
            query_of(a, {{"since", "since"}, {"until", "until"}})));
  } else if (name == "cluster_status") {
    add(get_req("/api/v1/cluster"));
  } else if (name == "next_fire_times") {
    auto q = query_of(a, {{"cron", "cron"},
                          {"timezone", "tz"},
                          {"n", "n"},
                          {"end_at", "end_at"},
                          {"calendar", "calendar"}});
    if (!q.count("n")) q["n"] = "5";
    add(get_req("/api/v1/schedules/next", std::move(q)));
  }
  return p;
}

}  // namespace

const std::vector<tool_spec>& tool_specs() {
  static const std::vector<tool_spec> specs = [] {
    std::vector<tool_spec> out;
    for (auto& d : defs()) out.push_back({d.name, d.description, schema_of(d)});
    return out;
  }();
  return specs;
}

caf::expected<tool_plan> plan_tool(const std::string& name, const std::string& arguments) {
  const tool_def* def = nullptr;
  for (auto& d : defs())
    if (name == d.name) def = &d;
  if (!def) return make_error(errc::not_found, "name", "unknown tool '" + name + "'");
  std::string args_text = arguments;
  if (args_text.find_first_not_of(" \t\r\n") == std::string::npos) args_text = "{}";
  json::error_code ec;
  auto v = json::parse(args_text, ec);
  if (ec) return bad("arguments", "the arguments of " + name + " are not valid JSON (" + ec.message() + ")");
  if (!v.is_object()) return bad("arguments", "the arguments of " + name + " must be a JSON object");
  auto& a = v.get_object();
  for (auto& p : def->params) {
    auto* x = a.if_contains(p.name);
    if (!x || x->is_null()) {
      if (p.required) return bad(p.name, "missing required argument '" + std::string(p.name) + "'");
      continue;
    }
    if (!has_type(*x, p.type))
      return bad(p.name, "argument '" + std::string(p.name) + "' must be of type " + type_name(p.type));
    if (p.type == arg_type::string && p.required && x->get_string().empty())
      return bad(p.name, "argument '" + std::string(p.name) + "' must not be empty");
    // Ids become path segments of the REST request: keep them to one segment.
    bool is_id = std::string(p.name) == "instance_id" || std::string(p.name) == "worker_id";
    if (is_id && x->get_string().find_first_of("/?# \t") != json::string::npos)
      return bad(p.name, "argument '" + std::string(p.name) + "' is not a valid id");
  }
  for (auto& [k, _] : a) {
    bool known = false;
    for (auto& p : def->params) known = known || k == p.name;
    if (!known && name != "create_task")
      return bad(std::string(k), "unknown argument '" + std::string(k) + "' for " + name);
  }
  return build(name, a);
}

}  // namespace aisched::llm
