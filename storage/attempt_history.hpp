// The attempt history of runs: one proto::attempt_record per ended attempt in
// the `attempts` column family, written by the state machine's applier (so
// every replica holds the same history) and read by state_machine::
// list_attempts. An attempt that ends its run (success, or failed for good)
// is not written when it ends: the finished instance holds the same facts, and
// a key less per run is apply time saved (#17). It is written when the run is
// retried by hand, before the instance takes the next attempt. Capped per
// record and per instance.
#pragma once

#include <optional>
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

/// The record of the attempt of cancelled run `x` once its worker reported how
/// the killed attempt ended: as ended_attempt(x, cancelled), with the exit code
/// and the output tail `x` took from that report.
proto::attempt_record reported_cancel(const proto::instance& x);

/// The record of the attempt of `x` still in flight (dispatched or running).
proto::attempt_record current_attempt(const proto::instance& x);

/// Whether a move from `from` to `to` ends the attempt in flight and leaves
/// its record to the instance: the run ends with it (see the top).
bool attempt_kept_by_instance(proto::instance_state from, proto::instance_state to);

/// The attempt a finished run `x` ended with, if its instance is where it is
/// kept: `x` is finished, that attempt was dispatched, and `last_stored` (the
/// newest attempt with a record, 0: none) is older. Nothing otherwise (a run
/// cancelled before dispatch, or after waiting to retry, whose last attempt
/// is recorded already).
std::optional<proto::attempt_record> unrecorded_final(const proto::instance& x,
                                                      uint32_t last_stored);

/// Adds `r` to the history of the instance at `instance_key` in `ctx`'s batch,
/// dropping the record proto::attempts_kept attempts older, so at most that
/// many are kept (the newest).
void record_attempt(batch_ctx& ctx, const std::string& instance_key,
                    const proto::attempt_record& r);

/// Writes the record of the attempt finished run `x` (at `instance_key`) ended
/// with, if only its instance held it: called before `x` takes another attempt.
[[nodiscard]] caf::error keep_final_attempt(batch_ctx& ctx, const std::string& instance_key,
                                            const proto::instance& x);

/// The stored records of the instance at `instance_key`, oldest first, then
/// the attempt its instance holds (in flight, or the one that finished it, see
/// the top), at most proto::attempts_kept in all. Safe concurrently with apply.
[[nodiscard]] caf::expected<proto::attempt_list> read_attempts(rocks& db, const std::string& instance_key,
                                                 const proto::instance& x);

}  // namespace aisched::storage
