// Run-history retention in the state machine: the rule that says which run
// records of a task its policy lets go (pure), the sweep that finds them for
// the leader's retention actor (actors/retention), the apply of the
// `prune_history` it proposes (`prune_runs` in logs written before it), and
// the mark that makes a removed run answer `gone`. Removing a run removes its
// instance record, its state-index entry, its attempt history and its failure
// analysis, in the batch of the command: a task's oldest runs as one range
// deletion of each, the others one by one.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "proto/commands.hpp"
#include "proto/interfaces.hpp"
#include "proto/types.hpp"

namespace aisched::storage {

class batch_ctx;
class rocks;

namespace retention {

/// The policy that holds for a task: its own, each field left at 0 taking
/// the default's.
proto::retention_policy effective(const proto::retention_policy& own,
                                  const proto::retention_policy& defaults);

/// What a policy lets go of one task at one instant, for a walk of the
/// task's run records in key order (oldest slot first).
struct cut {
  uint64_t excess = 0;  // the oldest this many records are beyond keep_runs
  unix_ms ended_before = std::numeric_limits<unix_ms>::min();  // beyond keep_for

  /// Whether record `i` of the walk (0: the oldest), `x`, goes: it has
  /// finished, and it is beyond the count or ended before the age bound.
  bool lets_go(uint64_t i, const proto::instance& x) const {
    return proto::is_terminal(x.state) && (i < excess || x.finished_at < ended_before);
  }

  /// Whether the walk can stop at record `i` of slot `slot`: within the count,
  /// and scheduled after the age bound. (A run ends after its slot, so no
  /// later record ended before the bound; one that ended before its slot, a
  /// cancel ahead of it, stays until the count lets it go.)
  bool past(uint64_t i, unix_ms slot) const { return i >= excess && slot >= ended_before; }
};

/// The cut of policy `p` (effective: 0 in a field is no bound) for a task
/// with `runs` run records, at `now`.
cut cut_for(const proto::retention_policy& p, uint64_t runs, unix_ms now);

}  // namespace retention

/// The sweep: the runs of the tasks from `q.from` on that retention lets
/// go (storage side of state_machine::scan_prunable). Safe concurrently with
/// apply. A task that was deleted has no policy nor count left: its runs go
/// by the default keep_for only.
[[nodiscard]] caf::expected<proto::prune_page> scan_prunable(rocks& db,
                                                             const proto::prune_query& q);

/// Applies `c` to `ctx`; returns how many runs it removed.
[[nodiscard]] caf::expected<uint64_t> apply_prune(batch_ctx& ctx, const proto::prune_runs& c);
[[nodiscard]] caf::expected<uint64_t> apply_prune(batch_ctx& ctx, const proto::prune_history& c);

/// The `gone` error for the run of `tenant` that `instance_id` (task, slot)
/// names when it is not stored, if retention removed it; none otherwise.
[[nodiscard]] caf::expected<std::optional<caf::error>> gone_if_pruned(
    rocks& db, std::string_view tenant, uint64_t task_id, unix_ms slot,
    std::string_view instance_id);

}  // namespace aisched::storage
