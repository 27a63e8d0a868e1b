// The execute request of a run; see run_request.hpp.
#include "actors/router/run_request.hpp"

#include "actors/router/substitute.hpp"

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
  if (!x.event_name.empty()) {
    // An event-fired run: its payload lands in the command (as variables), URL and body.
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

}  // namespace aisched::router
