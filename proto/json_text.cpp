// JSON text for the API's answers, webhooks and streams; see proto/json.hpp
// (to_text). Boost.JSON writes every double in exponent form (`1000.0` as `1E3`),
// which readers and tools take for an error; this writer differs only there.
#include <charconv>
#include <cmath>
#include <string>

#include <boost/json.hpp>

#include "proto/json.hpp"

namespace json = boost::json;

namespace aisched::proto {

namespace {

void write_double(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  // Integral and exactly representable as an integer: `2`, not `2.0` or `2E0`.
  if (d == std::trunc(d) && std::fabs(d) < 9.0e15) {
    out += std::to_string(static_cast<int64_t>(d));
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d);  // shortest form that reads back as d
  out.append(buf, r.ptr);
}

void write(std::string& out, const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: out += "null"; return;
    case json::kind::bool_: out += v.get_bool() ? "true" : "false"; return;
    case json::kind::int64: out += std::to_string(v.get_int64()); return;
    case json::kind::uint64: out += std::to_string(v.get_uint64()); return;
    case json::kind::double_: write_double(out, v.get_double()); return;
    case json::kind::string: out += json::serialize(v.get_string()); return;
    case json::kind::array: {
      out += '[';
      bool first = true;
      for (auto& x : v.get_array()) {
        if (!first) out += ',';
        first = false;
        write(out, x);
      }
      out += ']';
      return;
    }
    case json::kind::object: {
      out += '{';
      bool first = true;
      for (auto& kv : v.get_object()) {
        if (!first) out += ',';
        first = false;
        out += json::serialize(kv.key());
        out += ':';
        write(out, kv.value());
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string to_text(const json::value& v) {
  std::string out;
  write(out, v);
  return out;
}

}  // namespace aisched::proto
