// JSON of pools and calendars (PUT/GET /api/v1/pools/{name}, /calendars/{name});
// declared in proto/json.hpp. Strict like json.cpp: unknown fields and bad
// values are 400s naming the field.
#include <boost/json.hpp>

#include "proto/errors.hpp"
#include "proto/json.hpp"

namespace json = boost::json;

namespace aisched::proto {

namespace {

caf::error bad(const std::string& field, const std::string& why) {
  return make_error(errc::invalid_argument, field, field + ": " + why);
}

json::value time_or_null(unix_ms t) {
  if (t == 0) return nullptr;
  return json::string(format_rfc3339(t));
}

/// "YYYY-MM-DD" or "YYYY-MM-DD..YYYY-MM-DD" (both ends included).
caf::expected<day_range> read_range(const json::value& v, const std::string& field) {
  if (!v.is_string()) return bad(field, "expected \"YYYY-MM-DD\" or \"YYYY-MM-DD..YYYY-MM-DD\"");
  std::string_view s = v.get_string();
  auto dots = s.find("..");
  auto from = parse_day(s.substr(0, dots));
  auto to = dots == std::string_view::npos ? from : parse_day(s.substr(dots + 2));
  if (!from || !to)
    return bad(field, "'" + std::string(s) +
                          "' is not a date YYYY-MM-DD or a range YYYY-MM-DD..YYYY-MM-DD");
  if (*to < *from) return bad(field, "'" + std::string(s) + "' ends before it starts");
  return day_range{*from, *to};
}

}  // namespace

json::value to_json(const pool& p) {
  return json::object{{"name", p.name},
                      {"tenant", p.tenant},
                      {"size", p.size},
                      {"updated_at", time_or_null(p.updated_at)}};
}

json::value to_json(const calendar& c) {
  json::array dates;
  for (auto& r : c.days)
    dates.push_back(json::string(r.from == r.to ? format_day(r.from)
                                                : format_day(r.from) + ".." + format_day(r.to)));
  return json::object{{"name", c.name},
                      {"tenant", c.tenant},
                      {"description", c.description},
                      {"dates", std::move(dates)},
                      {"updated_at", time_or_null(c.updated_at)}};
}

caf::expected<pool> pool_from_json(const json::value& v, pool base) {
  if (!v.is_object()) return bad("body", "expected a JSON object");
  bool sized = false;
  for (auto& kv : v.get_object()) {
    std::string key(kv.key());
    if (key == "size") {
      auto& x = kv.value();
      if (!x.is_int64() && !x.is_uint64()) return bad("size", "expected an integer");
      auto n = x.is_int64() ? x.get_int64() : static_cast<int64_t>(x.get_uint64());
      if (n < 0 || n > static_cast<int64_t>(max_pool_size))
        return bad("size", "must be between 0 and " + std::to_string(max_pool_size));
      base.size = static_cast<uint32_t>(n);
      sized = true;
    } else if (key == "name" || key == "tenant" || key == "updated_at") {
      // Read-only (the path names the pool); accepted so a fetched document can be sent back.
    } else {
      return bad(key, "unknown field");
    }
  }
  if (!sized) return bad("size", "required");
  return base;
}

caf::expected<calendar> calendar_from_json(const json::value& v, calendar base) {
  if (!v.is_object()) return bad("body", "expected a JSON object");
  bool dated = false;
  for (auto& kv : v.get_object()) {
    std::string key(kv.key());
    auto& x = kv.value();
    if (key == "dates") {
      if (!x.is_array()) return bad("dates", "expected an array of dates");
      base.days.clear();
      size_t i = 0;
      for (auto& e : x.get_array()) {
        auto r = read_range(e, "dates[" + std::to_string(i++) + "]");
        if (!r) return r.error();
        base.days.push_back(*r);
      }
      dated = true;
    } else if (key == "description") {
      if (!x.is_string()) return bad("description", "expected a string");
      if (x.get_string().size() > 1000) return bad("description", "longer than 1000 characters");
      base.description = std::string(x.get_string());
    } else if (key == "name" || key == "tenant" || key == "updated_at") {
      // Read-only, as for pools.
    } else {
      return bad(key, "unknown field");
    }
  }
  if (!dated) return bad("dates", "required (an empty list excludes nothing)");
  if (auto err = normalize_calendar(base)) return err;
  return base;
}

}  // namespace aisched::proto
