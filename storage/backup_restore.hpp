// Seeding a new cluster's data directory from a backup file (issue 46 item 3;
// `aisched restore`, runtime/restore.cpp): the file is checked whole (format,
// trailer, checksum) and, when it holds secrets and a key is given, against
// that cluster key; then its records go into a fresh RocksDB in one batch, with
// the new cluster's membership and id, and the runs it had in flight are ended
// as lost through the state machine (retried per their policy, never re-run as
// the same attempt). Everything is written to a temporary directory beside the
// target and renamed onto it at the end: a failed restore leaves nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "common/backup_file.hpp"
#include "common/secret_crypto.hpp"
#include "proto/membership.hpp"

namespace aisched::storage {

struct restore_plan {
  std::string file;      // the backup
  std::string data_dir;  // must not exist, or be an empty directory
  proto::membership members;  // the new cluster's membership
  /// The new cluster's id, given the backup's header (runtime/restore.cpp
  /// derives it from the header and `members`, so every member restoring the
  /// same file with the same --peers records the same id).
  std::function<std::string(const backup::backup_header&)> cluster_id_for;
  std::optional<secret_crypto::key> secrets_key;  // --secrets-key-file, if given
  std::string written_by;  // this build's version, for FORMAT
};

struct restore_report {
  backup::backup_summary backup;
  std::string cluster_id;      // the new one
  uint64_t index = 0;          // applied index of the restored state
  uint64_t term = 0;           // term of its log base
  uint64_t runs_lost = 0;      // in flight in the backup: ended worker_lost
  uint64_t runs_retrying = 0;  // of those, retry_waiting per their task's policy
  bool secrets_unchecked = false;  // the backup holds secrets and no key was given
};

/// Restores `p.file` into `p.data_dir`. Errors, nothing written then:
///  - invalid_argument "data_dir": it exists and is not an empty directory;
///  - invalid_argument "from": the file cannot be opened;
///  - invalid_argument "format": a newer file layout or data format (both named);
///  - corrupted "file": not a backup, truncated, checksum mismatch, malformed;
///  - invalid_argument "secrets-key-file": the backup's data keys are wrapped
///    by another cluster key (both key check values named);
///  - storage errors as they come.
/// Memory: every record is held in one WriteBatch until it is written.
[[nodiscard]] caf::expected<restore_report> restore_backup(const restore_plan& p);

/// The reason written on each run that was in flight in the backup.
std::string lost_in_restore(uint64_t index, const std::string& worker_id);

}  // namespace aisched::storage
