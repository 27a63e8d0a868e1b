// External-worker protocol client; see http_dispatch.hpp.
#include "actors/worker_proxy/http_dispatch.hpp"

#include <boost/json.hpp>

#include "proto/json.hpp"

namespace aisched::worker_proxy {

namespace json = boost::json;

std::string execute_body(const proto::execute_request& req, const std::string& report_url) {
  json::object o;
  o["instance_id"] = req.instance_id;
  o["task_id"] = req.task_id;
  o["kind"] = std::string(proto::name_of(req.kind));
  o["command"] = req.command;
  json::object h;
  h["method"] = req.http.method;
  h["url"] = req.http.url;
  json::object headers;
  for (auto& [k, v] : req.http.headers) headers[k] = v;
  h["headers"] = std::move(headers);
  h["body"] = req.http.body;
  o["http"] = std::move(h);
  o["image"] = req.image;
  o["attempt"] = req.attempt;
  o["shard"] = req.shard;
  o["shards"] = req.shards;
  o["idempotency_key"] = req.idempotency_key;
  o["trace_id"] = req.trace_id;
  o["timeout"] = format_duration(req.timeout);
  json::object env;  // event values the command refers to as variables
  for (auto& [k, v] : req.env) env[k] = v;
  o["env"] = std::move(env);
  // The run's secrets, for this attempt only; the worker must mask `redact` in
  // what it reports (the credentialed channel of its registration carries them).
  json::object secrets;
  for (auto& [k, v] : req.secret_env) secrets[k] = v;
  o["secrets"] = std::move(secrets);
  json::array redact;
  for (auto& v : req.redact) redact.push_back(json::string(v));
  o["redact"] = std::move(redact);
  o["report_url"] = report_url;
  return json::serialize(o);
}

}  // namespace aisched::worker_proxy
