// The worker protocol's, the alerts' and the AI agent's JSON; see json_wire.hpp.
#include "proto/json_wire.hpp"

#include <cstdint>

#include <boost/json.hpp>

#include "proto/errors.hpp"
#include "proto/json.hpp"

namespace json = boost::json;

namespace aisched::proto {

namespace {

// -- lenient readers of the agent's own records -------------------------------

std::string str(const json::object& o, const char* k) {
  auto* v = o.if_contains(k);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

int64_t num(const json::object& o, const char* k) {
  auto* v = o.if_contains(k);
  // Never to_number<int64_t>(): it throws on 0.5 or 1e300.
  if (v && v->is_int64()) return v->get_int64();
  if (v && v->is_uint64() && v->get_uint64() <= uint64_t(INT64_MAX))
    return int64_t(v->get_uint64());
  return 0;
}

caf::error unreadable() { return make_error(errc::corrupted, "unreadable conversation record"); }

json::object message_json(const chat_message& m) {
  json::object o{{"role", m.role}, {"content", m.content}};
  if (!m.tool_calls.empty()) {
    json::array calls;
    for (auto& c : m.tool_calls)
      calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    o["tool_calls"] = std::move(calls);
  }
  if (!m.tool_call_id.empty()) o["tool_call_id"] = m.tool_call_id;
  if (!m.name.empty()) o["name"] = m.name;
  return o;
}

chat_message message_from(const json::object& o) {
  chat_message m;
  m.role = str(o, "role");
  m.content = str(o, "content");
  m.tool_call_id = str(o, "tool_call_id");
  m.name = str(o, "name");
  if (auto* calls = o.if_contains("tool_calls"); calls && calls->is_array())
    for (auto& c : calls->get_array())
      if (c.is_object())
        m.tool_calls.push_back({str(c.get_object(), "id"), str(c.get_object(), "name"),
                                str(c.get_object(), "arguments")});
  return m;
}

}  // namespace

// -- error bodies -------------------------------------------------------------

json::value error_to_json(const std::string& code, const std::string& message,
                          const std::string& field) {
  json::object inner;
  inner["code"] = code;
  // Messages quote what the client sent (paths, ids, header values): raw bytes
  // that may not be UTF-8, which JSON requires.
  inner["message"] = valid_utf8(message);
  inner["field"] = valid_utf8(field);
  json::object o;
  o["error"] = std::move(inner);
  return o;
}

// -- the external-worker protocol ---------------------------------------------

json::value execute_to_json(const execute_request& req, const std::string& report_url) {
  json::object o;
  o["instance_id"] = req.instance_id;
  o["task_id"] = req.task_id;
  o["kind"] = std::string(name_of(req.kind));
  o["command"] = req.command;
  json::object h;
  h["method"] = req.http.method;
  h["url"] = req.http.url;
  h["headers"] = json::value_from(req.http.headers);
  h["body"] = req.http.body;
  o["http"] = std::move(h);
  o["image"] = req.image;
  o["attempt"] = req.attempt;
  o["shard"] = req.shard;
  o["shards"] = req.shards;
  o["idempotency_key"] = req.idempotency_key;
  o["trace_id"] = req.trace_id;
  o["timeout"] = format_duration(req.timeout);
  o["env"] = json::value_from(req.env);  // event values the command refers to as variables
  // The run's secrets, for this attempt only; the worker must mask `redact` in
  // what it reports (the credentialed channel of its registration carries them).
  o["secrets"] = json::value_from(req.secret_env);
  json::array redact;
  for (auto& v : req.redact) redact.push_back(json::string(v));
  o["redact"] = std::move(redact);
  o["report_url"] = report_url;
  return o;
}

json::value cancel_to_json(const std::string& instance_id) {
  return json::object{{"instance_id", instance_id}};
}

caf::expected<run_result> run_result_from_json(const json::value& v, run_result r) {
  if (!v.is_object()) return make_error(errc::invalid_argument, "body", "expected an object");
  auto& body = v.get_object();
  for (auto& kv : body) {
    std::string k(kv.key());
    auto& x = kv.value();
    auto bad = [&](const char* what) {
      return make_error(errc::invalid_argument, k, k + ": " + what);
    };
    if (k == "worker_id" && x.is_string()) {
      r.worker_id = std::string(x.get_string());
    } else if (k == "state" && x.is_string()) {
      auto st = parse_enum<instance_state>(x.get_string());
      if (!st || (*st != instance_state::running && *st != instance_state::success &&
                  *st != instance_state::failed && *st != instance_state::timed_out))
        return bad("one of running, success, failed, timed_out");
      r.state = *st;
    } else if (k == "exit_code" && x.is_int64()) {
      r.exit_code = static_cast<int32_t>(x.get_int64());
    } else if (k == "attempt" && x.is_int64() && x.get_int64() >= 0 && x.get_int64() < 1'000'000) {
      r.attempt = static_cast<uint32_t>(x.get_int64());
    } else if (k == "output" && x.is_string()) {
      r.output = std::string(x.get_string()).substr(0, 64 * 1024);
    } else if (k == "error" && x.is_string()) {
      r.error = std::string(x.get_string());
    } else if ((k == "started_at" || k == "finished_at") && (x.is_string() || x.is_null())) {
      unix_ms t = 0;
      if (x.is_string()) {
        auto p = parse_rfc3339(x.get_string());
        if (!p) return bad("an RFC 3339 time");
        t = *p;
      }
      (k == "started_at" ? r.started_at : r.finished_at) = t;
    } else if (k == "worker_id" || k == "state" || k == "exit_code" || k == "output" ||
               k == "error" || k == "attempt") {
      return bad("wrong type");
    } else {
      return bad("unknown field");
    }
  }
  for (auto field : {"state", "worker_id", "attempt"})
    if (!body.contains(field))
      return make_error(errc::invalid_argument, field, std::string(field) + ": required");
  return r;
}

// -- alerts -------------------------------------------------------------------

json::value alert_to_json(const instance& x, const std::string& task_name,
                          const std::string& node_id) {
  json::object o;
  o["type"] = "run_failed";
  o["task_id"] = x.task_id;
  o["task_name"] = task_name;
  o["instance_id"] = x.id;
  o["state"] = std::string(name_of(x.state));
  o["attempt"] = x.attempt;
  o["exit_code"] = x.exit_code;
  o["error"] = x.error;
  o["trace_id"] = x.trace_id;
  o["finished_at"] = format_rfc3339(x.finished_at);
  o["node"] = node_id;
  return o;
}

json::value backup_alert_to_json(const std::string& node_id, const std::string& dir,
                                 const std::string& error, uint64_t misses, unix_ms failed_at,
                                 unix_ms last_success) {
  json::object o;
  o["type"] = "backup_failed";
  o["node"] = node_id;
  o["dir"] = dir;
  o["error"] = error;
  o["consecutive_failures"] = misses;
  o["failed_at"] = format_rfc3339(failed_at);
  if (last_success > 0)
    o["last_success_at"] = format_rfc3339(last_success);
  else
    o["last_success_at"] = nullptr;
  return o;
}

// -- the AI agent's conversations ---------------------------------------------

json::value conversation_record(const conversation& c) {
  return json::object{{"id", c.id},
                      {"tenant", c.tenant},
                      {"subject", c.subject},
                      {"title", c.title},
                      {"created_at", c.created_at},
                      {"updated_at", c.updated_at},
                      {"messages", c.messages}};
}

caf::expected<conversation> conversation_from_record(const json::value& v) {
  if (!v.is_object()) return unreadable();
  auto& o = v.get_object();
  conversation c;
  c.id = str(o, "id");
  c.tenant = str(o, "tenant");
  c.subject = str(o, "subject");
  c.title = str(o, "title");
  c.created_at = num(o, "created_at");
  c.updated_at = num(o, "updated_at");
  c.messages = static_cast<uint64_t>(num(o, "messages"));
  return c;
}

json::value message_record(const chat_message& m, unix_ms at) {
  auto o = message_json(m);
  o["at"] = at;
  return o;
}

caf::expected<stored_message> message_from_record(const json::value& v) {
  if (!v.is_object()) return unreadable();
  stored_message m;
  m.at = num(v.get_object(), "at");
  m.msg = message_from(v.get_object());
  return m;
}

json::value pending_action_record(const pending_action& a) {
  return json::object{{"action_id", a.action_id},
                      {"name", a.name},
                      {"arguments", a.arguments},
                      {"summary", a.summary}};
}

caf::expected<pending_action> pending_action_from_record(const json::value& v) {
  if (!v.is_object()) return unreadable();
  auto& o = v.get_object();
  return pending_action{str(o, "action_id"), str(o, "name"), str(o, "arguments"),
                        str(o, "summary")};
}

json::value to_json(const conversation& c) {
  auto v = conversation_record(c);
  auto& o = v.as_object();
  o["created_at"] = format_rfc3339(c.created_at);
  o["updated_at"] = format_rfc3339(c.updated_at);
  return v;
}

json::value to_json(const stored_message& m) {
  auto o = message_json(m.msg);
  o["seq"] = m.seq;
  o["at"] = format_rfc3339(m.at);
  return o;
}

}  // namespace aisched::proto
