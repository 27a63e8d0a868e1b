// Pools and calendars: dates, names, normalization; see controls.hpp.
#include "proto/controls.hpp"

#include <algorithm>
#include <cstdio>

#include <date/date.h>

#include "proto/errors.hpp"

namespace aisched::proto {

bool calendar::excludes(civil_day d) const {
  // days is sorted by `from` and merged: the last range starting at or before d decides.
  auto i = std::upper_bound(days.begin(), days.end(), d,
                            [](civil_day x, const day_range& r) { return x < r.from; });
  return i != days.begin() && std::prev(i)->to >= d;
}

std::optional<civil_day> parse_day(std::string_view text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  int y = 0, m = 0, d = 0;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
  auto num = [&](size_t at, size_t n) {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) v = v * 10 + (text[i] - '0');
    return v;
  };
  y = num(0, 4);
  m = num(5, 2);
  d = num(8, 2);
  auto ymd = date::year{y} / date::month{static_cast<unsigned>(m)} /
             date::day{static_cast<unsigned>(d)};
  if (!ymd.ok()) return std::nullopt;  // 2026-02-30, month 13 ...
  return static_cast<civil_day>(date::sys_days{ymd}.time_since_epoch().count());
}

std::string format_day(civil_day d) {
  date::year_month_day ymd{date::sys_days{date::days{d}}};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return buf;
}

caf::error validate_control_name(const std::string& name, const std::string& field) {
  auto ok = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.';
  };
  if (name.empty() || name.size() > 64 || !std::all_of(name.begin(), name.end(), ok))
    return make_error(errc::invalid_argument, field,
                      field + ": '" + name + "' must be 1 to 64 of A-Z a-z 0-9 _ - .");
  return {};
}

caf::error normalize_calendar(calendar& c) {
  if (c.days.size() > max_calendar_ranges)
    return make_error(errc::invalid_argument, "dates",
                      "dates: at most " + std::to_string(max_calendar_ranges) + " entries");
  for (auto& r : c.days)
    if (r.to < r.from)
      return make_error(errc::invalid_argument, "dates",
                        "dates: " + format_day(r.from) + ".." + format_day(r.to) +
                            " ends before it starts");
  std::sort(c.days.begin(), c.days.end(),
            [](const day_range& a, const day_range& b) { return a.from < b.from; });
  std::vector<day_range> merged;
  for (auto& r : c.days) {
    if (!merged.empty() && r.from <= merged.back().to + 1)
      merged.back().to = std::max(merged.back().to, r.to);
    else
      merged.push_back(r);
  }
  c.days = std::move(merged);
  return {};
}

}  // namespace aisched::proto
