// The registered migrations between data formats (storage/format_version.hpp):
// one step per format, from `from` to `from + 1`, each written in one synced
// RocksDB batch together with the format it reaches (raft_meta "format"), so a
// crash leaves the directory at the step before or after, never between.
//
//   0 -> 1  raft log entries become opaque (proto::command: a type number and
//           the command's bytes) instead of CAF's variant of the 30 commands
//           of format 0 (a one-byte alternative index before the command's
//           fields). The number of each command is its format-0 index.
//   1 -> 2  every record, command and raft entry is written in the wire
//           format (proto/wire.hpp) instead of CAF's positional encoding: the
//           fields numbered, so later builds add fields without a new format.
//           Values storage/ lays out by hand and the AI agent's JSON stay.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "proto/codec.hpp"
#include "proto/commands.hpp"
#include "storage/format_version.hpp"

namespace rocksdb {
class WriteBatch;
}

namespace aisched::storage {

class rocks;

/// One registered migration: rewrites what format `from` stored into format
/// `from + 1`, adding its writes to the batch.
struct migration_step {
  uint32_t from;
  const char* what;  // for the log: what the step changes
  caf::error (*run)(rocks& db, rocksdb::WriteBatch& batch);
};

/// Brings the data of `db` (in `dir`, whose FORMAT said `found`, see
/// check_format) to current_format: runs every registered step from the
/// format the database holds, each in one synced batch that also records the
/// format it reaches, then stamps `dir`/FORMAT with current_format and `build`.
/// Answers what each step that ran did (empty when the data was current). A
/// database of a newer format is errc::invalid_argument; a step that cannot
/// read what it migrates is errc::corrupted, naming the record; either way the
/// data stays as it was before that step.
[[nodiscard]] caf::expected<std::vector<std::string>> migrate_format(rocks& db, const std::string& dir,
                                                                     const format_stamp& found,
                                                                     const std::string& build);

/// Every step, by `from`, ascending from 0 without gaps.
const std::vector<migration_step>& migration_steps();

/// The format the database says it holds (raft_meta "format"), written by
/// every migration step; nothing when no step ever ran (format 0, or a
/// directory whose FORMAT file alone says).
[[nodiscard]] caf::expected<std::optional<uint32_t>> stored_format(rocks& db);

/// Adds to `batch` that the database holds data of `format` (what a step
/// records; a restore, storage/backup_restore, says so of the records it writes).
void put_stored_format(rocks& db, rocksdb::WriteBatch& batch, uint32_t format);

/// Reads a raft log entry as format 0 wrote it, as format 1 held it (its
/// command's bytes CAF's encoding); errc::corrupted when the bytes are not
/// one, or its command does not decode.
[[nodiscard]] caf::expected<proto::log_entry> log_entry_from_format_0(std::string_view bytes);

/// Reads a raft log entry as format 1 wrote it, its command re-encoded as
/// format 2 holds it; errc::corrupted when the bytes are not one, or its
/// command does not decode.
[[nodiscard]] caf::expected<proto::log_entry> log_entry_from_format_1(std::string_view bytes);

/// A record T as data format `format` stored it: CAF's encoding before
/// format 2, the wire codec's from it.
template <class T>
caf::expected<T> record_of_format(std::string_view bytes, uint32_t format) {
  return format >= 2 ? proto::decode<T>(bytes) : proto::format_1::decode<T>(bytes);
}

/// Command `c` of format 0 or 1 (its bytes CAF's encoding of its struct) as
/// format 2 holds it (the wire codec's); errc::corrupted when it does not read.
[[nodiscard]] caf::expected<proto::command> command_to_format_2(const proto::command& c);

}  // namespace aisched::storage
