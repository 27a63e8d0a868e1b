// The execute request of a run; see run_request.hpp.
#include "actors/router/run_request.hpp"

#include "actors/router/adoption.hpp"
#include "actors/router/substitute.hpp"
#include "proto/errors.hpp"
#include "proto/secret_types.hpp"

namespace aisched::router {

using namespace proto;

execute_request make_request(const task& t, const instance& x) {
  execute_request r;
  r.instance_id = x.id;
  r.task_id = t.id;
  r.kind = t.kind;
  r.command = t.command;
  r.http = t.http;
  r.image = t.image;
  r.attempt = x.attempt;
  r.shard = x.shard;
  r.shards = x.shards;
  r.idempotency_key = x.idempotency_key;
  r.trace_id = x.trace_id;
  r.timeout = t.timeout;
  r.memory_mb = t.memory_mb;
  r.tenant = x.tenant;
  if (!x.event_name.empty() || !x.event_payload.empty()) {
    // An event-fired or bulk-enqueued run: its payload lands in the command (as
    // variables), URL and body.
    auto sub = [&](const std::string& s, landing where) {
      return substitute(s, x.event_name, x.event_payload, where);
    };
    auto shell = substitute_shell(t.command, x.event_name, x.event_payload);
    r.command = std::move(shell.command);  // refers to r.env: values never parsed as code
    r.env = std::move(shell.env);
    r.http.url = sub(t.http.url, landing::url);
    r.http.body = sub(t.http.body, landing::json);
    for (auto& [k, v] : r.http.headers) v = sub(v, landing::text);
  }
  return r;
}

namespace {

/// What `v` becomes as JSON string contents (what fill_secrets writes in a body).
std::string json_escaped(const std::string& v) {
  return fill_secrets("{{secret.x}}", {{"x", v}}, true);
}

}  // namespace

caf::expected<execute_request> make_request(const task& t, const instance& x,
                                            const reveal_fn& reveal) {
  std::set<std::string> names;
  for (auto& [var, name] : t.secrets) names.insert(name);
  if (t.kind == task_kind::http) {
    for (auto& [h, v] : t.http.headers) names.merge(secret_refs(v));
    names.merge(secret_refs(t.http.body));
  }
  if (names.empty()) return make_request(t, x);
  if (!reveal)
    return make_error(errc::invalid_argument, "secrets",
                      "the task refers to secrets, but secrets are disabled on the leader "
                      "(--secrets-key-file)");
  auto values = reveal(t.tenant, names);
  if (!values) return values.error();
  task filled = t;  // a copy in memory, gone with this call
  for (auto& [h, v] : filled.http.headers) v = fill_secrets(v, *values, false);
  filled.http.body = fill_secrets(filled.http.body, *values, true);
  auto r = make_request(filled, x);
  for (auto& [var, name] : t.secrets) r.secret_env[var] = values->at(name);
  for (auto& [name, v] : *values) {
    r.redact.push_back(v);
    if (auto e = json_escaped(v); e != v) r.redact.push_back(std::move(e));
  }
  return r;
}

run_result unsendable(const instance& x, const caf::error& why, unix_ms now) {
  auto r = failed_report(x, "not sent to a worker: " + view(why).message);
  r.started_at = r.finished_at = now;
  return r;
}

}  // namespace aisched::router
