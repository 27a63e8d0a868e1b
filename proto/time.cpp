// Parsing and formatting of instants and durations; see time.hpp.
#include "proto/time.hpp"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <limits>

#include <date/date.h>

namespace aisched {

std::string format_rfc3339(unix_ms t) {
  using namespace std::chrono;
  date::sys_time<milliseconds> tp{milliseconds{t}};
  auto day = date::floor<date::days>(tp);
  date::year_month_day ymd{day};
  date::hh_mm_ss<milliseconds> hms{tp - day};
  char buf[40];
  auto ms = hms.subseconds().count();
  if (ms != 0) {
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", int(ymd.year()),
                  unsigned(ymd.month()), unsigned(ymd.day()), int(hms.hours().count()),
                  int(hms.minutes().count()), int(hms.seconds().count()), int(ms));
  } else {
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", int(ymd.year()),
                  unsigned(ymd.month()), unsigned(ymd.day()), int(hms.hours().count()),
                  int(hms.minutes().count()), int(hms.seconds().count()));
  }
  return buf;
}

namespace {

// Reads exactly `n` digits at `pos`; advances `pos`.
bool read_digits(std::string_view s, size_t& pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  pos += n;
  out = v;
  return true;
}

bool expect_char(std::string_view s, size_t& pos, char c) {
  if (pos >= s.size() || (s[pos] != c && std::toupper(static_cast<unsigned char>(s[pos])) != c))
    return false;
  ++pos;
  return true;
}

}  // namespace

std::optional<unix_ms> parse_rfc3339(std::string_view s) {
  size_t pos = 0;
  int y, mo, d, h, mi, sec;
  if (!read_digits(s, pos, 4, y) || !expect_char(s, pos, '-') || !read_digits(s, pos, 2, mo) ||
      !expect_char(s, pos, '-') || !read_digits(s, pos, 2, d) || !expect_char(s, pos, 'T') ||
      !read_digits(s, pos, 2, h) || !expect_char(s, pos, ':') || !read_digits(s, pos, 2, mi) ||
      !expect_char(s, pos, ':') || !read_digits(s, pos, 2, sec))
    return std::nullopt;
  int ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      if (digits < 3) ms = ms * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (int i = digits; i < 3; ++i) ms *= 10;
  }
  int offset_min = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int sign = s[pos] == '+' ? 1 : -1;
    ++pos;
    int oh, om;
    if (!read_digits(s, pos, 2, oh) || !expect_char(s, pos, ':') || !read_digits(s, pos, 2, om))
      return std::nullopt;
    if (oh > 23 || om > 59) return std::nullopt;
    offset_min = sign * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 59) return std::nullopt;
  date::year_month_day ymd{date::year{y}, date::month{unsigned(mo)}, date::day{unsigned(d)}};
  if (!ymd.ok()) return std::nullopt;
  using namespace std::chrono;
  auto days = date::sys_days{ymd}.time_since_epoch();
  auto total = duration_cast<milliseconds>(days) + hours{h} + minutes{mi} + seconds{sec} +
               milliseconds{ms} - minutes{offset_min};
  return total.count();
}

std::string format_duration(duration_ms d) {
  if (d == 0) return "0s";
  std::string out;
  if (d < 0) {
    out = "-";
    d = -d;
  }
  auto h = d / 3'600'000;
  auto m = (d / 60'000) % 60;
  auto s = (d / 1000) % 60;
  auto ms = d % 1000;
  if (h) out += std::to_string(h) + "h";
  if (m) out += std::to_string(m) + "m";
  if (s) out += std::to_string(s) + "s";
  if (ms) out += std::to_string(ms) + "ms";
  return out;
}

std::optional<duration_ms> parse_duration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s == "0") return 0;
  size_t pos = 0;
  duration_ms total = 0;
  constexpr auto max = std::numeric_limits<duration_ms>::max();
  while (pos < s.size()) {
    if (!std::isdigit(static_cast<unsigned char>(s[pos]))) return std::nullopt;
    int64_t n = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      if (n > (max - 9) / 10) return std::nullopt;
      n = n * 10 + (s[pos] - '0');
      ++pos;
    }
    int64_t unit;
    if (s.substr(pos, 2) == "ms") {
      unit = 1;
      pos += 2;
    } else if (pos < s.size() && s[pos] == 'h') {
      unit = 3'600'000;
      ++pos;
    } else if (pos < s.size() && s[pos] == 'm') {
      unit = 60'000;
      ++pos;
    } else if (pos < s.size() && s[pos] == 's') {
      unit = 1000;
      ++pos;
    } else {
      return std::nullopt;
    }
    if (n > (max - total) / unit) return std::nullopt;
    total += n * unit;
  }
  return total;
}

}  // namespace aisched
