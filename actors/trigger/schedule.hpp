// When a task fires: parsing of schedule expressions (cron, macros, `@every`, one-shot `at`)
// and computation of the next fire instants. Pure code: no actors, no I/O, no clock reads.
// The trigger actor asks `next_after` for each task; slot ids derive from the returned
// instants, so the same expression must yield the same instants on every node, every time.
#pragma once

#include <caf/expected.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "proto/time.hpp"

namespace aisched::trigger {

namespace detail {
struct cron_spec;
}  // namespace detail

/// A parsed schedule. Immutable, cheap to copy (at most one shared_ptr), and safe to use
/// from many threads at once.
///
/// Expression grammar accepted by `parse`:
/// - cron, 5 fields `min hour dom month dow` (fires at second 0) or 6 fields
///   `sec min hour dom month dow`. In every field: `*`, values, lists `1,5,10`, ranges `1-5`,
///   steps `*/15`, `10-50/5` and `5/15` (= 5 to the field maximum, step 15).
///   month: 1-12 or JAN-DEC; day-of-week: 0-7 (0 and 7 = Sunday) or SUN-SAT; names are
///   case-insensitive and usable in ranges (`MON-FRI`, `FRI-SUN`).
///   day-of-month and day-of-week also take `?` (same as `*`).
///   day-of-month extras: `L` last day, `L-n` n days before the last day (n <= 30),
///   `nW` the weekday (Mon-Fri) nearest to day n within the same month (never crossing
///   into another month; no fire in months without day n), `LW` the last weekday.
///   day-of-week extras: `d#n` the n-th (1-5) weekday d of the month (`MON#2`, `5#3`),
///   `dL` the last weekday d of the month (`5L`, `FRIL`). A bare `L` in day-of-week is
///   rejected (Quartz reads it as Saturday, which surprises people).
///   Extras may appear in lists (`1,15,L`) but take no ranges or steps.
/// - Days: if both day-of-month and day-of-week are restricted, a day matching EITHER fires;
///   if one is unrestricted, the other alone decides. A field is unrestricted only when its
///   text is exactly `*` or `?` (croniter's and robfig/cron's rule): `0 0 */2 * 1` fires on
///   every odd day and on every Monday. Vixie cron/cronie differ: there a field starting
///   with `*` counts as unrestricted, so that expression fires only on odd Mondays.
/// - macros: `@yearly`/`@annually` (0 0 1 1 *), `@monthly` (0 0 1 * *), `@weekly` (0 0 * * 0),
///   `@daily`/`@midnight` (0 0 * * *), `@hourly` (0 * * * *). `@reboot` is not supported.
/// - `@every <duration>` (Go-style, e.g. `90s`, `1h30m`, `250ms`; minimum 100ms): fires at
///   every instant `k * duration` since the Unix epoch, so `@every 1h` fires on whole UTC hours
///   and slot instants agree across nodes and restarts. The zone does not affect it.
///
/// Time zones: cron fields are evaluated in the civil time of the IANA zone `tz` (tzdata from
/// /usr/share/zoneinfo). Rules at DST transitions — each local wall-clock time fires at most
/// once:
/// - a matching local time that does not exist (spring-forward gap) fires at the first instant
///   after the gap, i.e. at the transition itself; several matching times in one gap collapse
///   into that single firing (like cronie, the job runs right after the transition);
/// - a matching local time that occurs twice (fall-back overlap) fires only at its first,
///   earliest occurrence; the second pass through the repeated wall-clock times never fires,
///   even for `*/15 * * * *`.
/// Results are strictly increasing and cron results are whole seconds. Zone rules come from
/// the system tzdata as date/tz reads it: past the last listed transition (2037 in Debian's
/// files) the last offset applies and DST is no longer observed.
class schedule {
 public:
  enum class kind : uint8_t { manual, cron, every, one_shot };

  /// A manual schedule (never fires).
  schedule() = default;

  /// Parses `expr` (cron, macro or `@every`) in the IANA zone `tz`; "" and "UTC" mean UTC.
  /// Errors are `errc::invalid_argument` with field "schedule" (message names the cron field,
  /// e.g. "cron field 'hour': value 25 out of range 0-23") or "timezone" for an unknown zone.
  /// Never throws. Thread-safe.
  static caf::expected<schedule> parse(std::string_view expr, std::string_view tz);

  /// Parses an RFC 3339 instant into a one-shot schedule; error field "at" when malformed.
  static caf::expected<schedule> parse_at(std::string_view rfc3339);

  /// A schedule that fires exactly once, at `at` (milliseconds are kept).
  static schedule one_shot(unix_ms at);

  /// A schedule that never fires by itself; instances are started by hand.
  static schedule manual();

  /// The first fire instant strictly after `after`, or nullopt if there is none: a passed
  /// one-shot, a manual schedule, or a cron expression that never matches (e.g.
  /// "0 0 30 2 *"). Cron searches at most 41 years ahead; every satisfiable day pattern
  /// recurs within 40 years in the Gregorian calendar, so nullopt means "never".
  /// Instants after year 9000 yield nullopt. Costs O(fields), not O(seconds). Thread-safe.
  std::optional<unix_ms> next_after(unix_ms after) const;

  /// Up to `n` fire instants strictly after `after`, strictly increasing; fewer if the
  /// schedule runs out.
  std::vector<unix_ms> next_n(unix_ms after, size_t n) const;

  /// The same, restricted to a task's window as the planner applies it: no instant before
  /// `start_at`, none after `end_at` (0: unbounded on that side).
  std::vector<unix_ms> next_n(unix_ms after, size_t n, unix_ms start_at, unix_ms end_at) const;

  kind type() const { return kind_; }
  bool is_manual() const { return kind_ == kind::manual; }
  /// The interval of an `@every` schedule, 0 for other kinds.
  duration_ms interval() const { return kind_ == kind::every ? value_ : 0; }
  /// The instant of a one-shot schedule, nullopt for other kinds.
  std::optional<unix_ms> at() const {
    return kind_ == kind::one_shot ? std::optional<unix_ms>{value_} : std::nullopt;
  }

 private:
  kind kind_ = kind::manual;
  int64_t value_ = 0;  // the @every interval or the one-shot instant
  std::shared_ptr<const detail::cron_spec> cron_;
};

}  // namespace aisched::trigger
