// A backup file (common/backup_file.hpp) of this node's applied state, made
// piece by piece from a pinned snapshot_export: the header describes the state
// at the export's applied index (cluster id, term, membership, the key checks
// of the secrets' cluster keys), then the records of every state column, then
// the trailer. The gateway's GET /api/v1/cluster/snapshot streams the pieces
// from a detached actor; tests write them to a string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "common/backup_file.hpp"

namespace aisched::storage {

class rocks;
class snapshot_export;

class backup_export {
 public:
  /// Who writes the file, for its header.
  struct origin {
    std::string node_id;
    std::string written_by;  // the build's version
    int64_t created_at_ms = 0;
  };

  /// Pins the current state of `db` and reads what the header says from that
  /// same state. `db` must outlive the export; not thread-safe.
  [[nodiscard]] static caf::expected<std::unique_ptr<backup_export>> open(rocks& db, origin from);

  ~backup_export();
  backup_export(const backup_export&) = delete;
  backup_export& operator=(const backup_export&) = delete;

  const backup::backup_header& header() const { return header_; }

  /// The next bytes of the file: the header first, then records in pieces of
  /// about `max_bytes` (a single larger record goes whole), then the trailer;
  /// "" once everything was handed out.
  [[nodiscard]] caf::expected<std::string> next(size_t max_bytes);

  bool done() const { return stage_ == stage::done; }
  uint64_t bytes() const { return bytes_; }
  uint64_t records() const;
  /// The file's SHA-256 as hex, once done().
  const std::string& checksum() const;

 private:
  enum class stage { header, records, done };
  backup_export() = default;

  std::unique_ptr<snapshot_export> source_;
  backup::backup_header header_;
  std::unique_ptr<backup::backup_writer> writer_;
  stage stage_ = stage::header;
  uint64_t bytes_ = 0;
};

}  // namespace aisched::storage
