// Parsing of schedule expressions and the next-fire search; see schedule.hpp.
// A cron expression becomes bitsets (one per field) plus the day-of-month/day-of-week extras.
// The search walks local civil time field by field (month, day, hour, minute, second), jumping
// to the next allowed value of each, then maps the local result to an instant with the DST
// rules of the header. Zone data comes from date/tz (system tzdata); nothing here throws.
#include "actors/trigger/schedule.hpp"

#include <date/date.h>
#include <date/tz.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>

#include "proto/errors.hpp"

namespace aisched::trigger {

namespace detail {

struct cron_spec {
  uint64_t seconds = 0;              // bits 0-59
  uint64_t minutes = 0;              // bits 0-59
  uint64_t hours = 0;                // bits 0-23
  uint64_t months = 0;               // bits 1-12
  uint64_t dom = 0;                  // bits 1-31: plain day-of-month values
  uint32_t dom_last = 0;             // bit n: `L-n` (n = 0 is `L`)
  uint32_t dom_weekday = 0;          // bit n: `nW`
  bool dom_last_weekday = false;     // `LW`
  uint8_t dow = 0;                   // bits 0-6, Sunday = 0
  std::array<uint8_t, 7> dow_nth{};  // [weekday] bit n: `weekday#n`
  uint8_t dow_last = 0;              // bit d: `dL`
  // The field is literally `*` or `?`: it does not restrict the day, so the other day field
  // alone decides. Anything else (`*/2` included) restricts, and restricted fields combine
  // with OR.
  bool dom_any = false;
  bool dow_any = false;
  // [weekday of the 1st] the days 1-31 whose weekday is in `dow`; precomputed so a month's
  // day-of-week mask is one lookup.
  std::array<uint64_t, 7> dow_days{};
  const date::time_zone* zone = nullptr;  // nullptr means UTC

  uint64_t day_mask(int y, unsigned m) const;
};

namespace {

// The weekday (Mon-Fri) nearest to day `n` of a month with `last` days whose 1st is weekday
// `first_wd` (0 = Sunday), without leaving the month (Quartz semantics).
unsigned nearest_weekday(unsigned n, unsigned last, unsigned first_wd) {
  const unsigned wd = (first_wd + n - 1) % 7;
  if (wd == 6) return n > 1 ? n - 1 : n + 2;     // Saturday: Friday, or Monday on the 1st
  if (wd == 0) return n < last ? n + 1 : n - 2;  // Sunday: Monday, or Friday on the last day
  return n;
}

}  // namespace

uint64_t cron_spec::day_mask(int y, unsigned m) const {
  const date::year_month ym{date::year{y}, date::month{m}};
  const unsigned last = unsigned((ym / date::last).day());
  const unsigned first_wd = date::weekday{date::sys_days{ym / 1}}.c_encoding();
  const uint64_t valid = ((uint64_t{1} << (last + 1)) - 1) & ~uint64_t{1};  // days 1..last
  if (dom_any && dow_any) return valid;
  uint64_t by_dom = dom & valid;
  for (uint32_t bits = dom_last; bits != 0; bits &= bits - 1) {
    const unsigned n = __builtin_ctz(bits);
    if (n < last) by_dom |= uint64_t{1} << (last - n);
  }
  for (uint32_t bits = dom_weekday; bits != 0; bits &= bits - 1) {
    const unsigned n = __builtin_ctz(bits);
    if (n <= last) by_dom |= uint64_t{1} << nearest_weekday(n, last, first_wd);
  }
  if (dom_last_weekday) by_dom |= uint64_t{1} << nearest_weekday(last, last, first_wd);
  if (dow_any) return by_dom;
  uint64_t by_dow = dow_days[first_wd] & valid;
  const unsigned last_wd = (first_wd + last - 1) % 7;
  for (unsigned w = 0; w < 7; ++w) {
    const unsigned first = 1 + (w + 7 - first_wd) % 7;
    for (unsigned bits = dow_nth[w]; bits != 0; bits &= bits - 1) {
      const unsigned d = first + 7 * (__builtin_ctz(bits) - 1);
      if (d <= last) by_dow |= uint64_t{1} << d;
    }
    if (dow_last & (1u << w)) by_dow |= uint64_t{1} << (last - (last_wd + 7 - w) % 7);
  }
  if (dom_any) return by_dow;
  // Both restricted: a day matching either fires (unlike Vixie cron, `*/2` restricts too).
  return by_dom | by_dow;
}

}  // namespace detail

namespace {

using detail::cron_spec;
using std::chrono::seconds;

constexpr int64_t min_seconds = -62135596800;  // 0001-01-01T00:00:00Z
constexpr int64_t max_seconds = 221845392000;  // 9000-01-01T00:00:00Z
// Every Gregorian year type (leap or not, weekday of Jan 1) recurs within 40 years, so a
// day pattern that does not match within 41 years never matches.
constexpr int horizon_years = 41;
constexpr duration_ms min_every = 100;

caf::error schedule_error(std::string message) {
  return make_error(errc::invalid_argument, "schedule", std::move(message));
}

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

char upper(char c) { return c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c; }

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Parses digits, saturating at a value larger than any field accepts.
int to_int(std::string_view digits) {
  int64_t n = 0;
  for (char c : digits) n = std::min<int64_t>(n * 10 + (c - '0'), 1'000'000'000);
  return int(n);
}

std::string quoted(std::string_view s) { return "'" + std::string{s} + "'"; }

// -- cron field parsing -----------------------------------------------------------------

enum field_index { f_second, f_minute, f_hour, f_dom, f_month, f_dow };

const char* const month_names[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                   "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
const char* const day_names[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

struct field_def {
  const char* name;
  int min, max;  // accepted values
  int star_max;  // upper end of `*` and of `a/step` (6 for day-of-week: 7 is an alias)
  const char* const* names;
  int name_count;
  int first_name_value;
};

constexpr field_def field_defs[] = {
    {"second", 0, 59, 59, nullptr, 0, 0},     {"minute", 0, 59, 59, nullptr, 0, 0},
    {"hour", 0, 23, 23, nullptr, 0, 0},       {"day-of-month", 1, 31, 31, nullptr, 0, 0},
    {"month", 1, 12, 12, month_names, 12, 1}, {"day-of-week", 0, 7, 6, day_names, 7, 0},
};

// Parses one field's text into a bitset (and, for the day fields, into the extras of `spec`).
class field_parser {
 public:
  field_parser(field_index index, cron_spec& spec)
      : index_(index), def_(field_defs[index]), spec_(spec) {}

  caf::error parse(std::string_view text, uint64_t& bits) {
    for (size_t pos = 0;;) {
      const size_t comma = text.find(',', pos);
      if (auto err = item(text.substr(pos, comma - pos), bits)) return err;
      if (comma == std::string_view::npos) return {};
      pos = comma + 1;
    }
  }

 private:
  caf::error fail(const std::string& what) const {
    return schedule_error("cron field '" + std::string{def_.name} + "': " + what);
  }

  caf::error value(std::string_view token, std::string_view item, int& out) const {
    if (token.empty()) return fail("missing value in " + quoted(item));
    if (all_digits(token)) {
      out = to_int(token);
      if (out < def_.min || out > def_.max)
        return fail("value " + std::string{token} + " out of range " + std::to_string(def_.min) +
                    "-" + std::to_string(def_.max));
      return {};
    }
    if (def_.names == nullptr) return fail("invalid value " + quoted(token));
    if (token.size() == 3) {
      for (int i = 0; i < def_.name_count; ++i) {
        const char* name = def_.names[i];
        if (upper(token[0]) == name[0] && upper(token[1]) == name[1] &&
            upper(token[2]) == name[2]) {
          out = def_.first_name_value + i;
          return {};
        }
      }
    }
    return fail("unknown name " + quoted(token));
  }

  // `L`, `L-n`, `LW`, `nW`; sets `handled` when `it` is one of them.
  caf::error dom_extra(std::string_view it, bool& handled) {
    handled = true;
    const bool starts_l = upper(it[0]) == 'L';
    if (it.size() == 1 && starts_l) {
      spec_.dom_last |= 1u;
    } else if (it.size() == 2 && starts_l && upper(it[1]) == 'W') {
      spec_.dom_last_weekday = true;
    } else if (starts_l && it[1] == '-') {
      const auto n = it.substr(2);
      if (!all_digits(n)) return fail("invalid offset " + quoted(n) + " in " + quoted(it));
      if (to_int(n) > 30)
        return fail("offset " + std::string{n} + " in " + quoted(it) + " out of range 0-30");
      spec_.dom_last |= 1u << to_int(n);
    } else if (it.size() > 1 && upper(it.back()) == 'W') {
      int n = 0;
      if (auto err = value(it.substr(0, it.size() - 1), it, n)) return err;
      spec_.dom_weekday |= 1u << n;
    } else {
      handled = false;
    }
    return {};
  }

  // `d#n` and `dL`; sets `handled` when `it` is one of them.
  caf::error dow_extra(std::string_view it, bool& handled) {
    handled = true;
    int d = 0;
    if (const size_t hash = it.find('#'); hash != std::string_view::npos) {
      if (auto err = value(it.substr(0, hash), it, d)) return err;
      const auto n = it.substr(hash + 1);
      if (!all_digits(n) || to_int(n) < 1 || to_int(n) > 5)
        return fail("occurrence " + quoted(n) + " in " + quoted(it) + " must be 1-5");
      spec_.dow_nth[d % 7] |= uint8_t(1u << to_int(n));
    } else if (it.size() == 1 && upper(it[0]) == 'L') {
      return fail("bare 'L' is not supported; use dL, e.g. 5L for the last Friday");
    } else if (it.size() > 1 && upper(it.back()) == 'L') {
      if (auto err = value(it.substr(0, it.size() - 1), it, d)) return err;
      spec_.dow_last |= uint8_t(1u << (d % 7));
    } else {
      handled = false;
    }
    return {};
  }

  caf::error item(std::string_view it, uint64_t& bits) {
    if (it.empty()) return fail("empty list element");
    bool handled = false;
    if (index_ == f_dom) {
      if (auto err = dom_extra(it, handled)) return err;
    } else if (index_ == f_dow) {
      if (auto err = dow_extra(it, handled)) return err;
    }
    if (handled) return {};
    const size_t slash = it.find('/');
    const auto base = it.substr(0, slash);
    int step = 1;
    if (slash != std::string_view::npos) {
      const auto s = it.substr(slash + 1);
      if (!all_digits(s)) return fail("invalid step " + quoted(s) + " in " + quoted(it));
      step = to_int(s);
      if (step == 0) return fail("step 0 in " + quoted(it) + " is not allowed");
    }
    int lo = def_.min;
    int hi = def_.star_max;
    if (base == "*" || base == "?") {
      if (base == "?" && index_ != f_dom && index_ != f_dow)
        return fail("'?' is only allowed in day-of-month and day-of-week");
    } else if (const size_t dash = base.find('-'); dash != std::string_view::npos) {
      if (auto err = value(base.substr(0, dash), it, lo)) return err;
      if (auto err = value(base.substr(dash + 1), it, hi)) return err;
      if (index_ == f_dow && hi == 0 && lo > 0) hi = 7;  // FRI-SUN
      if (lo > hi) return fail("range " + quoted(base) + " is reversed");
    } else {
      if (auto err = value(base, it, lo)) return err;
      hi = slash == std::string_view::npos ? lo : std::max(lo, def_.star_max);
    }
    for (int v = lo; v <= hi; v += step) bits |= uint64_t{1} << v;
    return {};
  }

  field_index index_;
  const field_def& def_;
  cron_spec& spec_;
};

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < s.size()) {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
    size_t end = pos;
    while (end < s.size() && s[end] != ' ' && s[end] != '\t') ++end;
    if (end > pos) out.push_back(s.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

caf::error parse_cron(const std::vector<std::string_view>& fields, cron_spec& spec) {
  if (fields.size() != 5 && fields.size() != 6)
    return schedule_error("expected 5 or 6 fields, got " + std::to_string(fields.size()));
  const size_t skip = fields.size() == 5 ? 1 : 0;  // 5 fields: second is 0
  uint64_t dow = 0;
  uint64_t* targets[] = {&spec.seconds, &spec.minutes, &spec.hours, &spec.dom, &spec.months, &dow};
  if (skip) spec.seconds = 1;
  for (size_t i = skip; i < 6; ++i) {
    field_parser parser{field_index(i), spec};
    if (auto err = parser.parse(fields[i - skip], *targets[i])) return err;
  }
  const auto unrestricted = [](std::string_view f) { return f == "*" || f == "?"; };
  spec.dom_any = unrestricted(fields[3 - skip]);
  spec.dow_any = unrestricted(fields[5 - skip]);
  spec.dow = uint8_t((dow | (dow >> 7)) & 0x7f);  // 7 is Sunday
  for (unsigned first_wd = 0; first_wd < 7; ++first_wd)
    for (unsigned d = 1; d <= 31; ++d)
      if (spec.dow & (1u << ((first_wd + d - 1) % 7))) spec.dow_days[first_wd] |= uint64_t{1} << d;
  return {};
}

// -- next-fire search ---------------------------------------------------------------------

struct civil {
  int y;
  unsigned mo, d, h, mi, s;
};

civil to_civil(int64_t secs) {
  const date::sys_seconds tp{seconds{secs}};
  const auto day = date::floor<date::days>(tp);
  const date::year_month_day ymd{day};
  const auto tod = unsigned((tp - day).count());
  return {int(ymd.year()), unsigned(ymd.month()), unsigned(ymd.day()),
          tod / 3600,      tod / 60 % 60,         tod % 60};
}

int64_t from_civil(const civil& c) {
  const date::sys_days day{date::year{c.y} / date::month{c.mo} / date::day{c.d}};
  return int64_t{day.time_since_epoch().count()} * 86400 + c.h * 3600 + c.mi * 60 + c.s;
}

// The first civil time >= `c` matching `sp`, ignoring zones; nullopt past the horizon.
std::optional<civil> next_match(const cron_spec& sp, civil c) {
  const int last_year = c.y + horizon_years;
  int mask_y = 0;
  unsigned mask_mo = 0;  // no month is 0: the cache starts empty
  uint64_t mask = 0;
  while (c.y <= last_year) {
    const uint64_t months = sp.months >> c.mo;
    if (months == 0) {
      c = {c.y + 1, 1, 1, 0, 0, 0};
      continue;
    }
    if (unsigned mo = c.mo + __builtin_ctzll(months); mo != c.mo) c = {c.y, mo, 1, 0, 0, 0};
    if (mask_y != c.y || mask_mo != c.mo) {
      mask = sp.day_mask(c.y, c.mo);
      mask_y = c.y;
      mask_mo = c.mo;
    }
    const uint64_t days = mask >> c.d;  // c.d <= 32
    if (days == 0) {
      c = c.mo == 12 ? civil{c.y + 1, 1, 1, 0, 0, 0} : civil{c.y, c.mo + 1, 1, 0, 0, 0};
      continue;
    }
    if (unsigned d = c.d + __builtin_ctzll(days); d != c.d) c = {c.y, c.mo, d, 0, 0, 0};
    const uint64_t hours = sp.hours >> c.h;
    if (hours == 0) {
      c = {c.y, c.mo, c.d + 1, 0, 0, 0};
      continue;
    }
    if (unsigned h = c.h + __builtin_ctzll(hours); h != c.h) c = {c.y, c.mo, c.d, h, 0, 0};
    const uint64_t minutes = sp.minutes >> c.mi;
    if (minutes == 0) {
      c = {c.y, c.mo, c.d, c.h + 1, 0, 0};
      continue;
    }
    if (unsigned mi = c.mi + __builtin_ctzll(minutes); mi != c.mi) c = {c.y, c.mo, c.d, c.h, mi, 0};
    const uint64_t secs = sp.seconds >> c.s;
    if (secs == 0) {
      c = {c.y, c.mo, c.d, c.h, c.mi + 1, 0};
      continue;
    }
    c.s += __builtin_ctzll(secs);
    return c;
  }
  return std::nullopt;
}

// The instant at which local time `local` fires: its first occurrence, or the end of the
// gap when it does not exist. `hint` is the zone period of the search start; most results
// fall inside it and need no second lookup.
int64_t resolve(const date::time_zone& zone, int64_t local, const date::sys_info& hint) {
  const int64_t candidate = local - hint.offset.count();
  if (candidate >= hint.begin.time_since_epoch().count() &&
      candidate < hint.end.time_since_epoch().count())
    return candidate;
  const auto info = zone.get_info(date::local_seconds{seconds{local}});
  if (info.result == date::local_info::nonexistent)
    return info.second.begin.time_since_epoch().count();
  return local - info.first.offset.count();  // unique, or the earlier of two
}

// Compiled specs are shared: tasks with the same fields in the same zone hold
// one (200 000 daily crons hold one spec, not 200 000: an idle task's memory,
// #17). The table holds weak references and drops the expired ones whenever
// it has doubled since its last sweep, so it stays within twice the specs in use.
std::shared_ptr<const cron_spec> intern(std::string key, std::shared_ptr<const cron_spec> spec) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::weak_ptr<const cron_spec>> table;
  static size_t swept_at = 1024;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = table[key];
  if (auto live = slot.lock()) return live;
  slot = spec;
  if (table.size() > 2 * swept_at) {
    for (auto i = table.begin(); i != table.end();)
      i = i->second.expired() ? table.erase(i) : std::next(i);
    swept_at = std::max<size_t>(1024, table.size());
  }
  return spec;
}

std::optional<int64_t> next_cron(const cron_spec& sp, int64_t t0) {
  if (sp.zone == nullptr) {
    const auto c = next_match(sp, to_civil(t0));
    return c ? std::optional<int64_t>{from_civil(*c)} : std::nullopt;
  }
  const auto& zone = *sp.zone;
  const auto info = zone.get_info(date::sys_seconds{seconds{t0}});
  int64_t local = t0 + info.offset.count();
  const int64_t since_transition = t0 - info.begin.time_since_epoch().count();
  const auto offset_before = since_transition == 0
                                 ? zone.get_info(date::sys_seconds{seconds{t0 - 1}}).offset
                                 : info.offset;
  if (offset_before < info.offset) {
    // t0 ends a spring-forward gap: the skipped local times fire at t0 too.
    local = t0 + offset_before.count();
  } else if (since_transition < 86400) {
    // In the second pass of a fall-back overlap, the wall-clock times still ahead in that
    // pass already fired on the first pass: start after the overlap.
    const auto li = zone.get_info(date::local_seconds{seconds{local}});
    if (li.result == date::local_info::ambiguous &&
        t0 >= li.second.begin.time_since_epoch().count())
      local = li.first.end.time_since_epoch().count() + li.first.offset.count();
  }
  // The local-to-instant mapping is monotone, so the first matching local time is the answer;
  // the loop only guards against tzdata that would break that.
  for (;;) {
    const auto c = next_match(sp, to_civil(local));
    if (!c) return std::nullopt;
    const int64_t found = from_civil(*c);
    const int64_t at = resolve(zone, found, info);
    if (at >= t0) return at;
    local = found + 1;
  }
}

}  // namespace

// -- schedule -------------------------------------------------------------------------------

caf::expected<schedule> schedule::parse(std::string_view expr, std::string_view tz) {
  const date::time_zone* zone = nullptr;
  if (!tz.empty() && tz != "UTC") {
    try {
      zone = date::locate_zone(tz);
    } catch (...) {  // unknown zone, or tzdata missing: never let it escape
      return make_error(errc::invalid_argument, "timezone", "unknown time zone " + quoted(tz));
    }
  }
  auto tokens = split_ws(expr);
  if (tokens.empty()) return schedule_error("empty schedule expression");
  if (tokens[0][0] == '@') {
    std::string name;
    for (char c : tokens[0]) name += char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (name == "@every") {
      if (tokens.size() != 2)
        return schedule_error("@every takes one duration, e.g. '@every 1h30m'");
      const auto d = parse_duration(tokens[1]);
      if (!d)
        return schedule_error("@every: invalid duration " + quoted(tokens[1]) +
                              " (use e.g. 90s, 1h30m, 500ms)");
      if (*d < min_every)
        return schedule_error("@every: interval " + quoted(tokens[1]) + " is below 100ms");
      schedule out;
      out.kind_ = kind::every;
      out.value_ = *d;
      return out;
    }
    static constexpr std::pair<const char*, const char*> macros[] = {
        {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
        {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
        {"@hourly", "0 * * * *"}};
    const char* cron = nullptr;
    for (const auto& [macro, text] : macros)
      if (name == macro) cron = text;
    if (cron == nullptr)
      return schedule_error("unknown macro " + quoted(tokens[0]) +
                            " (known: @yearly @annually @monthly @weekly @daily @midnight "
                            "@hourly @every <duration>)");
    if (tokens.size() != 1)
      return schedule_error("macro " + quoted(tokens[0]) + " takes no arguments");
    tokens = split_ws(cron);
  }
  auto spec = std::make_shared<cron_spec>();
  if (auto err = parse_cron(tokens, *spec)) return err;
  spec->zone = zone;
  std::string key{tz};
  for (auto t : tokens) key.append(" ").append(t);
  schedule out;
  out.kind_ = kind::cron;
  out.cron_ = intern(std::move(key), std::move(spec));
  return out;
}

caf::expected<schedule> schedule::parse_at(std::string_view rfc3339) {
  const auto at = parse_rfc3339(rfc3339);
  if (!at)
    return make_error(
        errc::invalid_argument, "at",
        "invalid RFC 3339 instant " + quoted(rfc3339) + " (use e.g. 2026-11-30T07:00:00Z)");
  return one_shot(*at);
}

schedule schedule::one_shot(unix_ms at) {
  schedule out;
  out.kind_ = kind::one_shot;
  out.value_ = at;
  return out;
}

schedule schedule::manual() { return schedule{}; }

std::optional<unix_ms> schedule::next_after(unix_ms after) const {
  switch (kind_) {
    case kind::manual:
      return std::nullopt;
    case kind::one_shot:
      return value_ > after ? std::optional<unix_ms>{value_} : std::nullopt;
    case kind::every: {
      const int64_t k = floor_div(after, value_) + 1;
      if (k > max_seconds * 1000 / value_) return std::nullopt;
      return k * value_;
    }
    case kind::cron: {
      int64_t t0 = floor_div(after, 1000) + 1;  // the first whole second strictly after
      if (t0 > max_seconds) return std::nullopt;
      if (t0 < min_seconds) t0 = min_seconds;
      const auto at = next_cron(*cron_, t0);
      if (!at || *at > max_seconds) return std::nullopt;
      return *at * 1000;
    }
  }
  return std::nullopt;
}

std::vector<unix_ms> schedule::next_n(unix_ms after, size_t n) const {
  std::vector<unix_ms> out;
  out.reserve(std::min<size_t>(n, 1024));
  while (out.size() < n) {
    const auto next = next_after(out.empty() ? after : out.back());
    if (!next) break;
    out.push_back(*next);
  }
  return out;
}

std::vector<unix_ms> schedule::next_n(unix_ms after, size_t n, unix_ms start_at,
                                      unix_ms end_at) const {
  if (start_at != 0) after = std::max(after, start_at - 1);
  auto out = next_n(after, n);
  if (end_at != 0)
    out.erase(std::upper_bound(out.begin(), out.end(), end_at), out.end());
  return out;
}

}  // namespace aisched::trigger
