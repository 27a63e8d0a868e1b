// The backup file (issue 46): one consistent snapshot of a cluster's applied
// state as a single file. Pure (bytes in, bytes out, SHA-256 through OpenSSL):
// storage/backup_export writes one from a pinned RocksDB snapshot, the gateway
// streams it (GET /api/v1/cluster/snapshot), `aischedctl snapshot status`
// inspects it offline and `aisched restore` seeds a data directory from it.
// In common/ rather than storage/ because tools may include only proto/ and
// common/ (tests/layers/check_include_direction.py).
//
// Layout (integers big-endian):
//   magic       16 bytes  "AISCHED-BACKUP\n\0"
//   layout      u32       the file layout (backup_layout)
//   data_format u32       the encoding of the records (storage::current_format)
//   header_len  u32, then header_len bytes: the header's fields in order
//               (strings as u32 length + bytes; later fields may be appended
//               within the same layout, and readers skip what they do not know)
//   records     each [column u8][key len u32][key][value len u32][value]
//               (the chunk format of storage/snapshot.cpp, passed through)
//   trailer     [0xFF][record count u64]["AISCHEND" 8 bytes][SHA-256 32 bytes]
// The SHA-256 covers every byte before it. A reader checks the magic and the
// versions first (a newer one is refused by name), then that the trailer is
// where it belongs (else the file is truncated), then the checksum, and only
// then parses header and records.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "proto/membership.hpp"

namespace aisched::backup {

/// The file layout this build writes, and the newest it reads.
constexpr uint32_t backup_layout = 1;

/// A column the records use: its byte in the records and its name, so a file
/// says what it holds without the reader knowing storage's column numbers.
struct column_info {
  uint8_t id = 0;
  std::string name;
};

/// What a backup says about itself.
struct backup_header {
  uint32_t layout = backup_layout;
  uint32_t data_format = 0;  // storage::current_format of the build that wrote it
  std::string written_by;    // that build's version
  std::string cluster_id;    // of the cluster it was taken from
  std::string node_id;       // the member (its leader) that wrote it
  uint64_t index = 0;        // the applied index the records are the state of
  uint64_t term = 0;         // the term of that entry; 0 if it was not at hand
  int64_t created_at_ms = 0;  // Unix milliseconds
  /// The key check values (common/secret_crypto key_check) of the cluster keys
  /// that wrap the data keys among the records: empty when it holds no secrets.
  std::vector<std::string> key_checks;
  proto::membership members;  // the membership at `index`
  std::vector<column_info> columns;
};

/// Produces the bytes of one backup file in order. Not thread-safe.
class backup_writer {
 public:
  explicit backup_writer(backup_header h);
  ~backup_writer();
  backup_writer(const backup_writer&) = delete;
  backup_writer& operator=(const backup_writer&) = delete;

  /// The file's first bytes (magic, versions, header). Call once, first.
  std::string begin();

  /// Passes `chunk`, whole records in the format above, through into the
  /// file. A malformed chunk, or a record of a column the header does not
  /// list, is errc::internal (a bug of the caller) and nothing is added.
  [[nodiscard]] caf::expected<std::string> records(std::string chunk);

  /// The trailer with the checksum. Call once, last.
  std::string finish();

  uint64_t record_count() const { return records_; }
  /// The checksum as hex, once finish() was called.
  const std::string& checksum() const { return checksum_; }

 private:
  struct digest;
  backup_header header_;
  std::unique_ptr<digest> digest_;
  uint64_t records_ = 0;
  std::string checksum_;
};

/// What reading a whole backup found.
struct backup_summary {
  backup_header header;
  std::map<std::string, uint64_t> records_by_column;  // by column name
  uint64_t records = 0;
  uint64_t bytes = 0;    // the file's size
  std::string checksum;  // SHA-256 as hex, verified
};

/// Called for each record, in file order, after the checksum verified. The
/// views are valid during the call only. An error stops the read with it.
using record_fn =
    std::function<caf::error(const column_info& column, std::string_view key, std::string_view value)>;

/// Reads the backup in `in` (seekable, positioned anywhere: read from its
/// start): checks magic, versions, trailer and checksum in one pass, then
/// parses the header and hands each record to `on_record` (may be null) in a
/// second. Errors, each naming what is wrong:
///  - errc::invalid_argument, field "format": a layout or data format newer
///    than this build reads (the message names both);
///  - errc::corrupted, field "file": not a backup (magic), truncated (no
///    trailer at the end), "checksum mismatch", or a malformed header or record;
///  - errc::storage_error: `in` could not be read.
/// `data_format_limit` is the newest data format the caller reads
/// (storage::current_format; tools pass the one they were built with).
[[nodiscard]] caf::expected<backup_summary> read_backup(std::istream& in,
                                                        uint32_t data_format_limit,
                                                        const record_fn& on_record = nullptr);

}  // namespace aisched::backup
