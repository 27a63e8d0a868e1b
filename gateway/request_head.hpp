// From HTTP/1.1 bytes to the gateway's http_request: Beast's parser under the
// server's limits, the target split into a percent-decoded path and query, header
// names lower-cased. The server reads its sockets with these settings and this
// conversion; tests/fuzz/fuzz_http_head.cpp feeds parse_request arbitrary bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <caf/expected.hpp>

#include "common/http.hpp"
#include "proto/errors.hpp"

namespace aisched::gateway {

struct request_limits {
  size_t max_body_bytes = 1 << 20;
  size_t max_header_bytes = 16 * 1024;
};

using beast_request = boost::beast::http::request<boost::beast::http::string_body>;
using beast_parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

/// Applies `limits` to a fresh parser (the server does this before each read).
void limit(beast_parser& p, const request_limits& limits);

/// Decodes %XX escapes (Boost.URL); `plus_is_space` only for a query string,
/// where application/x-www-form-urlencoded makes '+' a space (in a path it is
/// a '+'). A '%' not followed by two hex digits is invalid_argument.
caf::expected<std::string> percent_decode(std::string_view s, bool plus_is_space);

/// Sets `req.path` (decoded, without the query) and `req.query` from `target`.
/// A key given twice keeps its last value; a pair without '=' has value "".
/// A malformed escape anywhere is invalid_argument (HTTP 400) naming it.
caf::error split_target(std::string_view target, http_request& req);

/// The gateway's request for a parsed Beast message (the peer is left empty),
/// or split_target's error.
caf::expected<http_request> to_request(beast_request&& msg);

/// Why the server refuses a read before routing: the status and error it answers.
struct read_refusal {
  unsigned status;
  errc code;
  const char* message;
};
read_refusal refusal_for(const boost::beast::error_code& ec);

/// Parses exactly one complete request from `bytes`; a malformed, oversized or
/// incomplete request is the error the server would answer (invalid_argument or
/// payload_too_large). Never throws.
caf::expected<http_request> parse_request(std::string_view bytes, const request_limits& limits);

}  // namespace aisched::gateway
