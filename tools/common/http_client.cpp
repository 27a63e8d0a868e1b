// Blocking keep-alive HTTP client on libcurl; see http_client.hpp.
#include "tools/common/http_client.hpp"

#include "common/curl_session.hpp"

namespace aisched::tools {

namespace {

/// The host of "http://HOST:PORT/..." without brackets ("::1" for "[::1]").
std::string host_of(const std::string& base) {
  auto scheme = base.find("://");
  auto rest = base.substr(scheme == std::string::npos ? 0 : scheme + 3);
  rest = rest.substr(0, rest.find('/'));
  if (!rest.empty() && rest.front() == '[') return rest.substr(1, rest.find(']') - 1);
  return rest.substr(0, rest.rfind(':'));
}

}  // namespace

struct http_client::impl {
  http::curl_session session;

  /// Everything but the method, body and limits.
  http::curl_request prepare(const std::string& url, const http_client_options& o, bool has_body,
                             const char* accept) {
    http::curl_request r;
    r.url = url;
    r.connect_timeout = o.timeout;
    r.headers.push_back(std::string("Accept: ") + accept);
    if (has_body) r.headers.push_back("Content-Type: application/json");
    r.headers.push_back("Expect:");  // no 100-continue round trip
    if (!o.token.empty()) r.headers.push_back("Authorization: Bearer " + o.token);
    return r;
  }

  http_reply perform(const http::curl_request& r, std::string& body) {
    auto got = session.perform(r);
    if (got.outcome != http::curl_outcome::ok && got.outcome != http::curl_outcome::stopped)
      return {0, got.detail.empty() ? got.error : got.detail};
    return {static_cast<unsigned>(got.status), std::move(body)};
  }
};

http_client::http_client(std::string base, http_client_options options)
    : impl_(new impl), base_(std::move(base)), options_(std::move(options)) {
  while (!base_.empty() && base_.back() == '/') base_.pop_back();
}

http_client::~http_client() = default;

http_reply http_client::call(const std::string& method, const std::string& target,
                             const std::string& body) {
  auto r = impl_->prepare(base_ + target, options_, !body.empty(), "application/json");
  r.method = method;
  r.timeout = options_.timeout;
  // A POST/PUT/PATCH always carries a body (Content-Length: 0 when empty).
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") r.body = body;
  std::string got;
  r.on_data = [&got](long, std::string_view bytes) {
    got.append(bytes);
    return true;
  };
  return impl_->perform(r, got);
}

http_reply http_client::stream(const std::string& target,
                               const std::function<bool(std::string_view)>& on_data) {
  auto r = impl_->prepare(base_ + target, options_, false, "text/event-stream");
  std::string got;  // a non-2xx body
  r.on_data = [&](long status, std::string_view bytes) {
    if (status >= 200 && status < 300) return on_data(bytes);
    got.append(bytes);
    return true;
  };
  return impl_->perform(r, got);
}

bool is_loopback(const std::string& base) {
  auto host = host_of(base);
  if (host == "localhost" || host == "::1") return true;
  return host.rfind("127.", 0) == 0;
}

}  // namespace aisched::tools
