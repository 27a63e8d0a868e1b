// JSON encoding and strict decoding of the proto types; see json.hpp.
#include "proto/json.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>
#include <vector>

#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>

#include "proto/errors.hpp"
#include "proto/json_wire.hpp"
#include "proto/worker_id.hpp"

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

caf::error read(const json::value& v, const std::string& prefix, retention_policy& r) {
  return for_fields(v, prefix, [&](const std::string& k, const json::value& x,
                                   const std::string& p, caf::error& err) {
    if (k == "keep_for") err = read_duration(x, p, r.keep_for);
    else if (k == "keep_runs") err = read(x, p, r.keep_runs);
    else return false;
    return true;
  });
}

// -- parsing -----------------------------------------------------------------

/// Boost.JSON's own handler (a value_stack, as json::parser uses) that also
/// refuses a key repeated in one object: json::object would silently keep the
/// last one, so `{"name":"a","name":"b"}` would mean whatever the reader picked.
/// `duplicate` is the path of the repeated key ("retry.policy", "items[2].id").
struct checked_handler {
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  struct frame {
    bool is_array = false;
    size_t done = 0;  // arrays: elements completed so far (the index of the current one)
    std::string key;  // objects: the current key
    std::unordered_set<std::string> keys;
  };

  json::value_stack st;
  std::vector<frame> frames;
  std::string key_part;   // a key arriving in pieces
  std::string duplicate;  // set when a key repeats
  std::string out_of_range;  // set when a number is beyond a double

  std::string path() const {
    std::string out;
    for (auto& f : frames) {
      if (f.is_array) out += "[" + std::to_string(f.done) + "]";
      else out += (out.empty() ? "" : ".") + f.key;
    }
    return out;
  }
  void element_done() {
    if (!frames.empty() && frames.back().is_array) ++frames.back().done;
  }

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) {
    frames.emplace_back();
    return true;
  }
  bool on_object_end(std::size_t n, json::error_code&) {
    st.push_object(n);
    frames.pop_back();
    element_done();
    return true;
  }
  bool on_array_begin(json::error_code&) {
    frames.emplace_back();
    frames.back().is_array = true;
    return true;
  }
  bool on_array_end(std::size_t n, json::error_code&) {
    st.push_array(n);
    frames.pop_back();
    element_done();
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    st.push_chars(s);
    key_part.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code& ec) {
    st.push_key(s);
    auto& f = frames.back();
    f.key = std::move(key_part);
    key_part.clear();
    f.key.append(s.data(), s.size());
    if (!f.keys.insert(f.key).second) {
      duplicate = path();
      ec = json::error::syntax;  // stops the parser; parse_json reports `duplicate`
      return false;
    }
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    st.push_string(s);
    element_done();
    return true;
  }
  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(int64_t i, json::string_view, json::error_code&) {
    st.push_int64(i);
    element_done();
    return true;
  }
  bool on_uint64(uint64_t u, json::string_view, json::error_code&) {
    st.push_uint64(u);
    element_done();
    return true;
  }
  bool on_double(double d, json::string_view, json::error_code& ec) {
    // 1e999 parses as infinity, which no field means and which JSON cannot
    // write back (to_text prints null): refused, naming where it was.
    if (!std::isfinite(d)) {
      out_of_range = frames.empty() ? "body" : path();
      ec = json::error::exponent_overflow;
      return false;
    }
    st.push_double(d);
    element_done();
    return true;
  }
  bool on_bool(bool b, json::error_code&) {
    st.push_bool(b);
    element_done();
    return true;
  }
  bool on_null(json::error_code&) {
    st.push_null();
    element_done();
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }
};

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
  json::parse_options opts;
  opts.max_depth = 32;
  json::basic_parser<checked_handler> p(opts);
  p.handler().st.reset();
  boost::system::error_code ec;
  auto n = p.write_some(false, body.data(), body.size(), ec);
  if (!p.handler().duplicate.empty())
    return bad(p.handler().duplicate, "duplicate key (each key may appear once in an object)");
  if (ec && !p.handler().out_of_range.empty())
    return bad(p.handler().out_of_range, "number out of range (beyond a double)");
  if (!ec && n < body.size()) ec = json::error::extra_data;
  if (ec) return make_error(errc::invalid_argument, "body", "malformed JSON: " + ec.message());
  return p.handler().st.release();
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
  o["secrets"] = labels_json(t.secrets);  // env variable -> secret name; never a value
  o["max_runs"] = t.max_runs;
  o["max_concurrency"] = t.max_concurrency;
  o["pool"] = t.pool;
  o["exclude_calendar"] = t.exclude_calendar;
  // 0 in either: the cluster's default applies.
  o["retention"] = json::object{{"keep_for", format_duration(t.retention.keep_for)},
                                {"keep_runs", t.retention.keep_runs}};
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
  o["worker_id"] = api_worker_id(x.tenant, x.worker_id);
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
  o["id"] = api_worker_id(w.tenant, w.id);
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
  o["shared"] = w.shared;
  return o;
}

json::value registration_json(const worker& w) {
  auto v = to_json(w);
  v.as_object()["credential"] = w.credential;
  return v;
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
  o["cluster_id"] = s.cluster_id;
  o["version"] = s.version;
  o["data_format"] = s.data_format;
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
    else if (k == "secrets") e = read(x, p, t.secrets);
    else if (k == "max_runs") e = read(x, p, t.max_runs);
    else if (k == "max_concurrency") e = read(x, p, t.max_concurrency);
    else if (k == "pool") e = read(x, p, t.pool);
    else if (k == "exclude_calendar") e = read(x, p, t.exclude_calendar);
    else if (k == "retention") e = read(x, p, t.retention);
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

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = byte(i);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    // The length of the sequence and the range its second byte must be in
    // (which excludes overlong forms, surrogates and code points past U+10FFFF).
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    // How many bytes form a valid prefix: a broken sequence is replaced as one
    // U+FFFD (its maximal valid prefix, as WHATWG and Unicode recommend).
    size_t ok = len == 0 ? 0 : 1;
    while (ok < len && i + ok < s.size()) {
      unsigned char b = byte(i + ok);
      bool fits = ok == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
      if (!fits) break;
      ++ok;
    }
    if (len != 0 && ok == len) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out.append(replacement);
      i += std::max<size_t>(ok, 1);
    }
  }
  return out;
}

bool is_idempotency_key_reused(const caf::error& err) {
  auto e = view(err);
  return e.code == errc::already_exists && e.field == "Idempotency-Key";
}

json::value error_to_json(const caf::error& err) {
  auto e = view(err);
  return error_to_json(is_idempotency_key_reused(err) ? "idempotency_key_reused" : to_string(e.code),
                       e.message, e.field);
}

}  // namespace aisched::proto
