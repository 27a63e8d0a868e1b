// Calendar exclusions in a task's zone; see exclusion.hpp.
#include "actors/trigger/exclusion.hpp"

#include <algorithm>
#include <chrono>

#include <date/tz.h>

namespace aisched::trigger {

namespace {

// Steps a search may take: each skips one excluded range (or one fire in it),
// so only a calendar of more ranges than this in a row ends a search early.
constexpr size_t max_skips = 10'000;

}  // namespace

exclusion::exclusion(const proto::calendar& cal, std::string_view tz)
    : cal_(std::make_shared<const proto::calendar>(cal)) {
  if (!tz.empty() && tz != "UTC") {
    try {
      zone_ = date::locate_zone(tz);
    } catch (...) {  // unknown zone: read as UTC (never escapes)
      zone_ = nullptr;
    }
  }
}

proto::civil_day exclusion::day_of(unix_ms t) const {
  using namespace std::chrono;
  date::sys_time<milliseconds> tp{milliseconds{t}};
  if (!zone_) return static_cast<proto::civil_day>(date::floor<date::days>(tp).time_since_epoch().count());
  auto local = zone_->to_local(tp);
  return static_cast<proto::civil_day>(date::floor<date::days>(local).time_since_epoch().count());
}

unix_ms exclusion::start_of(proto::civil_day d) const {
  using namespace std::chrono;
  if (!zone_) return static_cast<unix_ms>(d) * 86'400'000;
  date::local_days local{date::days{d}};
  // A midnight that does not exist (a DST change at 00:00) starts at the change.
  auto sys = zone_->to_sys(local, date::choose::earliest);
  return duration_cast<milliseconds>(sys.time_since_epoch()).count();
}

bool exclusion::excludes(unix_ms t) const { return !empty() && cal_->excludes(day_of(t)); }

std::optional<unix_ms> exclusion::next_after(const schedule& s, unix_ms after) const {
  auto next = s.next_after(after);
  if (empty()) return next;
  for (size_t i = 0; next && i < max_skips; ++i) {
    auto d = day_of(*next);
    if (!cal_->excludes(d)) return next;
    // Skip the whole excluded range holding d: resume at the next day's start.
    auto& days = cal_->days;
    auto r = std::upper_bound(days.begin(), days.end(), d, [](proto::civil_day x,
                                                              const proto::day_range& y) {
      return x < y.from;
    });
    auto resume = start_of(std::prev(r)->to + 1);
    next = s.next_after(std::max(*next, resume - 1));
  }
  return std::nullopt;
}

std::vector<unix_ms> exclusion::next_n(const schedule& s, unix_ms after, size_t n,
                                       unix_ms start_at, unix_ms end_at) const {
  std::vector<unix_ms> out;
  if (start_at != 0) after = std::max(after, start_at - 1);
  for (auto t = next_after(s, after); t && out.size() < n; t = next_after(s, *t)) {
    if (end_at != 0 && *t > end_at) break;
    out.push_back(*t);
  }
  return out;
}

}  // namespace aisched::trigger
