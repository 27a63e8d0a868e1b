// Blocking keep-alive HTTP client on Beast; see http_client.hpp.
#include "tools/aisched-load/http_client.hpp"

#include <optional>

#include <boost/asio.hpp>
#include <boost/beast.hpp>

namespace aisched::tools {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

void split(const std::string& base, std::string& host, std::string& port) {
  auto rest = base.substr(base.find("://") == std::string::npos ? 0 : base.find("://") + 3);
  auto slash = rest.find('/');
  if (slash != std::string::npos) rest = rest.substr(0, slash);
  auto colon = rest.rfind(':');
  host = colon == std::string::npos ? rest : rest.substr(0, colon);
  port = colon == std::string::npos ? "80" : rest.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
}

}  // namespace

struct http_client::impl {
  asio::io_context ioc;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buf;
  std::string host, port;

  void connect() {
    asio::ip::tcp::resolver resolver(ioc);
    stream.emplace(ioc);
    stream->expires_after(std::chrono::seconds(30));
    stream->connect(resolver.resolve(host, port));
  }
};

http_client::http_client(std::string base) : impl_(new impl) {
  split(base, impl_->host, impl_->port);
  host_ = impl_->host;
}

http_client::~http_client() {
  if (impl_->stream) {
    beast::error_code ec;
    impl_->stream->socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  }
}

http_reply http_client::call(const std::string& method, const std::string& target,
                             const std::string& body) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (!impl_->stream) impl_->connect();
      http::request<http::string_body> req{http::string_to_verb(method), target, 11};
      req.set(http::field::host, impl_->host);
      req.set(http::field::content_type, "application/json");
      req.keep_alive(true);
      req.body() = body;
      req.prepare_payload();
      impl_->stream->expires_after(std::chrono::seconds(30));
      http::write(*impl_->stream, req);
      http::response<http::string_body> res;
      http::read(*impl_->stream, impl_->buf, res);
      if (!res.keep_alive()) impl_->stream.reset();
      return {res.result_int(), std::move(res.body())};
    } catch (const std::exception& e) {
      impl_->stream.reset();
      impl_->buf.clear();
      if (attempt == 1) return {0, e.what()};
    }
  }
  return {0, "unreachable"};
}

bool is_loopback(const std::string& base) {
  std::string host, port;
  split(base, host, port);
  if (host == "localhost" || host == "::1") return true;
  return host.rfind("127.", 0) == 0;
}

}  // namespace aisched::tools
