// The W3C Trace Context header a run's HTTP calls carry (`traceparent:
// 00-<32 hex trace id>-<16 hex span id>-01`): HTTP tasks (the worker's executor)
// and the execute call to an external worker (its proxy), so the receiving side
// can join the run's trace.
#pragma once

#include <string>

#include "proto/random.hpp"

namespace aisched::http {

/// The header value for `trace_id` (32 lower-case hex digits, as the trigger
/// makes them) with a new random span id (the span of this one call, as W3C
/// wants: unique, not derivable from the run); "" when `trace_id` is not a
/// valid W3C id.
inline std::string traceparent(const std::string& trace_id) {
  if (trace_id.size() != 32 || trace_id == std::string(32, '0')) return {};
  for (char c : trace_id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return {};
  return "00-" + trace_id + "-" + proto::new_span_id() + "-01";
}

}  // namespace aisched::http
