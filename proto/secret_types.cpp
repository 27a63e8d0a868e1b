// Secret names and `{{secret.NAME}}` placeholders; see secret_types.hpp.
#include "proto/secret_types.hpp"

#include <cstdio>

namespace aisched::proto {

namespace {

constexpr std::string_view open_tag = "{{secret.";
constexpr std::string_view close_tag = "}}";

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == '-';
}

/// Calls `f(name, begin, end)` for each well-formed placeholder of `text`.
template <class F>
void each_ref(std::string_view text, F f) {
  size_t at = 0;
  while ((at = text.find(open_tag, at)) != std::string_view::npos) {
    auto name_at = at + open_tag.size();
    auto end = text.find(close_tag, name_at);
    if (end == std::string_view::npos) return;
    std::string name(text.substr(name_at, end - name_at));
    if (valid_secret_name(name)) {
      f(name, at, end + close_tag.size());
      at = end + close_tag.size();
    } else {
      at = name_at;
    }
  }
}

void append_json_escaped(std::string& out, std::string_view v) {
  for (char c : v) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
}

}  // namespace

bool valid_secret_name(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name)
    if (!name_char(c)) return false;
  return true;
}

std::set<std::string> secret_refs(std::string_view text) {
  std::set<std::string> out;
  each_ref(text, [&](const std::string& name, size_t, size_t) { out.insert(name); });
  return out;
}

std::string fill_secrets(std::string_view text, const std::map<std::string, std::string>& values,
                         bool json_escape) {
  std::string out;
  size_t copied = 0;
  each_ref(text, [&](const std::string& name, size_t begin, size_t end) {
    auto v = values.find(name);
    if (v == values.end()) return;
    out.append(text.substr(copied, begin - copied));
    if (json_escape) append_json_escaped(out, v->second);
    else out += v->second;
    copied = end;
  });
  out.append(text.substr(copied));
  return out;
}

}  // namespace aisched::proto
