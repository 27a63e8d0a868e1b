// Event templating; see substitute.hpp.
#include "actors/router/substitute.hpp"

#include <cstdio>

#include <boost/json.hpp>

namespace aisched::router {

namespace json = boost::json;

namespace {

std::string escape(const std::string& v, landing where) {
  std::string out;
  switch (where) {
    case landing::shell:
      out = "'";
      for (char c : v) {
        if (c == '\'') out += "'\\''";
        else out += c;
      }
      out += "'";
      return out;
    case landing::url:
      for (unsigned char c : v) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
          out += static_cast<char>(c);
        } else {
          char buf[4];
          std::snprintf(buf, sizeof buf, "%%%02X", c);
          out += buf;
        }
      }
      return out;
    case landing::json: {
      auto quoted = json::serialize(json::value(json::string(v)));
      return quoted.substr(1, quoted.size() - 2);
    }
    case landing::text:
      for (char c : v)
        if (c != '\r' && c != '\n') out += c;  // no header injection
      return out;
  }
  return out;
}

std::string lookup(const json::value* payload, std::string_view path) {
  const json::value* cur = payload;
  while (cur && !path.empty()) {
    auto dot = path.find('.');
    auto key = path.substr(0, dot);
    if (!cur->is_object()) return {};
    auto* next = cur->as_object().if_contains(json::string_view(key.data(), key.size()));
    cur = next;
    path = dot == std::string_view::npos ? std::string_view{} : path.substr(dot + 1);
  }
  if (!cur || cur->is_null()) return {};
  if (cur->is_string()) return std::string(cur->as_string());
  return json::serialize(*cur);
}

}  // namespace

std::string substitute(std::string_view text, const std::string& event_name,
                       const std::string& payload_json, landing where) {
  if (text.find("{{") == std::string_view::npos) return std::string(text);
  boost::system::error_code ec;
  auto payload = json::parse(payload_json, ec);
  const json::value* root = ec ? nullptr : &payload;
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    auto open = text.find("{{", pos);
    if (open == std::string_view::npos) break;
    auto close = text.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    out.append(text.substr(pos, open - pos));
    auto expr = text.substr(open + 2, close - open - 2);
    while (!expr.empty() && expr.front() == ' ') expr.remove_prefix(1);
    while (!expr.empty() && expr.back() == ' ') expr.remove_suffix(1);
    if (!expr.empty() && expr.front() == '.') expr.remove_prefix(1);
    if (expr == "event.name") {
      out += escape(event_name, where);
    } else if (expr.substr(0, 14) == "event.payload.") {
      out += escape(lookup(root, expr.substr(14)), where);
    } else {
      out.append(text.substr(open, close + 2 - open));  // not ours: leave it
    }
    pos = close + 2;
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace aisched::router
