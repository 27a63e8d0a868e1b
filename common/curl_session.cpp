// The one libcurl client; see curl_session.hpp.
#include "common/curl_session.hpp"

#include <algorithm>

#include <curl/curl.h>

namespace aisched::http {

namespace {

/// curl_global_init is not thread-safe; a function-local static runs it once
/// even when the first sessions are made on several threads at once.
void init_curl_once() {
  static const bool done = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)done;
}

/// What the callbacks of one perform() need.
struct transfer {
  CURL* handle = nullptr;
  const curl_request* req = nullptr;
  curl_response* out = nullptr;
  bool stopped = false;
};

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<transfer*>(user);
  size_t len = size * n;
  if (t->req->on_data) {
    long status = 0;
    curl_easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &status);
    if (t->req->on_data(status, std::string_view(data, len))) return len;
    t->stopped = true;
    return 0;  // curl aborts the transfer with CURLE_WRITE_ERROR
  }
  auto& body = t->out->body;
  if (body.size() < t->req->body_cap)
    body.append(data, std::min(len, t->req->body_cap - body.size()));
  return len;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<transfer*>(user);
  return t->req->cancelled() ? 1 : 0;  // non-zero aborts
}

/// The request's header lines as curl's list, freed with it.
struct header_list {
  curl_slist* head = nullptr;
  explicit header_list(const std::vector<std::string>& lines) {
    for (auto& l : lines) head = curl_slist_append(head, l.c_str());
  }
  ~header_list() { curl_slist_free_all(head); }
  header_list(const header_list&) = delete;
  header_list& operator=(const header_list&) = delete;
};

}  // namespace

curl_session::curl_session() {
  init_curl_once();
  handle_ = curl_easy_init();
}

curl_session::~curl_session() {
  if (handle_) curl_easy_cleanup(static_cast<CURL*>(handle_));
}

curl_response curl_session::perform(const curl_request& r) {
  curl_response out;
  auto* h = static_cast<CURL*>(handle_);
  if (!h) {
    out.error = "curl_easy_init failed";
    return out;
  }
  // curl_easy_reset keeps the connection cache: keep-alive survives.
  curl_easy_reset(h);
  char detail[CURL_ERROR_SIZE] = {};
  transfer t{h, &r, &out};
  header_list headers(r.headers);
  curl_easy_setopt(h, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  if (r.method == "HEAD") curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  if (r.body) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body->size()));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, r.body->c_str());
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.head);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, detail);
  if (r.timeout.count() > 0)
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
  if (r.connect_timeout.count() > 0)
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  if (r.cancelled) {
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  }
  auto rc = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out.status);
  // The handle keeps pointers into this frame (headers, error buffer, transfer):
  // drop them before returning.
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
  if (rc == CURLE_OK) {
    out.outcome = curl_outcome::ok;
  } else if (rc == CURLE_WRITE_ERROR && t.stopped) {
    out.outcome = curl_outcome::stopped;
  } else {
    out.outcome = rc == CURLE_ABORTED_BY_CALLBACK  ? curl_outcome::cancelled
                  : rc == CURLE_OPERATION_TIMEDOUT ? curl_outcome::timed_out
                                                   : curl_outcome::failed;
    out.error = curl_easy_strerror(rc);
    out.detail = detail;
  }
  return out;
}

curl_response perform(const curl_request& r) {
  curl_session s;
  return s.perform(r);
}

http_reply post_json(const std::string& url, const std::string& body, long timeout_ms,
                     const std::vector<std::string>& extra_headers) {
  curl_request r;
  r.method = "POST";
  r.url = url;
  r.headers.push_back("Content-Type: application/json");
  r.headers.insert(r.headers.end(), extra_headers.begin(), extra_headers.end());
  r.body = body;
  r.timeout = std::chrono::milliseconds(timeout_ms);
  r.connect_timeout = std::chrono::milliseconds(std::min(timeout_ms, 3000L));
  r.body_cap = 64 * 1024;
  auto got = perform(r);
  http_reply out;
  if (got.outcome == curl_outcome::ok) out.status = got.status;
  else out.error = got.error;
  out.body = std::move(got.body);
  return out;
}

}  // namespace aisched::http
