// An exclusion calendar as one task reads it (Quartz calendars, Temporal's
// exclude_calendar): the calendar's dates in the task's time zone, and the fire
// instants of a schedule that are left once those dates are skipped. Pure code
// like schedule.hpp; the planner arms with it and the gateway's previews show it.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "actors/trigger/schedule.hpp"
#include "proto/controls.hpp"

namespace date {
class time_zone;
}  // namespace date

namespace aisched::trigger {

class exclusion {
 public:
  /// Excludes nothing.
  exclusion() = default;

  /// The dates of `cal` as days of the IANA zone `tz` ("" or "UTC": UTC; a zone
  /// that does not resolve reads as UTC, as a task with one never passed validation).
  exclusion(const proto::calendar& cal, std::string_view tz);

  bool empty() const { return !cal_ || cal_->days.empty(); }

  /// Whether instant `t` falls on an excluded day of the zone.
  bool excludes(unix_ms t) const;

  /// The first instant of `s` strictly after `after` that is not excluded;
  /// nullopt when the schedule has none (or only excluded ones within a bounded
  /// search: a calendar excludes ranges, each skipped in one step).
  std::optional<unix_ms> next_after(const schedule& s, unix_ms after) const;

  /// Up to `n` instants as next_after yields them, within a task's window
  /// (`start_at`, `end_at`: 0 is unbounded), like schedule::next_n.
  std::vector<unix_ms> next_n(const schedule& s, unix_ms after, size_t n, unix_ms start_at,
                              unix_ms end_at) const;

 private:
  proto::civil_day day_of(unix_ms t) const;
  unix_ms start_of(proto::civil_day d) const;

  std::shared_ptr<const proto::calendar> cal_;
  const date::time_zone* zone_ = nullptr;  // nullptr: UTC
};

}  // namespace aisched::trigger
