// What a fire creates in the state machine: for each slot of a task that
// still exists, one run per shard (per payload of a bulk enqueue, per worker
// counted for a broadcast), created pending, or dispatched to the worker the
// leader's router placed it on (`fire_placed`: fire and dispatch in one
// command). A slot fired before creates nothing again; the task's runtime
// facts (last slot, run count, scheduled fires for max_runs) follow.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <caf/error.hpp>

#include "proto/commands.hpp"
#include "proto/types.hpp"

namespace aisched::storage {

class batch_ctx;

/// A run placed ahead of or at its instant must report by its instant plus
/// its task's timeout plus this, or it times out.
constexpr duration_ms deadline_grace = 30'000;

/// Run `x` dispatched to `worker` at `at`, as a `dispatch` (or a placed fire)
/// commits it: a run placed ahead of its instant waits for it on the worker
/// first, so its deadline counts from the later of the two.
inline void mark_dispatched(proto::instance& x, std::string worker, unix_ms at,
                            duration_ms timeout) {
  x.state = proto::instance_state::dispatched;
  x.worker_id = std::move(worker);
  x.dispatched_at = at;
  x.error.clear();  // a reason it waited (note_waiting) no longer holds
  x.deadline = std::max(at, x.slot) + timeout + deadline_grace;
}

/// Run id -> the worker it was placed on at its fire (views into the command).
using fire_placements = std::unordered_map<std::string_view, std::string_view>;

/// Creates in `ctx` the runs of `slots` fired at `at` and appends them to
/// `created`; `placed` names the runs created dispatched. An error is a
/// storage fault (a read failed or did not decode).
caf::error create_fired_runs(batch_ctx& ctx, unix_ms at, const std::vector<proto::fire_slot>& slots,
                             const fire_placements& placed, std::vector<proto::instance>& created);

}  // namespace aisched::storage
