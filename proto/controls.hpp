// Scheduling controls an admin sets per tenant and tasks refer to by name:
// pools (a size shared by every task naming the pool: runs of them dispatched
// or running at once) and exclusion calendars (dates a task's schedule skips).
// Replicated through put_pool / put_calendar / delete_calendar (commands.hpp),
// stored by storage/controls_state, enforced by the router (pools) and the
// trigger's planner (calendars); JSON in proto/json.hpp (controls_json.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>
#include <caf/meta/type_name.hpp>

#include "proto/field.hpp"
#include "proto/time.hpp"

namespace aisched::proto {

/// A named pool of a tenant: at most `size` runs of all tasks naming it are
/// dispatched or running at once (0 holds every such run back).
struct pool {
  std::string tenant = "default";
  std::string name;
  uint32_t size = 0;
  unix_ms updated_at = 0;
  friend bool operator==(const pool& a, const pool& b) {
    return a.tenant == b.tenant && a.name == b.name && a.size == b.size &&
           a.updated_at == b.updated_at;
  }
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pool& x) {
  return f(caf::meta::type_name("aisched.pool"), field("tenant"), x.tenant, field("name"), x.name,
           field("size"), x.size, field("updated_at"), x.updated_at, keep_unknown(x.unknown));
}

/// Days since 1970-01-01 (a civil date, no time zone).
using civil_day = int32_t;

/// The days `from` to `to`, both included.
struct day_range {
  civil_day from = 0;
  civil_day to = 0;
  friend bool operator==(const day_range& a, const day_range& b) {
    return a.from == b.from && a.to == b.to;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, day_range& x) {
  return f(caf::meta::type_name("aisched.day_range"), field("from"), x.from, field("to"), x.to);
}

/// A named exclusion calendar of a tenant (holidays, freeze windows): a task
/// naming it never fires on these dates, read in the task's own time zone.
struct calendar {
  std::string tenant = "default";
  std::string name;
  std::string description;
  std::vector<day_range> days;  // sorted by `from`, as validate_calendar leaves them
  unix_ms updated_at = 0;
  /// Whether civil day `d` is excluded.
  bool excludes(civil_day d) const;
  friend bool operator==(const calendar& a, const calendar& b) {
    return a.tenant == b.tenant && a.name == b.name && a.description == b.description &&
           a.days == b.days && a.updated_at == b.updated_at;
  }
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, calendar& x) {
  return f(caf::meta::type_name("aisched.calendar"), field("tenant"), x.tenant,
           field("name"), x.name, field("description"), x.description, field("days"), x.days,
           field("updated_at"), x.updated_at, keep_unknown(x.unknown));
}

/// The pools and calendars of a tenant (or of all, for the leader's actors).
struct controls {
  std::vector<pool> pools;
  std::vector<calendar> calendars;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, controls& x) {
  return f(caf::meta::type_name("aisched.controls"), field("pools"), x.pools,
           field("calendars"), x.calendars);
}

/// Bounds: pools and calendars are small objects every leader keeps in memory.
constexpr uint32_t max_pool_size = 100'000;
constexpr size_t max_calendar_ranges = 1000;

/// `YYYY-MM-DD` as a civil day; nullopt when malformed or not a real date.
std::optional<civil_day> parse_day(std::string_view text);
std::string format_day(civil_day d);

/// Checks a pool or calendar name: 1 to 64 of [A-Za-z0-9_.-]. Error field `field`.
caf::error validate_control_name(const std::string& name, const std::string& field = "name");
/// Sorts the ranges and merges overlapping ones; error (field "dates") when one
/// ends before it starts or there are more than max_calendar_ranges.
caf::error normalize_calendar(calendar& c);

}  // namespace aisched::proto
