// aisched's one error vocabulary. Every failure a user or a peer can see is an
// `aisched::errc` carried in a `caf::error`, whose context holds the offending
// field (may be empty) and a human message: make_error(errc::x, field, message).
#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>
#include <caf/make_message.hpp>

namespace aisched {

enum class errc : uint8_t {
  none = 0,
  invalid_argument = 1,  // bad input: names the field
  not_found,             // the object does not exist
  already_exists,
  version_conflict,      // optimistic concurrency check failed
  not_leader,            // this node cannot accept writes now
  storage_error,         // RocksDB failed
  corrupted,             // stored bytes do not decode
  payload_too_large,
  unavailable,           // a dependency did not answer in time
  illegal_transition,    // an instance state change the state machine forbids
  internal,
  unauthenticated,       // no valid credentials (HTTP 401)
  forbidden,             // the caller's role may not do this (HTTP 403)
  storage_full,          // the disk is full (ENOSPC): writes fail until space returns (HTTP 507)
  storage_unavailable,   // the disk failed a write (EIO ...): writes fail until it recovers (HTTP 503)
  has_dependents,        // other tasks depend on the task (HTTP 409): the message names them
  outcome_unknown,       // stored in the log, not yet applied when the member failed: it may
                         // still take effect (HTTP 503); read before resending
  gone,                  // a finished run that run-history retention removed (HTTP 404)
};

/// Whether `x` says the node cannot persist right now (storage_error,
/// storage_full, storage_unavailable): a condition to wait out and retry, unlike
/// `corrupted`, which no retry mends.
inline bool is_storage_fault(errc x) {
  return x == errc::storage_error || x == errc::storage_full || x == errc::storage_unavailable;
}

/// Returns the stable snake_case name of `x`, used as the REST error code.
const char* to_string(errc x);

/// Builds an aisched error: `field` names the offending input field ("" if none).
caf::error make_error(errc code, std::string field, std::string message);

/// Builds an aisched error without a field.
inline caf::error make_error(errc code, std::string message) {
  return make_error(code, std::string{}, std::move(message));
}

/// The parts of an aisched error, for mapping to HTTP/JSON. For a foreign
/// (e.g. CAF system) error, `code` is `errc::internal` or `errc::unavailable`.
struct error_view {
  errc code = errc::none;
  std::string field;
  std::string message;
};

error_view view(const caf::error& err);

}  // namespace aisched

CAF_ERROR_CODE_ENUM(aisched::errc, "aisched")
