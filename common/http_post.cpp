// Blocking JSON POST with libcurl; see http_post.hpp.
#include "common/http_post.hpp"

#include <algorithm>

#include <curl/curl.h>

namespace aisched::http {

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

}  // namespace aisched::http
