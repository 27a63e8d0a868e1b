// The W3C Trace Context header a run's HTTP calls carry (`traceparent:
// 00-<32 hex trace id>-<16 hex span id>-01`): HTTP tasks and the execute call
// to an external worker, so the receiving side can join the run's trace.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace aisched::worker {

/// The header value for `trace_id` (32 lower-case hex digits, as the trigger
/// makes them) with a span id derived from `span_seed` (instance id and
/// attempt: one span per attempt); "" when `trace_id` is not a valid W3C id.
inline std::string traceparent(const std::string& trace_id, const std::string& span_seed) {
  if (trace_id.size() != 32 || trace_id == std::string(32, '0')) return {};
  for (char c : trace_id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return {};
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : span_seed) h = (h ^ c) * 1099511628211ULL;
  if (h == 0) h = 1;  // an all-zero span id is invalid
  char span[17];
  std::snprintf(span, sizeof span, "%016llx", static_cast<unsigned long long>(h));
  return "00-" + trace_id + "-" + span + "-01";
}

}  // namespace aisched::worker
