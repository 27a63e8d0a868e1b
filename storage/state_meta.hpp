// The state machine's bookkeeping in the meta column, used only by
// storage/state_machine.cpp: reading its u64 keys, the per-state instance
// counts (stored beside the applied index, counted once for an old database),
// and publishing those counts and a batch's task mutations as metrics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

#include "storage/batch_ctx.hpp"
#include "storage/state_machine.hpp"

namespace aisched::storage {

class rocks;

inline constexpr std::string_view instance_counts_key = "instance_counts";  // one u64 per state

/// The u64 under `key` in the meta column; `fallback` when absent.
[[nodiscard]] caf::expected<uint64_t> read_meta(rocks& db, std::string_view key, uint64_t fallback);
std::string encode_counts(const state_machine::state_counts& counts);
[[nodiscard]] caf::expected<state_machine::state_counts> load_counts(rocks& db);
void publish_counts(const state_machine::state_counts& counts);
/// Ids are never reused: an error (corrupted) when a task id at or above `next`,
/// the stored task id counter, is present. The counter is written in the same
/// batch as every create, so such a task means the meta record was lost.
[[nodiscard]] caf::error check_task_ids(rocks& db, uint64_t next);
void publish_mutations(const batch_effects& fx);

}  // namespace aisched::storage
