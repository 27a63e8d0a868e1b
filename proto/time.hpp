// Time in aisched's vocabulary: instants are milliseconds since the Unix epoch
// (UTC) and durations are milliseconds, both int64. Text forms: RFC 3339 UTC
// for instants ("2026-11-30T07:00:00Z", or ".123Z" with milliseconds) and Go-style
// durations for spans ("500ms", "10s", "1h30m"). Reading the clock is
// common/clock.hpp's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aisched {

/// Milliseconds since 1970-01-01T00:00:00Z.
using unix_ms = int64_t;
/// A span of milliseconds.
using duration_ms = int64_t;

/// Formats `t` as RFC 3339 UTC; milliseconds are shown only when non-zero.
std::string format_rfc3339(unix_ms t);

/// Parses RFC 3339 ("2026-11-30T07:00:00Z", "...00.250Z", "...00+01:00").
/// Returns nullopt for anything else.
std::optional<unix_ms> parse_rfc3339(std::string_view text);

/// Formats a duration the way parse_duration reads it back ("1h30m", "250ms", "0s").
std::string format_duration(duration_ms d);

/// Parses a non-negative Go-style duration: one or more `<integer><unit>` groups
/// with units h, m, s, ms ("1h30m", "10s", "500ms"). Returns nullopt otherwise.
std::optional<duration_ms> parse_duration(std::string_view text);

}  // namespace aisched
