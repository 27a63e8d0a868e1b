// The commands that move existing runs through their states in the state
// machine: dispatch, report_results (which decides retries), retry, cancel,
// retry_instance, and note_waiting (why a pending run waits). They keep each
// run's attempt history (storage/attempt_history) and its task's last_state in
// step; storage/fire_runs creates the runs, storage/transitions.hpp says which
// moves are legal. Used only by state_machine::apply.
#pragma once

#include <caf/expected.hpp>

#include "proto/commands.hpp"

namespace aisched::storage {

class batch_ctx;

/// Applies `c` to `ctx`. Returns the runs it changed (applied::instances; the
/// caller sets applied::index) or the error that rejects it. dispatch,
/// report_results, retry and cancel succeed if any of their items applied (a
/// repeat counts: it is acknowledged unchanged), else answer the last
/// rejected item's error; note_waiting skips runs no longer pending. A failed
/// read or a record that does not decode comes back as its error (it fails the
/// batch).
[[nodiscard]] caf::expected<proto::applied> apply_run_command(batch_ctx& ctx,
                                                              const proto::dispatch& c);
[[nodiscard]] caf::expected<proto::applied> apply_run_command(batch_ctx& ctx,
                                                              const proto::report_results& c);
[[nodiscard]] caf::expected<proto::applied> apply_run_command(batch_ctx& ctx,
                                                              const proto::retry& c);
[[nodiscard]] caf::expected<proto::applied> apply_run_command(batch_ctx& ctx,
                                                              const proto::note_waiting& c);
[[nodiscard]] caf::expected<proto::applied> apply_run_command(batch_ctx& ctx,
                                                              const proto::retry_instance& c);
[[nodiscard]] caf::expected<proto::applied> apply_run_command(batch_ctx& ctx,
                                                              const proto::cancel& c);

}  // namespace aisched::storage
