// Helpers shared by the trigger::planner tests: instants from RFC 3339, tasks with
// each policy, and drivers that collect a planner's fires up to an instant.
#pragma once

#include "actors/trigger/planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "proto/errors.hpp"
#include "proto/time.hpp"

namespace aisched::trigger {
namespace testing_support {

using proto::instance_state;
using proto::misfire_policy;
using proto::overlap_policy;

inline unix_ms at(const char* rfc3339) {
  auto t = parse_rfc3339(rfc3339);
  EXPECT_TRUE(t.has_value()) << rfc3339;
  return t.value_or(0);
}

// 2026-01-01T00:00:00Z, a Thursday, on a whole second (and minute, hour, day).
inline const unix_ms t0 = at("2026-01-01T00:00:00Z");
constexpr unix_ms sec = 1000;
constexpr unix_ms minute = 60 * sec;

inline proto::task make_task(uint64_t id, std::string schedule,
                      overlap_policy overlap = overlap_policy::allow) {
  proto::task t;
  t.id = id;
  t.name = "task-" + std::to_string(id);
  t.kind = proto::task_kind::noop;
  t.schedule = std::move(schedule);
  t.overlap = overlap;
  t.created_at = t0 - 3'600'000;
  return t;
}

inline proto::task_runtime no_runtime(uint64_t id) {
  proto::task_runtime rt;
  rt.task_id = id;
  return rt;
}

inline proto::task_runtime runtime_at(uint64_t id, unix_ms last_slot) {
  proto::task_runtime rt;
  rt.task_id = id;
  rt.last_slot = last_slot;
  rt.last_instance_id = proto::make_instance_id(id, last_slot, 0);
  rt.last_state = instance_state::success;
  return rt;
}

inline proto::instance make_instance(uint64_t task_id, unix_ms slot, instance_state state) {
  proto::instance x;
  x.id = proto::make_instance_id(task_id, slot, 0);
  x.task_id = task_id;
  x.slot = slot;
  x.state = state;
  return x;
}

inline std::vector<unix_ms> slots_of(const decisions& d, uint64_t task_id) {
  std::vector<unix_ms> out;
  for (auto& f : d.fires)
    if (f.task_id == task_id) out.push_back(f.slot);
  return out;
}

inline std::vector<unix_ms> slots_of(const decisions& d) {
  std::vector<unix_ms> out;
  for (auto& f : d.fires) out.push_back(f.slot);
  return out;
}

inline std::vector<unix_ms> every(unix_ms first, unix_ms step, size_t n) {
  std::vector<unix_ms> out;
  for (size_t i = 0; i < n; ++i) out.push_back(first + static_cast<unix_ms>(i) * step);
  return out;
}

// What the trigger actor does with a committed fire: the pending instance arrives through
// observe() and the proposal is settled.
inline void commit(planner& p, uint64_t task_id, unix_ms slot,
            instance_state state = instance_state::pending) {
  p.observe(make_instance(task_id, slot, state));
  proto::fire_slot s;
  s.task_id = task_id;
  s.slot = slot;
  p.settle(s);
}

inline void commit_all(planner& p, const decisions& d) {
  for (auto& f : d.fires) commit(p, f.task_id, f.slot);
}

// Drives `p` the way the trigger actor does: collects at every due instant up to `until`,
// and collects again at the same instant while next_due() says something is due already.
// Every fire is committed as a pending instance unless `commit_fires` is false.
inline std::vector<proto::fire_slot> drive(planner& p, unix_ms until, bool commit_fires = true) {
  std::vector<proto::fire_slot> out;
  unix_ms now = std::numeric_limits<unix_ms>::min();
  for (int guard = 0; guard < 100'000; ++guard) {
    auto due = p.next_due();
    if (!due || *due > until) return out;
    now = std::max(now, *due);
    auto d = p.collect(now);
    if (commit_fires) commit_all(p, d);
    out.insert(out.end(), d.fires.begin(), d.fires.end());
  }
  ADD_FAILURE() << "planner never became idle";
  return out;
}

inline std::vector<unix_ms> slots_of(const std::vector<proto::fire_slot>& fs) {
  std::vector<unix_ms> out;
  for (auto& f : fs) out.push_back(f.slot);
  return out;
}

}  // namespace testing_support
}  // namespace aisched::trigger
