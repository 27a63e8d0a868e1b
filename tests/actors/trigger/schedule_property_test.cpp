// Rapidcheck properties of trigger::schedule: next_after compared against an
// independent, slow model of the expression (sets built by the generator, civil
// time via date/tz) and a second-by-second brute force.
#include "actors/trigger/schedule_fixture.hpp"

namespace aisched::trigger {
namespace {

using namespace testing_support;

// -- properties ---------------------------------------------------------------------------

// A value in [lo, hi), uniform at every rapidcheck size (inRange alone favours small values
// early on, which would starve the later zones and the later years).
template <typename T = int>
T pick(T lo, T hi) {
  return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(lo, hi));
}

// An independently built model of a generated cron expression: the generator emits the text
// and, item by item, the set it denotes; `matches` checks a civil time the slow way.
struct cron_model {
  std::string text;
  std::bitset<60> sec, min;
  std::bitset<24> hour;
  std::bitset<13> month;
  std::bitset<32> dom;
  std::bitset<7> dow;
  std::vector<int> dom_last_minus, dom_nearest;  // L-n, nW
  bool dom_last_weekday = false;                 // LW
  std::vector<std::pair<int, int>> dow_nth;      // d#n
  std::vector<int> dow_last;                     // dL
  bool dom_star = false, dow_star = false;

  bool dom_matches(date::year_month_day ymd) const {
    using namespace date;
    const int d = int(unsigned(ymd.day()));
    const int last = int(unsigned((ymd.year() / ymd.month() / date::last).day()));
    const auto is_weekday = [&](int day) {
      const weekday wd{sys_days{ymd.year() / ymd.month() / date::day(unsigned(day))}};
      return wd != Saturday && wd != Sunday;
    };
    if (dom[d]) return true;
    for (int n : dom_last_minus)
      if (d == last - n) return true;
    const auto nearest = [&](int n) {  // the weekday of the month closest to n
      int best = -1;
      for (int c = 1; c <= last; ++c)
        if (is_weekday(c) && (best < 0 || std::abs(c - n) < std::abs(best - n))) best = c;
      return best;
    };
    for (int n : dom_nearest)
      if (n <= last && nearest(n) == d) return true;
    if (dom_last_weekday) {
      int lw = last;
      while (!is_weekday(lw)) --lw;
      if (d == lw) return true;
    }
    return false;
  }

  bool dow_matches(date::year_month_day ymd) const {
    using namespace date;
    const int d = int(unsigned(ymd.day()));
    const int last = int(unsigned((ymd.year() / ymd.month() / date::last).day()));
    const int wd = int(weekday{sys_days{ymd}}.c_encoding());
    if (dow[wd]) return true;
    for (auto [w, n] : dow_nth)
      if (w % 7 == wd && (d - 1) / 7 + 1 == n) return true;
    for (int w : dow_last)
      if (w % 7 == wd && d + 7 > last) return true;
    return false;
  }

  bool matches(date::local_seconds t) const {
    using namespace date;
    const auto day = floor<days>(t);
    const year_month_day ymd{day};
    const hh_mm_ss<std::chrono::seconds> hms{t - day};
    if (!sec[hms.seconds().count()] || !min[hms.minutes().count()] || !hour[hms.hours().count()] ||
        !month[unsigned(ymd.month())])
      return false;
    const sys_days sd{ymd};
    const year_month_day as_sys{sd};
    return day_matches(as_sys);
  }

  // Restricted day fields combine with OR; an unrestricted one (exactly `*` or `?`) leaves
  // the decision to the other.
  bool day_matches(date::year_month_day ymd) const {
    if (!month[unsigned(ymd.month())]) return false;
    if (dom_star || dow_star) return dom_matches(ymd) && dow_matches(ymd);
    return dom_matches(ymd) || dow_matches(ymd);
  }
};

const char* const month_name[] = {"",    "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                  "JUL", "AUG", "SEP", "OCT", "NOV", "dec"};
const char* const day_name[] = {"sun", "MON", "Tue", "WED", "THU", "FRI", "SAT"};

// One item of a plain field with values lo..hi (`*` spans lo..star_hi); adds its set to `set`.
template <size_t N>
std::string gen_item(int lo, int hi, int star_hi, const char* const* names, std::bitset<N>& set) {
  const auto name = [&](int v) {
    return names && v <= star_hi && pick(0, 2) == 0 ? std::string{names[v]} : std::to_string(v);
  };
  const int kind = pick(0, 6);
  int a = pick(lo, hi + 1);
  int b = pick(lo, hi + 1);
  if (a > b) std::swap(a, b);
  const int step = pick(1, star_hi - lo + 2);
  switch (kind) {
    case 0:
      for (int v = lo; v <= star_hi; ++v) set[v] = true;
      return "*";
    case 1:
      set[a] = true;
      return name(a);
    case 2:
      for (int v = a; v <= b; ++v) set[v] = true;
      return name(a) + "-" + name(b);
    case 3:
      for (int v = lo; v <= star_hi; v += step) set[v] = true;
      return "*/" + std::to_string(step);
    case 4:
      for (int v = a; v <= b; v += step) set[v] = true;
      return name(a) + "-" + name(b) + "/" + std::to_string(step);
    default:
      for (int v = a; v <= std::max(a, star_hi); v += step) set[v] = true;
      return std::to_string(a) + "/" + std::to_string(step);
  }
}

// A whole plain field: `*` often (so that many expressions fire frequently), else 1-3 items.
template <size_t N>
std::string gen_field(int lo, int hi, int star_hi, const char* const* names, std::bitset<N>& set,
                      bool& star, int star_weight) {
  if (pick(0, 10) < star_weight) {
    for (int v = lo; v <= star_hi; ++v) set[v] = true;
    const bool stepped = pick(0, 5) == 0;
    star = !stepped;  // `*/1` covers every value yet counts as restricted
    return stepped ? "*/1" : "*";
  }
  std::string out;
  const int items = pick(1, 4);
  for (int i = 0; i < items; ++i) {
    if (i) out += ",";
    out += gen_item(lo, hi, star_hi, names, set);
  }
  star = out == "*";
  return out;
}

std::string gen_dom(cron_model& m) {
  const int choice = pick(0, 10);
  if (choice < 5) return gen_field(1, 31, 31, nullptr, m.dom, m.dom_star, 6);
  if (choice == 5) {
    m.dom_star = true;
    for (int v = 1; v <= 31; ++v) m.dom[v] = true;
    return "?";
  }
  std::string out;
  const int items = pick(1, 3);
  for (int i = 0; i < items; ++i) {
    if (i) out += ",";
    switch (pick(0, 5)) {
      case 0:
        m.dom_last_minus.push_back(0);
        out += "L";
        break;
      case 1: {
        const int n = pick(0, 31);
        m.dom_last_minus.push_back(n);
        out += "L-" + std::to_string(n);
        break;
      }
      case 2: {
        const int n = pick(1, 32);
        m.dom_nearest.push_back(n);
        out += std::to_string(n) + "W";
        break;
      }
      case 3:
        m.dom_last_weekday = true;
        out += "LW";
        break;
      default:
        out += gen_item(1, 31, 31, nullptr, m.dom);
        break;
    }
  }
  m.dom_star = out == "*";
  return out;
}

std::string gen_dow(cron_model& m) {
  std::bitset<8> raw;
  const int choice = pick(0, 10);
  std::string out;
  if (choice < 6) {
    out = gen_field(0, 7, 6, day_name, raw, m.dow_star, 6);
  } else if (choice == 6) {
    m.dow_star = true;
    raw.set();
    out = "?";
  } else {
    const int items = pick(1, 3);
    for (int i = 0; i < items; ++i) {
      if (i) out += ",";
      const int d = pick(0, 8);
      const std::string dn = d < 7 && pick(0, 2) ? day_name[d] : std::to_string(d);
      switch (pick(0, 3)) {
        case 0: {
          const int n = pick(1, 6);
          m.dow_nth.push_back({d, n});
          out += dn + "#" + std::to_string(n);
          break;
        }
        case 1:
          m.dow_last.push_back(d);
          out += dn + "L";
          break;
        default:
          out += gen_item(0, 7, 6, day_name, raw);
          break;
      }
    }
    m.dow_star = out == "*";
  }
  for (int v = 0; v < 8; ++v)
    if (raw[v]) m.dow[v % 7] = true;
  return out;
}

cron_model gen_cron() {
  cron_model m;
  bool star = false;
  const bool six = pick(0, 2) == 1;
  std::string text;
  if (six) {
    text = gen_field(0, 59, 59, nullptr, m.sec, star, 4) + " ";
  } else {
    m.sec[0] = true;
  }
  text += gen_field(0, 59, 59, nullptr, m.min, star, 4) + " ";
  text += gen_field(0, 23, 23, nullptr, m.hour, star, 5) + " ";
  text += gen_dom(m) + " ";
  text += gen_field(1, 12, 12, month_name, m.month, star, 7) + " ";
  text += gen_dow(m);
  m.text = text;
  return m;
}

const char* const zones[] = {"UTC",
                             "Europe/Berlin",
                             "America/New_York",
                             "Asia/Kolkata",
                             "Australia/Lord_Howe",
                             "America/Santiago",
                             "Pacific/Chatham",
                             "America/Havana"};

// Whether the model fires at whole second `x` under the documented DST rules: a matching
// local time at its first occurrence, or a transition instant ending a gap that contains a
// matching local time.
bool model_fires(const cron_model& m, const date::time_zone* zone, int64_t x) {
  using namespace date;
  using std::chrono::seconds;
  const sys_seconds sx{seconds{x}};
  const auto info = zone->get_info(sx);
  const local_seconds local{seconds{x} + info.offset};
  if (m.matches(local)) {
    const auto li = zone->get_info(local);
    if (li.result != local_info::ambiguous ||
        sx == sys_seconds{local.time_since_epoch()} - li.first.offset)
      return true;
  }
  if (info.begin == sx) {
    const auto prev = zone->get_info(sx - seconds{1});
    for (auto g = local_seconds{seconds{x} + prev.offset}; g < local; g += seconds{1})
      if (m.matches(g)) return true;
  }
  return false;
}

// A start instant in 2021-2035 (where Debian's tzdata lists DST transitions), mostly within
// hours, or within a second, of one of the zone's transitions.
unix_ms gen_after(const date::time_zone* zone) {
  const int64_t base = 1609459200 + pick<int64_t>(0, 15LL * 365 * 86400);
  int64_t t = base;
  const int near = pick(0, 4);  // 0, 1: hours around a transition; 2: a second around one
  if (near < 3) {
    const auto info = zone->get_info(date::sys_seconds{std::chrono::seconds{base}});
    if (info.end < date::sys_days{date::year{2037} / 1 / 1})
      t = info.end.time_since_epoch().count() +
          (near < 2 ? pick(-4 * 3600, 2 * 3600) : pick(-2, 1));
  }
  return t * 1000 + pick(-1, 1000);
}

RC_GTEST_PROP(schedule_property, cron_results_match_increase_and_miss_nothing, ()) {
  const auto m = gen_cron();
  const char* tz = zones[pick<size_t>(0, std::size(zones))];
  const auto* zone = date::locate_zone(tz);
  RC_TAG(tz);
  const auto parsed = schedule::parse(m.text, tz);
  RC_ASSERT(static_cast<bool>(parsed));
  const auto after = gen_after(zone);
  RC_LOG() << "'" << m.text << "' in " << tz << " after " << format_rfc3339(after) << "\n";
  const auto ts = parsed->next_n(after, 12);
  unix_ms prev = after;
  for (auto t : ts) {
    RC_ASSERT(t > prev);
    RC_ASSERT(t % 1000 == 0);
    RC_ASSERT(model_fires(m, zone, t / 1000));
    prev = t;
  }
  // Brute force over a 6-hour window: exactly the model's firing seconds are returned.
  const int64_t t0 = (after >= 0 ? after / 1000 : (after - 999) / 1000) + 1;
  const int64_t end = t0 + 6 * 3600;
  auto next = parsed->next_after(after);
  for (int64_t x = t0; x < end; ++x) {
    const bool returned = next && *next == x * 1000;
    if (returned != model_fires(m, zone, x)) RC_LOG() << "at " << format_rfc3339(x * 1000) << "\n";
    RC_ASSERT(returned == model_fires(m, zone, x));
    if (returned) next = parsed->next_after(*next);
  }
  // No result is missed when a day pattern never matches: nullopt only if the model never
  // fires on any day in the 41-year horizon (checked at day resolution, at noon UTC).
  if (ts.empty()) {
    for (auto d = date::floor<date::days>(date::sys_seconds{std::chrono::seconds{t0}});
         d < date::sys_days{date::year{2077} / 1 / 1}; d += date::days{1}) {
      RC_ASSERT(!m.day_matches(date::year_month_day{d}));
    }
  }
}

RC_GTEST_PROP(schedule_property, next_after_is_the_same_from_anywhere_before_it, ()) {
  const auto m = gen_cron();
  const char* tz = zones[pick<size_t>(0, std::size(zones))];
  const auto parsed = schedule::parse(m.text, tz);
  RC_ASSERT(static_cast<bool>(parsed));
  const auto ts = parsed->next_n(gen_after(date::locate_zone(tz)), 8);
  for (size_t i = 1; i < ts.size(); ++i) {
    const auto between = pick(ts[i - 1], ts[i]);
    RC_ASSERT(parsed->next_after(between) == std::optional<unix_ms>{ts[i]});
  }
}

RC_GTEST_PROP(schedule_property, every_fires_on_multiples_of_the_interval, ()) {
  const auto d = pick<duration_ms>(100, 10LL * 86'400'000);
  const auto after = pick<unix_ms>(-4'000'000'000'000LL, 4'000'000'000'000LL);
  const auto parsed = schedule::parse("@every " + format_duration(d), "Europe/Berlin");
  RC_ASSERT(static_cast<bool>(parsed));
  RC_ASSERT(parsed->interval() == d);
  const auto next = parsed->next_after(after);
  RC_ASSERT(next.has_value());
  RC_ASSERT(*next > after);
  RC_ASSERT(*next - after <= d);
  RC_ASSERT(*next % d == 0);
}


}  // namespace
}  // namespace aisched::trigger
