// Structural validation of user input: turns a bad task or worker document into
// one precise `invalid_argument` error (field + reason). Schedule and time-zone
// syntax are checked by actors/trigger/schedule, which the gateway calls as well.
#pragma once

#include <caf/error.hpp>

#include "proto/controls.hpp"
#include "proto/types.hpp"

namespace aisched::proto {

/// Limits on user input.
constexpr size_t max_name_length = 200;
constexpr size_t max_command_length = 64 * 1024;
constexpr uint32_t max_shards = 1024;
/// Runs one bulk enqueue (POST /api/v1/tasks/{id}/runs) may carry.
constexpr size_t max_bulk_runs = 1000;
constexpr uint32_t max_attempts_limit = 100;
constexpr uint32_t max_runs_limit = 1'000'000'000;
constexpr duration_ms max_timeout = 7LL * 24 * 3'600'000;
/// Bounds of a retention policy (a task's, or the cluster's default).
constexpr duration_ms max_keep_for = 10LL * 365 * 24 * 3'600'000;  // 10 years
constexpr uint32_t max_keep_runs = 10'000'000;

/// Returns an empty error if `r` is a valid retention policy; error fields are
/// `prefix` + "keep_for" / "keep_runs".
caf::error validate_retention(const retention_policy& r, const std::string& prefix);

/// Returns an empty error if `t` is a valid task definition.
caf::error validate_task(const task& t);

/// Returns an empty error if `w` is a valid worker registration.
caf::error validate_worker(const worker& w);

}  // namespace aisched::proto
