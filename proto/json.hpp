// Boost.JSON mapping of the proto types for the REST API (snake_case fields,
// durations as "1h30m", instants as RFC 3339 UTC). Decoding is strict: unknown
// fields, wrong types and unparsable values are errors that name the field.
#pragma once

#include <string>
#include <string_view>

#include <boost/json/fwd.hpp>
#include <caf/expected.hpp>

#include "proto/auth_types.hpp"
#include "proto/commands.hpp"
#include "proto/controls.hpp"
#include "proto/interfaces.hpp"
#include "proto/types.hpp"

namespace aisched::proto {

/// Parses a request body; errors are `invalid_argument` with field "body", or
/// with the key's path as field when a key appears twice in one object.
caf::expected<boost::json::value> parse_json(std::string_view body);

/// `s` with every ill-formed UTF-8 sequence (stray continuation bytes, overlong
/// forms, surrogates, truncated sequences, bytes past U+10FFFF) replaced by
/// U+FFFD; well-formed UTF-8 comes back unchanged.
std::string valid_utf8(std::string_view s);

/// `v` as JSON text, like boost::json::serialize except for doubles, which read as
/// people and tools expect: integral values as integers (`0`, `1000`, `2`), others
/// in their shortest round-trip form (`0.5`, `0.30000000000000004`, `1e+21`), never
/// Boost's `0E0` / `1E3` / `5E-1`. NaN and infinities (not JSON) become `null`.
std::string to_text(const boost::json::value& v);

boost::json::value to_json(const task& t);
boost::json::value to_json(const instance& x);
boost::json::value to_json(const attempt_list& a);
boost::json::value to_json(const worker& w);
/// A registration's answer: the worker and the credential issued to it (the only
/// place a credential is ever written; heartbeats and reports must carry it).
boost::json::value registration_json(const worker& w);
/// A member's own Raft status, as GET /api/v1/cluster lists each member.
boost::json::value to_json(const raft_status& s);

/// Users and tokens without their hashes (never shown), and audit entries.
boost::json::value to_json(const user& u);
boost::json::value to_json(const api_token& t);
boost::json::value to_json(const audit_entry& e);

/// Reads a task document over `base`: fields present in `v` replace those of
/// `base`, absent fields keep it (so an update is a merge, never a silent reset).
/// Read-only fields (id, created_at, updated_at, next_fire_times) are accepted and
/// ignored; `version` is read into `t.version` for the caller's version check.
caf::expected<task> task_from_json(const boost::json::value& v, task base = {});

/// Reads a worker registration document.
caf::expected<worker> worker_from_json(const boost::json::value& v, worker base = {});

/// Reads a worker heartbeat document: load, cpu_percent, memory_percent, draining.
caf::expected<worker_heartbeat> heartbeat_from_json(const boost::json::value& v,
                                                    worker_heartbeat base = {});

/// Whether `err` refuses an Idempotency-Key sent before with another request:
/// the state machine's `already_exists` about field "Idempotency-Key". The REST
/// API answers it 422 with code `idempotency_key_reused` (errc has no own code).
bool is_idempotency_key_reused(const caf::error& err);

/// The REST error body `{"error": {"code", "message", "field"}}` for `err`;
/// message and field are made valid UTF-8 (valid_utf8), whatever they quote.
boost::json::value error_to_json(const caf::error& err);

// -- pools and calendars (proto/controls_json.cpp) ----------------------------

/// `{"name", "size", "updated_at"}` (tenant too).
boost::json::value to_json(const pool& p);
/// `{"name", "description", "dates": ["2026-12-25", "2026-12-24..2026-12-26"], "updated_at"}`.
boost::json::value to_json(const calendar& c);
/// Reads `{"size": N}`; unknown fields and bad values name the field.
caf::expected<pool> pool_from_json(const boost::json::value& v, pool base);
/// Reads `{"dates": [...], "description": "..."}` and normalizes the dates.
caf::expected<calendar> calendar_from_json(const boost::json::value& v, calendar base);

}  // namespace aisched::proto
