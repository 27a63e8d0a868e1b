// Beast's parser and the target split; see request_head.hpp.
#include "gateway/request_head.hpp"

#include <cctype>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include "proto/hex.hpp"

namespace aisched::gateway {

namespace http = boost::beast::http;

void limit(beast_parser& p, const request_limits& limits) {
  p.body_limit(limits.max_body_bytes);
  p.header_limit(static_cast<uint32_t>(limits.max_header_bytes));
}

std::string percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    int hi = -1, lo = -1;
    if (s[i] == '%' && i + 2 < s.size() && (hi = proto::hex_digit(s[i + 1])) >= 0 &&
        (lo = proto::hex_digit(s[i + 2])) >= 0) {
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (s[i] == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

void split_target(std::string_view target, http_request& req) {
  auto q = target.find('?');
  req.path = percent_decode(target.substr(0, q), false);
  if (q == std::string_view::npos) return;
  auto rest = target.substr(q + 1);
  while (!rest.empty()) {
    auto amp = rest.find('&');
    auto pair = rest.substr(0, amp);
    auto eq = pair.find('=');
    if (!pair.empty())
      req.query[percent_decode(pair.substr(0, eq), true)] =
          eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1), true);
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
}

http_request to_request(beast_request&& msg) {
  http_request req;
  req.method = std::string(msg.method_string());
  split_target(msg.target(), req);
  for (auto& h : msg) {
    std::string name(h.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    req.headers[name] = std::string(h.value());
  }
  req.body = std::move(msg.body());
  return req;
}

read_refusal refusal_for(const boost::beast::error_code& ec) {
  if (ec == http::error::body_limit)
    return {413, errc::payload_too_large, "request body too large"};
  if (ec == http::error::header_limit)
    return {431, errc::invalid_argument, "request headers too large"};
  return {400, errc::invalid_argument, "malformed HTTP request"};
}

caf::expected<http_request> parse_request(std::string_view bytes, const request_limits& limits) {
  beast_parser p;
  limit(p, limits);
  p.eager(true);
  boost::beast::error_code ec;
  size_t used = 0;
  while (!ec && !p.is_done() && used < bytes.size()) {
    auto n = p.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    if (n == 0 && !ec) break;  // needs more bytes than there are
    used += n;
  }
  if (!ec && !p.is_done()) {
    // Beast asserts got_some() in put_eof (and misbehaves without asserts):
    // no byte of a request at all is an incomplete one too.
    if (p.got_some()) p.put_eof(ec);
    if (!ec && !p.is_done()) ec = http::error::partial_message;
  }
  if (ec) {
    auto r = refusal_for(ec);
    return make_error(r.code, r.message);
  }
  return to_request(p.release());
}

}  // namespace aisched::gateway
