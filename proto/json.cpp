// JSON encoding and strict decoding of the proto types; see json.hpp.
#include "proto/json.hpp"

#include <cmath>
#include <limits>

#include <boost/json.hpp>

#include "proto/errors.hpp"

namespace json = boost::json;

namespace aisched::proto {

namespace {

// -- encoding helpers --------------------------------------------------------

json::value time_or_null(unix_ms t) {
  if (t == 0) return nullptr;
  return json::string(format_rfc3339(t));
}

json::object labels_json(const std::map<std::string, std::string>& m) {
  json::object o;
  for (auto& [k, v] : m) o[k] = v;
  return o;
}

// -- decoding helpers --------------------------------------------------------

caf::error bad(const std::string& field, const std::string& why) {
  return make_error(errc::invalid_argument, field, field + ": " + why);
}

caf::error read(const json::value& v, const std::string& f, std::string& out) {
  if (!v.is_string()) return bad(f, "expected a string");
  out = std::string(v.get_string());
  return {};
}

caf::error read(const json::value& v, const std::string& f, bool& out) {
  if (!v.is_bool()) return bad(f, "expected true or false");
  out = v.get_bool();
  return {};
}

template <class Int>
caf::error read_int(const json::value& v, const std::string& f, Int& out) {
  int64_t n;
  if (v.is_int64()) {
    n = v.get_int64();
  } else if (v.is_uint64()) {
    if (v.get_uint64() > uint64_t(std::numeric_limits<int64_t>::max()))
      return bad(f, "out of range");
    n = int64_t(v.get_uint64());
  } else if (v.is_double() && std::floor(v.get_double()) == v.get_double() &&
             std::fabs(v.get_double()) < 9e15) {
    n = int64_t(v.get_double());
  } else {
    return bad(f, "expected an integer");
  }
  if (n < int64_t(std::numeric_limits<Int>::min()) ||
      (n > 0 && uint64_t(n) > uint64_t(std::numeric_limits<Int>::max())))
    return bad(f, "out of range");
  out = static_cast<Int>(n);
  return {};
}

caf::error read(const json::value& v, const std::string& f, uint32_t& out) {
  return read_int(v, f, out);
}
caf::error read(const json::value& v, const std::string& f, uint64_t& out) {
  return read_int(v, f, out);
}

caf::error read(const json::value& v, const std::string& f, double& out) {
  if (!v.is_number()) return bad(f, "expected a number");
  out = v.to_number<double>();
  return {};
}

caf::error read_duration(const json::value& v, const std::string& f, duration_ms& out) {
  if (!v.is_string()) return bad(f, "expected a duration string like \"10s\" or \"1h30m\"");
  auto d = parse_duration(v.get_string());
  if (!d) return bad(f, "invalid duration '" + std::string(v.get_string()) + "'");
  out = *d;
  return {};
}

caf::error read_time(const json::value& v, const std::string& f, unix_ms& out) {
  if (v.is_null()) {
    out = 0;
    return {};
  }
  if (!v.is_string()) return bad(f, "expected an RFC 3339 time string");
  auto t = parse_rfc3339(v.get_string());
  if (!t) return bad(f, "invalid RFC 3339 time '" + std::string(v.get_string()) + "'");
  out = *t;
  return {};
}

template <class E>
caf::error read_enum(const json::value& v, const std::string& f, E& out) {
  if (!v.is_string()) return bad(f, "expected a string");
  auto e = parse_enum<E>(v.get_string());
  if (!e) {
    std::string allowed;
    for (auto n : enum_names<E>::value) allowed += (allowed.empty() ? "" : ", ") + std::string(n);
    return bad(f, "unknown value '" + std::string(v.get_string()) + "' (one of: " + allowed + ")");
  }
  out = *e;
  return {};
}

caf::error read(const json::value& v, const std::string& f,
                std::map<std::string, std::string>& out) {
  if (!v.is_object()) return bad(f, "expected an object of strings");
  std::map<std::string, std::string> m;
  for (auto& kv : v.get_object()) {
    std::string key(kv.key());
    if (!kv.value().is_string()) return bad(f + "." + key, "expected a string");
    m[key] = std::string(kv.value().get_string());
  }
  out = std::move(m);
  return {};
}

template <class Int>
caf::error read_int_list(const json::value& v, const std::string& f, std::vector<Int>& out) {
  if (!v.is_array()) return bad(f, "expected an array of integers");
  std::vector<Int> xs;
  size_t i = 0;
  for (auto& e : v.get_array()) {
    Int x;
    if (auto err = read_int(e, f + "[" + std::to_string(i++) + "]", x)) return err;
    xs.push_back(x);
  }
  out = std::move(xs);
  return {};
}

/// Runs `fn(key, value, path)` for every member of object `v`; `fn` returns
/// false for an unknown key, which becomes an error naming the field.
template <class Fn>
caf::error for_fields(const json::value& v, const std::string& prefix, Fn fn) {
  if (!v.is_object())
    return bad(prefix.empty() ? "body" : prefix, "expected a JSON object");
  for (auto& kv : v.get_object()) {
    std::string key(kv.key());
    std::string path = prefix.empty() ? key : prefix + "." + key;
    caf::error err;
    if (!fn(key, kv.value(), path, err)) return bad(path, "unknown field");
    if (err) return err;
  }
  return {};
}

caf::error read(const json::value& v, const std::string& prefix, http_spec& h) {
  return for_fields(v, prefix, [&](const std::string& k, const json::value& x,
                                   const std::string& p, caf::error& err) {
    if (k == "method") err = read(x, p, h.method);
    else if (k == "url") err = read(x, p, h.url);
    else if (k == "headers") err = read(x, p, h.headers);
    else if (k == "body") err = read(x, p, h.body);
    else return false;
    return true;
  });
}

caf::error read(const json::value& v, const std::string& prefix, retry_policy& r) {
  return for_fields(v, prefix, [&](const std::string& k, const json::value& x,
                                   const std::string& p, caf::error& err) {
    if (k == "policy") err = read_enum(x, p, r.kind);
    else if (k == "max_attempts") err = read(x, p, r.max_attempts);
    else if (k == "interval") err = read_duration(x, p, r.interval);
    else if (k == "initial") err = read_duration(x, p, r.initial);
    else if (k == "max") err = read_duration(x, p, r.max);
    else if (k == "multiplier") err = read(x, p, r.multiplier);
    else if (k == "jitter") err = read(x, p, r.jitter);
    else if (k == "error_codes") err = read_int_list(x, p, r.error_codes);
    else if (k == "window") err = read_duration(x, p, r.window);
    else return false;
    return true;
  });
}

}  // namespace

json::value to_json(const user& u) {
  return json::object{{"name", u.name},
                      {"tenant", u.tenant},
                      {"role", std::string(name_of(u.r))},
                      {"created_at", format_rfc3339(u.created_at)}};
}

json::value to_json(const api_token& t) {
  return json::object{{"id", t.id},
                      {"name", t.name},
                      {"tenant", t.tenant},
                      {"role", std::string(name_of(t.r))},
                      {"created_by", t.created_by},
                      {"created_at", format_rfc3339(t.created_at)}};
}

json::value to_json(const audit_entry& e) {
  return json::object{{"at", format_rfc3339(e.at)}, {"subject", e.subject},
                      {"tenant", e.tenant},         {"action", e.action},
                      {"target", e.target},         {"result", e.result},
                      {"via", e.via},               {"node", e.node}};
}

caf::expected<json::value> parse_json(std::string_view body) {
  boost::system::error_code ec;
  json::parse_options opts;
  opts.max_depth = 32;
  auto v = json::parse(json::string_view(body.data(), body.size()), ec, {}, opts);
  if (ec) return make_error(errc::invalid_argument, "body", "malformed JSON: " + ec.message());
  return v;
}

json::value to_json(const task& t) {
  json::object o;
  o["id"] = t.id;
  o["tenant"] = t.tenant;
  o["name"] = t.name;
  o["kind"] = std::string(name_of(t.kind));
  o["command"] = t.command;
  if (t.kind == task_kind::http) {
    json::object h;
    h["method"] = t.http.method;
    h["url"] = t.http.url;
    h["headers"] = labels_json(t.http.headers);
    h["body"] = t.http.body;
    o["http"] = std::move(h);
  }
  o["image"] = t.image;
  o["schedule"] = t.schedule;
  o["at"] = time_or_null(t.at);
  o["event"] = t.event;
  o["timezone"] = t.timezone;
  o["labels"] = labels_json(t.labels);
  o["route"] = std::string(name_of(t.route));
  o["shards"] = t.shards;
  json::object r;
  r["policy"] = std::string(name_of(t.retry.kind));
  r["max_attempts"] = t.retry.max_attempts;
  r["interval"] = format_duration(t.retry.interval);
  r["initial"] = format_duration(t.retry.initial);
  r["max"] = format_duration(t.retry.max);
  r["multiplier"] = t.retry.multiplier;
  r["jitter"] = t.retry.jitter;
  json::array codes;
  for (auto c : t.retry.error_codes) codes.push_back(c);
  r["error_codes"] = std::move(codes);
  r["window"] = format_duration(t.retry.window);
  o["retry"] = std::move(r);
  o["timeout"] = format_duration(t.timeout);
  o["memory_mb"] = t.memory_mb;
  o["overlap"] = std::string(name_of(t.overlap));
  o["start_at"] = time_or_null(t.start_at);
  o["end_at"] = time_or_null(t.end_at);
  o["jitter"] = format_duration(t.jitter);
  o["catchup_window"] = format_duration(t.catchup_window);
  o["misfire"] = std::string(name_of(t.misfire));
  o["misfire_limit"] = t.misfire_limit;
  json::array deps;
  for (auto d : t.depends_on) deps.push_back(d);
  o["depends_on"] = std::move(deps);
  o["paused"] = t.paused;
  o["created_at"] = time_or_null(t.created_at);
  o["updated_at"] = time_or_null(t.updated_at);
  o["version"] = t.version;
  return o;
}

json::value to_json(const instance& x) {
  json::object o;
  o["id"] = x.id;
  o["tenant"] = x.tenant;
  o["task_id"] = x.task_id;
  o["slot"] = time_or_null(x.slot);
  o["shard"] = x.shard;
  o["shards"] = x.shards;
  o["attempt"] = x.attempt;
  o["state"] = std::string(name_of(x.state));
  o["worker_id"] = x.worker_id;
  o["exit_code"] = x.exit_code;
  o["error"] = x.error;
  o["output"] = x.output;
  o["trace_id"] = x.trace_id;
  o["idempotency_key"] = x.idempotency_key;
  o["created_at"] = time_or_null(x.created_at);
  o["dispatched_at"] = time_or_null(x.dispatched_at);
  o["started_at"] = time_or_null(x.started_at);
  o["finished_at"] = time_or_null(x.finished_at);
  o["next_attempt_at"] = time_or_null(x.next_attempt_at);
  o["deadline"] = time_or_null(x.deadline);
  if (!x.event_name.empty()) {
    o["event"] = x.event_name;
    o["event_payload"] = x.event_payload;
  }
  return o;
}

json::value to_json(const attempt_list& a) {
  json::array items;
  for (auto& r : a.items) {
    json::object o;
    o["attempt"] = r.attempt;
    o["worker_id"] = r.worker_id;
    o["state"] = std::string(name_of(r.state));
    o["dispatched_at"] = time_or_null(r.dispatched_at);
    o["started_at"] = time_or_null(r.started_at);
    o["finished_at"] = time_or_null(r.finished_at);
    o["exit_code"] = r.exit_code;
    o["error"] = r.error;
    o["output"] = r.output;
    items.push_back(std::move(o));
  }
  return json::object{{"instance_id", a.instance_id}, {"attempts", std::move(items)}};
}

json::value to_json(const worker& w) {
  json::object o;
  o["id"] = w.id;
  o["tenant"] = w.tenant;
  o["protocol"] = std::string(name_of(w.protocol));
  o[w.protocol == worker_protocol::http ? "callback_url" : "address"] = w.address;
  o["labels"] = labels_json(w.labels);
  o["max_load"] = w.max_load;
  o["load"] = w.load;
  o["last_heartbeat"] = time_or_null(w.last_heartbeat);
  o["status"] = std::string(name_of(w.status));
  o["cpu_percent"] = w.cpu_percent;
  o["memory_percent"] = w.memory_percent;
  return o;
}

json::value to_json(const raft_status& s) {
  json::object o;
  o["id"] = s.node_id;
  o["role"] = s.role;
  o["leader"] = s.leader_id;
  o["term"] = s.term;
  o["commit_index"] = s.commit_index;
  o["applied_index"] = s.applied_index;
  o["last_log_index"] = s.last_log_index;
  o["http_addr"] = s.http_addr;
  o["voter"] = s.voter;
  return o;
}

caf::expected<task> task_from_json(const json::value& v, task t) {
  auto err = for_fields(v, "", [&](const std::string& k, const json::value& x,
                                   const std::string& p, caf::error& e) {
    if (k == "name") e = read(x, p, t.name);
    else if (k == "kind") e = read_enum(x, p, t.kind);
    else if (k == "command") e = read(x, p, t.command);
    else if (k == "http") e = read(x, p, t.http);
    else if (k == "image") e = read(x, p, t.image);
    else if (k == "schedule") e = read(x, p, t.schedule);
    else if (k == "at") e = read_time(x, p, t.at);
    else if (k == "event") e = read(x, p, t.event);
    else if (k == "timezone") e = read(x, p, t.timezone);
    else if (k == "labels") e = read(x, p, t.labels);
    else if (k == "route") e = read_enum(x, p, t.route);
    else if (k == "shards") e = read(x, p, t.shards);
    else if (k == "retry") e = read(x, p, t.retry);
    else if (k == "timeout") e = read_duration(x, p, t.timeout);
    else if (k == "memory_mb") e = read(x, p, t.memory_mb);
    else if (k == "overlap") e = read_enum(x, p, t.overlap);
    else if (k == "start_at") e = read_time(x, p, t.start_at);
    else if (k == "end_at") e = read_time(x, p, t.end_at);
    else if (k == "jitter") e = read_duration(x, p, t.jitter);
    else if (k == "catchup_window") e = read_duration(x, p, t.catchup_window);
    else if (k == "misfire") e = read_enum(x, p, t.misfire);
    else if (k == "misfire_limit") e = read(x, p, t.misfire_limit);
    else if (k == "depends_on") e = read_int_list(x, p, t.depends_on);
    else if (k == "paused") e = read(x, p, t.paused);
    else if (k == "version") e = read(x, p, t.version);
    else if (k == "id" || k == "tenant" || k == "created_at" || k == "updated_at" ||
             k == "next_fire_times") {
      // Read-only: assigned by the cluster; accepted so a fetched document can be sent back.
    } else {
      return false;
    }
    return true;
  });
  if (err) return err;
  return t;
}

caf::expected<worker> worker_from_json(const json::value& v, worker w) {
  auto err = for_fields(v, "", [&](const std::string& k, const json::value& x,
                                   const std::string& p, caf::error& e) {
    if (k == "id") e = read(x, p, w.id);
    else if (k == "callback_url") {
      e = read(x, p, w.address);
      w.protocol = worker_protocol::http;
    } else if (k == "labels") e = read(x, p, w.labels);
    else if (k == "max_load") e = read(x, p, w.max_load);
    else if (k == "load") e = read(x, p, w.load);
    else if (k == "cpu_percent") e = read(x, p, w.cpu_percent);
    else if (k == "memory_percent") e = read(x, p, w.memory_percent);
    else return false;
    return true;
  });
  if (err) return err;
  return w;
}

caf::expected<worker_heartbeat> heartbeat_from_json(const json::value& v, worker_heartbeat hb) {
  auto err = for_fields(v, "", [&](const std::string& k, const json::value& x,
                                   const std::string& p, caf::error& e) {
    if (k == "load") e = read(x, p, hb.load);
    else if (k == "cpu_percent") e = read(x, p, hb.cpu_percent);
    else if (k == "memory_percent") e = read(x, p, hb.memory_percent);
    else if (k == "draining") e = read(x, p, hb.draining);
    else return false;
    return true;
  });
  if (err) return err;
  for (auto [field, value] : {std::pair{"cpu_percent", hb.cpu_percent},
                              std::pair{"memory_percent", hb.memory_percent}})
    if (value > 100)
      return make_error(errc::invalid_argument, field,
                        std::string(field) + ": must be between 0 and 100");
  return hb;
}

json::value error_to_json(const caf::error& err) {
  auto e = view(err);
  json::object inner;
  inner["code"] = to_string(e.code);
  inner["message"] = e.message;
  inner["field"] = e.field;
  json::object o;
  o["error"] = std::move(inner);
  return o;
}

}  // namespace aisched::proto
