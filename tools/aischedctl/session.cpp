// One REST request with the error handling every subcommand shares; see session.hpp.
#include "tools/aischedctl/session.hpp"

#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include <boost/json.hpp>
#include <fstream>
#include <iostream>
#include <iterator>

namespace aisched::ctl {

namespace json = boost::json;

namespace {

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

std::string field_of(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

/// The `{"code", "message", "field"}` object of an error document, or null.
const json::object* error_of(const json::value& doc) {
  auto* e = doc.is_object() ? doc.get_object().if_contains("error") : nullptr;
  return e && e->is_object() ? &e->get_object() : nullptr;
}

/// The exit code of an error code (the HTTP status the gateway gives each, proto/errors).
int exit_code_for_error_code(const std::string& code) {
  if (code == "not_found") return exit_not_found;
  if (code == "invalid_argument" || code == "payload_too_large") return exit_invalid;
  if (code == "version_conflict" || code == "illegal_transition" || code == "already_exists" ||
      code == "has_dependents")
    return exit_conflict;
  if (code == "unauthenticated") return exit_unauthenticated;
  if (code == "forbidden") return exit_forbidden;
  return exit_server_error;
}

}  // namespace

int exit_code_for(unsigned http_status) {
  switch (http_status) {
    case 400:
    case 413:
      return exit_invalid;
    case 404:
      return exit_not_found;
    case 409:
      return exit_conflict;
    case 401:
      return exit_unauthenticated;
    case 403:
      return exit_forbidden;
    default:
      return exit_server_error;
  }
}

session::session(const global_options& options)
    : options_(options),
      http_(options.server, tools::http_client_options{options.token, to_ms(options.timeout_s)}),
      json_output_(options.output == "json") {}

int session::request(const std::string& method, const std::string& target, const std::string& body,
                     json::value& out) {
  auto reply = http_.call(method, target, body);
  if (reply.status < 200 || reply.status >= 300) return fail(reply);
  out = nullptr;
  if (reply.body.empty()) return exit_ok;
  boost::system::error_code ec;
  out = json::parse(reply.body, ec);
  if (ec)
    return report_error(exit_server_error, "bad_response",
                        "the server answered " + std::to_string(reply.status) +
                            " with a body that is not JSON: " + reply.body.substr(0, 200));
  return exit_ok;
}

int session::fail(const tools::http_reply& reply) const {
  if (reply.status == 0)
    return report_error(exit_server_error, "unreachable",
                        "cannot reach " + http_.base() + ": " + reply.body);
  auto code = exit_code_for(reply.status);
  boost::system::error_code ec;
  auto doc = json::parse(reply.body, ec);
  if (auto* e = ec ? nullptr : error_of(doc))
    return report_error(code, field_of(*e, "code"), field_of(*e, "message"), field_of(*e, "field"));
  // Not our error document (a proxy, an old server): show the status and body.
  return report_error(code, "http_" + std::to_string(reply.status), reply.body.substr(0, 500));
}

int report_error_document(const json::value& doc) {
  auto* e = error_of(doc);
  if (!e)
    return report_error(exit_server_error, "bad_response", json::serialize(doc).substr(0, 500));
  auto code = field_of(*e, "code");
  return report_error(exit_code_for_error_code(code), code, field_of(*e, "message"),
                      field_of(*e, "field"));
}

int report_error(int code_for_exit, const std::string& code, const std::string& message,
                 const std::string& field) {
  std::cerr << "error: " << code << ": " << message;
  if (!field.empty()) std::cerr << " (field: " << field << ")";
  std::cerr << '\n';
  return code_for_exit;
}

int read_document(const std::string& path, json::value& out) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return report_error(exit_usage, "usage", "cannot read " + path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  boost::system::error_code ec;
  out = json::parse(text, ec);
  if (ec)
    return report_error(exit_invalid, "invalid_argument",
                        path + ": malformed JSON: " + ec.message(), "body");
  if (!out.is_object())
    return report_error(exit_invalid, "invalid_argument", path + ": expected a JSON object",
                        "body");
  return exit_ok;
}

std::string url_encode(const std::string& value) {
  return boost::urls::encode(value, boost::urls::unreserved_chars);
}

}  // namespace aisched::ctl
