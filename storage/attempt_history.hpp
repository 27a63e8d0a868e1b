// The attempt history of runs: one proto::attempt_record per ended attempt in
// the `attempts` column family, written by the state machine's applier in the
// batch that ends the attempt (so every replica holds the same history) and
// read by state_machine::list_attempts. Capped per record and per instance.
#pragma once

#include <string>
#include <string_view>

#include <caf/expected.hpp>

#include "proto/types.hpp"

namespace aisched::storage {

class batch_ctx;
class rocks;

/// Whether a move from `from` to `to` ends the attempt in flight: it was
/// dispatched or running and becomes final or waits to be retried.
bool ends_attempt(proto::instance_state from, proto::instance_state to);

/// The record of the attempt `x` ends with `outcome` (success, failed,
/// timed_out or cancelled), from `x` as it is after the ending transition.
/// Its output is the last proto::attempt_output_cap bytes of `x.output`, cut
/// at a UTF-8 character boundary; a cancelled attempt reported nothing, so
/// it carries no exit code nor output (those of `x` are an earlier attempt's).
proto::attempt_record ended_attempt(const proto::instance& x, proto::instance_state outcome);

/// The record of the attempt of `x` still in flight (dispatched or running).
proto::attempt_record current_attempt(const proto::instance& x);

/// Adds `r` to the history of the instance at `instance_key` in `ctx`'s batch,
/// dropping the record proto::attempts_kept attempts older, so at most that
/// many are kept (the newest).
void record_attempt(batch_ctx& ctx, const std::string& instance_key,
                    const proto::attempt_record& r);

/// The stored records of the instance at `instance_key`, oldest first, then
/// its attempt in flight, if any. Safe concurrently with apply.
[[nodiscard]] caf::expected<proto::attempt_list> read_attempts(rocks& db, const std::string& instance_key,
                                                 const proto::instance& x);

}  // namespace aisched::storage
