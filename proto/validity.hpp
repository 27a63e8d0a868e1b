// Range checks of values CAF's encoding (proto::format_1, data formats 0 and
// 1) decodes: every enum field holds a named value. CAF reads enums as plain
// integers, so format_1::decode() calls these to reject corrupted bytes
// instead of handing out an impossible state. (The wire codec checks each enum
// against its names as it reads it.) Only stored records are read this way.
#pragma once

#include "proto/commands.hpp"
#include "proto/types.hpp"

namespace aisched::proto {

template <class E>
bool in_range(E x) {
  return static_cast<size_t>(x) < enum_names<E>::value.size();
}

inline bool enums_valid(const task& t) {
  return in_range(t.kind) && in_range(t.route) && in_range(t.retry.kind) &&
         in_range(t.overlap) && in_range(t.misfire);
}
inline bool enums_valid(const instance& x) { return in_range(x.state); }
inline bool enums_valid(const attempt_record& r) { return in_range(r.state); }
inline bool enums_valid(const task_runtime& r) { return in_range(r.last_state); }
inline bool enums_valid(const worker& w) { return in_range(w.protocol) && in_range(w.status); }
inline bool enums_valid(const run_result& r) { return in_range(r.state); }

inline bool enums_valid(const create_task& c) { return enums_valid(c.t); }
inline bool enums_valid(const update_task& c) { return enums_valid(c.t); }
inline bool enums_valid(const put_ai_records& c) {
  for (auto& r : c.records)
    if (!in_range(r.column)) return false;
  return true;
}
inline bool enums_valid(const report_results& c) {
  for (auto& r : c.results)
    if (!enums_valid(r)) return false;
  return true;
}

/// Types without enums are always in range.
template <class T>
bool enums_valid(const T&) {
  return true;
}

}  // namespace aisched::proto
