// External-worker protocol client; see http_dispatch.hpp.
#include "actors/worker_proxy/http_dispatch.hpp"

#include <boost/json.hpp>
#include <curl/curl.h>

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
  o["report_url"] = report_url;
  return json::serialize(o);
}

namespace {

size_t collect(char* data, size_t size, size_t n, void* user) {
  auto* out = static_cast<std::string*>(user);
  if (out->size() < 64 * 1024) out->append(data, size * n);
  return size * n;
}

}  // namespace

http_reply post_json(const std::string& url, const std::string& body, long timeout_ms,
                     const std::vector<std::string>& extra_headers) {
  http_reply out;
  CURL* c = curl_easy_init();
  if (!c) {
    out.error = "curl_easy_init failed";
    return out;
  }
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  for (auto& h : extra_headers) headers = curl_slist_append(headers, h.c_str());
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeout_ms, 3000L));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out.body);
  auto rc = curl_easy_perform(c);
  if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.status);
  else out.error = curl_easy_strerror(rc);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  return out;
}

}  // namespace aisched::worker_proxy
