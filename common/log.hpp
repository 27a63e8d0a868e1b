// Structured JSON-lines logging (spdlog) shared by every part of a node:
// one object per line with time, level, node, msg and any extra fields.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace aisched::log {

enum class level { debug, info, warn, error };

/// Sets the node id stamped on every line and the minimum level. Call once at startup.
void init(std::string node_id, level min_level);

/// Parses "debug" | "info" | "warn" | "error".
bool parse_level(std::string_view s, level& out);

/// The name parse_level() accepts for `l`.
const char* level_name(level l);

/// Changes the minimum level at once, from any thread (PUT /api/v1/admin/log-level).
void set_level(level min_level);

/// The minimum level lines are written at now.
level current_level();

/// Whether a line at `lvl` would be written (skip building costly fields otherwise).
bool enabled(level lvl);

using field = std::pair<std::string_view, std::string>;

/// Writes one JSON line to stderr. Thread-safe.
void write(level lvl, std::string_view msg, std::initializer_list<field> fields = {});

inline void info(std::string_view msg, std::initializer_list<field> f = {}) {
  write(level::info, msg, f);
}
inline void warn(std::string_view msg, std::initializer_list<field> f = {}) {
  write(level::warn, msg, f);
}
inline void error(std::string_view msg, std::initializer_list<field> f = {}) {
  write(level::error, msg, f);
}
inline void debug(std::string_view msg, std::initializer_list<field> f = {}) {
  write(level::debug, msg, f);
}

}  // namespace aisched::log
