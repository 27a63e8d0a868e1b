// Beast's parser and the target split; see request_head.hpp.
#include "gateway/request_head.hpp"

#include <cctype>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/url/decode_view.hpp>
#include <boost/url/pct_string_view.hpp>

namespace aisched::gateway {

namespace http = boost::beast::http;

void limit(beast_parser& p, const request_limits& limits) {
  p.body_limit(limits.max_body_bytes);
  p.header_limit(static_cast<uint32_t>(limits.max_header_bytes));
}

caf::expected<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  // Only the escapes are checked: a client's raw '|' or '{' in a query is
  // taken as it is, as Beast took it.
  auto escaped = boost::urls::make_pct_string_view(boost::core::string_view(s.data(), s.size()));
  if (!escaped)
    return make_error(errc::invalid_argument, "target",
                      "request target: a '%' must be followed by two hex digits (" +
                          escaped.error().message() + "); send a literal '%' as %25");
  boost::urls::encoding_opts opts;
  opts.space_as_plus = plus_is_space;
  std::string out;
  out.reserve(escaped->decoded_size());
  for (char c : boost::urls::decode_view(*escaped, opts)) out.push_back(c);
  return out;
}

caf::error split_target(std::string_view target, http_request& req) {
  auto q = target.find('?');
  auto path = percent_decode(target.substr(0, q), false);
  if (!path) return std::move(path.error());
  req.path = std::move(*path);
  if (q == std::string_view::npos) return caf::none;
  auto rest = target.substr(q + 1);
  while (!rest.empty()) {
    auto amp = rest.find('&');
    auto pair = rest.substr(0, amp);
    auto eq = pair.find('=');
    if (!pair.empty()) {
      auto key = percent_decode(pair.substr(0, eq), true);
      if (!key) return std::move(key.error());
      auto value = eq == std::string_view::npos ? caf::expected<std::string>{std::string{}}
                                                : percent_decode(pair.substr(eq + 1), true);
      if (!value) return std::move(value.error());
      req.query[std::move(*key)] = std::move(*value);
    }
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return caf::none;
}

caf::expected<http_request> to_request(beast_request&& msg) {
  http_request req;
  req.method = std::string(msg.method_string());
  if (auto err = split_target(msg.target(), req)) return err;
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
