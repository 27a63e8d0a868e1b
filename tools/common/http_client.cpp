// Blocking keep-alive HTTP client on libcurl; see http_client.hpp.
#include "tools/common/http_client.hpp"

#include <curl/curl.h>

namespace aisched::tools {

namespace {

/// curl_global_init is not thread-safe; a function-local static runs it once even
/// when the first clients are made on several threads at once.
void init_curl_once() {
  static const bool done = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)done;
}

/// The host of "http://HOST:PORT/..." without brackets ("::1" for "[::1]").
std::string host_of(const std::string& base) {
  auto scheme = base.find("://");
  auto rest = base.substr(scheme == std::string::npos ? 0 : scheme + 3);
  rest = rest.substr(0, rest.find('/'));
  if (!rest.empty() && rest.front() == '[') return rest.substr(1, rest.find(']') - 1);
  return rest.substr(0, rest.rfind(':'));
}

/// What the write callback needs: where a collected body goes, and for stream()
/// the consumer of 2xx bodies.
struct transfer {
  CURL* handle = nullptr;
  std::string body;
  const std::function<bool(std::string_view)>* on_data = nullptr;
  bool stopped = false;  // on_data asked to stop
};

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<transfer*>(user);
  size_t len = size * n;
  if (t->on_data) {
    long status = 0;
    curl_easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200 && status < 300) {
      if ((*t->on_data)(std::string_view(data, len))) return len;
      t->stopped = true;
      return 0;  // makes curl abort the transfer
    }
  }
  t->body.append(data, len);
  return len;
}

}  // namespace

struct http_client::impl {
  CURL* handle = nullptr;
  char error[CURL_ERROR_SIZE] = {};

  /// Sets everything but the method and body; curl_easy_reset keeps the
  /// connection cache, so keep-alive survives between requests.
  curl_slist* prepare(const std::string& url, const http_client_options& o, transfer& t,
                      bool has_body, const char* accept) {
    curl_easy_reset(handle);
    t.handle = handle;
    error[0] = '\0';
    curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.timeout.count()));
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &t);
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, (std::string("Accept: ") + accept).c_str());
    if (has_body) headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
    if (!o.token.empty())
      headers = curl_slist_append(headers, ("Authorization: Bearer " + o.token).c_str());
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    return headers;
  }

  http_reply perform(transfer& t, curl_slist* headers) {
    auto rc = curl_easy_perform(handle);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && t.stopped))
      return {0, error[0] ? std::string(error) : std::string(curl_easy_strerror(rc))};
    long status = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    return {static_cast<unsigned>(status), std::move(t.body)};
  }
};

http_client::http_client(std::string base, http_client_options options)
    : impl_(new impl), base_(std::move(base)), options_(std::move(options)) {
  init_curl_once();
  impl_->handle = curl_easy_init();
  while (!base_.empty() && base_.back() == '/') base_.pop_back();
}

http_client::~http_client() {
  if (impl_->handle) curl_easy_cleanup(impl_->handle);
}

http_reply http_client::call(const std::string& method, const std::string& target,
                             const std::string& body) {
  if (!impl_->handle) return {0, "curl_easy_init failed"};
  transfer t;
  auto headers = impl_->prepare(base_ + target, options_, t, !body.empty(), "application/json");
  auto* h = impl_->handle;
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout.count()));
  if (method == "HEAD") curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  // A POST/PUT/PATCH always carries a body (Content-Length: 0 when empty).
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
  }
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  return impl_->perform(t, headers);
}

http_reply http_client::stream(const std::string& target,
                               const std::function<bool(std::string_view)>& on_data) {
  if (!impl_->handle) return {0, "curl_easy_init failed"};
  transfer t;
  t.on_data = &on_data;
  auto headers = impl_->prepare(base_ + target, options_, t, false, "text/event-stream");
  return impl_->perform(t, headers);
}

bool is_loopback(const std::string& base) {
  auto host = host_of(base);
  if (host == "localhost" || host == "::1") return true;
  return host.rfind("127.", 0) == 0;
}

}  // namespace aisched::tools
