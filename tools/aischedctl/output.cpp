// Tables, field lists and indented JSON; see output.hpp.
#include "tools/aischedctl/output.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <ostream>

namespace aisched::ctl {

namespace json = boost::json;

namespace {

void print_row(std::ostream& out, const std::vector<std::string>& row,
               const std::vector<size_t>& widths) {
  std::string line;
  for (size_t i = 0; i < row.size(); ++i) {
    line += row[i];
    // No padding after the last column: lines carry no trailing blanks.
    if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
  }
  out << line << '\n';
}

void print_indented(std::ostream& out, const json::value& v, size_t depth) {
  auto pad = [&](size_t d) { return std::string(2 * d, ' '); };
  if (v.is_object() && !v.get_object().empty()) {
    out << "{\n";
    size_t i = 0;
    for (auto& kv : v.get_object()) {
      out << pad(depth + 1) << json::serialize(json::string(kv.key())) << ": ";
      print_indented(out, kv.value(), depth + 1);
      out << (++i < v.get_object().size() ? ",\n" : "\n");
    }
    out << pad(depth) << '}';
  } else if (v.is_array() && !v.get_array().empty()) {
    out << "[\n";
    size_t i = 0;
    for (auto& x : v.get_array()) {
      out << pad(depth + 1);
      print_indented(out, x, depth + 1);
      out << (++i < v.get_array().size() ? ",\n" : "\n");
    }
    out << pad(depth) << ']';
  } else {
    out << json::serialize(v);
  }
}

std::string text_of(const json::value& v) {
  if (v.is_null() || (v.is_string() && v.get_string().empty())) return "-";
  if (v.is_string()) return std::string(v.get_string());
  if (v.is_double()) {
    // "2" and "0.85", not JSON's "2E0".
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v.get_double());
    return buf;
  }
  if (v.is_object()) {
    std::string s;
    for (auto& kv : v.get_object())
      s += (s.empty() ? "" : ",") + std::string(kv.key()) + "=" + text_of(kv.value());
    return s.empty() ? "-" : s;
  }
  if (v.is_array()) {
    std::string s;
    for (auto& x : v.get_array()) s += (s.empty() ? "" : ",") + text_of(x);
    return s.empty() ? "-" : s;
  }
  return json::serialize(v);
}

}  // namespace

void table::print(std::ostream& out) const {
  std::vector<size_t> widths(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) widths[i] = header_[i].size();
  for (auto& row : rows_)
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());
  print_row(out, header_, widths);
  for (auto& row : rows_) print_row(out, row, widths);
}

void print_json(std::ostream& out, const json::value& v) {
  print_indented(out, v, 0);
  out << '\n';
}

std::string cell(const json::value& v, const char* key) {
  auto* field = v.is_object() ? v.get_object().if_contains(key) : nullptr;
  return field ? text_of(*field) : "-";
}

void print_fields(std::ostream& out, const json::value& v) {
  if (!v.is_object()) {
    out << text_of(v) << '\n';
    return;
  }
  size_t width = 0;
  for (auto& kv : v.get_object()) width = std::max(width, kv.key().size());
  for (auto& kv : v.get_object())
    out << std::string(kv.key()) << std::string(width - kv.key().size() + 2, ' ')
        << text_of(kv.value()) << '\n';
}

}  // namespace aisched::ctl
