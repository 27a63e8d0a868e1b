// The files of scheduled backups (README "Backups"): one backup of this node's
// applied state written into the backup directory as a backup file
// (common/backup_file.hpp, the format of GET /api/v1/cluster/snapshot), and
// the rotation that keeps the newest N. Blocking file I/O and RocksDB reads:
// the backup actor runs write_backup on a thread of its own, never on a CAF
// scheduler thread. No clock is read here: the caller names the instant.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "proto/time.hpp"

namespace aisched::storage {
class rocks;
}

namespace aisched::backups {

/// One scheduled backup to write.
struct write_request {
  std::string dir;         // the backup directory (must exist)
  std::string node_id;     // in the file's header
  std::string written_by;  // the build's version, in the header
  unix_ms at = 0;          // the creation time: in the header and the name
  uint32_t keep = 24;      // backups of this cluster kept in `dir` (at least 1)
};

/// What a scheduled backup wrote.
struct written {
  std::string file;  // its name in the directory
  uint64_t index = 0;
  uint64_t bytes = 0;
  uint64_t records = 0;
  std::string checksum;              // SHA-256 as hex, read back and verified
  std::vector<std::string> removed;  // older backups the rotation deleted
};

/// The short form of a cluster id in file names: its first 8 letters and
/// digits ("cluster" when it has none).
std::string cluster_tag(std::string_view cluster_id);

/// The name of the backup of the cluster tagged `tag` at `index`, created at
/// `at`: aisched-<UTC YYYYMMDDTHHMMSS.mmmZ>-<tag>-<index>.snap. Names of one
/// cluster sort by time (the instant first, at fixed width).
std::string file_name(unix_ms at, std::string_view tag, uint64_t index);

/// Whether `name` is a file_name of the cluster tagged `tag`: the only files
/// rotation deletes (never a .tmp, another cluster's backup or anything else).
bool is_backup_of(std::string_view name, std::string_view tag);

/// Pins `db`'s applied state and writes it into `req.dir`: NAME.tmp (0600),
/// fsynced, read back with backup::read_backup and compared with what was
/// written (checksum and records), renamed to NAME, the directory fsynced;
/// then rotate(). Checks `stopping` between pieces (the node shuts down:
/// errc::unavailable). Any failure removes NAME.tmp and is an error naming the
/// step and the path (storage_error for file I/O, corrupted when the read-back
/// does not verify, the export's own errors); a failed rotation is an error
/// too (the new file is kept: its name is in the message).
[[nodiscard]] caf::expected<written> write_backup(storage::rocks& db, const write_request& req,
                                                  const std::atomic<bool>& stopping);

/// Deletes the backups of the cluster tagged `tag` in `dir` but the newest
/// `keep`, and never `current` (the file just written); fsyncs `dir` when it
/// deleted one. The names deleted, or an error naming the file that could not
/// be listed or deleted.
[[nodiscard]] caf::expected<std::vector<std::string>> rotate(const std::string& dir,
                                                             std::string_view tag, uint32_t keep,
                                                             const std::string& current);

}  // namespace aisched::backups
