// The format version of a data directory (issue 44): which encoding of records,
// raft entries and snapshots its files hold. Kept in a small text file, FORMAT,
// beside RocksDB's files, so that a build reads it before it opens RocksDB and
// never opens data of a newer format read-write (RocksDB writes at open).
//
//   aisched-format 1
//   written-by 0.1.0
//
// Format 0 is CAF's positional encoding of the structs (proto/codec.hpp) with
// raft entries holding a variant of the 30 commands; a directory without the
// file that holds RocksDB data is format 0 too (written before the file
// existed). Format 1 makes raft entries opaque (proto::command). Format 2
// stores every record, command and raft entry in the wire format (proto/wire.hpp:
// Protocol Buffers' wire format, fields numbered by inspect(), schema in
// proto/schema/aisched.proto), so a field added later reads from older data at
// its default and older builds keep the fields they do not know. Each format
// registers its migration from the one before (storage/migrations.hpp); a node
// migrates an older directory step by step at start and stamps it when done.
#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace aisched::storage {

/// The format this build writes, and the newest it reads.
constexpr uint32_t current_format = 2;

/// What FORMAT says.
struct format_stamp {
  uint32_t version = 0;
  std::string written_by;  // the version of the build that wrote it ("" if unknown)
};

/// Parses the text of a FORMAT file; errc::corrupted naming what is wrong.
[[nodiscard]] caf::expected<format_stamp> parse_format(const std::string& text);

/// The text of a FORMAT file for `s`.
std::string format_text(const format_stamp& s);

/// Reads `dir`/FORMAT. A directory without it is format 0 (it holds data of a
/// build from before the file, or nothing yet).
[[nodiscard]] caf::expected<format_stamp> read_format(const std::string& dir);

/// Writes `dir`/FORMAT saying `s`: written, synced and renamed into place.
[[nodiscard]] caf::error write_format(const std::string& dir, const format_stamp& s);

/// Called before the data in `dir` is opened by a build of version `build`:
/// what `dir`/FORMAT says. A format newer than current_format is refused:
/// errc::invalid_argument (field "data_dir"), the message naming both formats
/// and the build that wrote the data. Nothing in `dir` is changed; once
/// RocksDB is open, migrate_format (storage/migrations.hpp) brings an older
/// format up to date and stamps it.
[[nodiscard]] caf::expected<format_stamp> check_format(const std::string& dir,
                                                       const std::string& build);

}  // namespace aisched::storage
