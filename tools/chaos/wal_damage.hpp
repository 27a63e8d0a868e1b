// aisched-chaos, WAL damage (the damage_wal fault): XORs 64 bytes in the
// middle of a member's newest RocksDB write-ahead log, the damage that README
// "Storage faults" says stops a node at start. Files only: no node, no RocksDB.
#pragma once

#include <cstdint>
#include <string>

namespace aisched::chaos {

/// What damage_newest_wal() did.
struct wal_damage {
  std::string file;      // the damaged write-ahead log ("" when skipped)
  uintmax_t size = 0;    // its size in bytes
  uintmax_t offset = 0;  // where the 64 damaged bytes start: size / 2
  std::string skipped;   // why nothing was damaged ("" when something was)
};

/// Damages the newest write-ahead log in `data_dir` (the highest-numbered
/// NNNNNN.log) by XORing the 64 bytes at its middle with 0x5a; a second call on
/// the same file puts them back. Skips, saying why, when there is none or it is
/// smaller than `min_size` bytes. The default keeps the middle out of the last
/// of RocksDB's 32 KiB log blocks: a start that tolerates a torn tail
/// (wal_recovery_mode kTolerateCorruptedTailRecords) may take damage there for a
/// write a crash tore and drop the rest, which README "Storage faults" names as
/// the limit of what is detected. Requires that no process has the directory
/// open: the node must be down.
wal_damage damage_newest_wal(const std::string& data_dir, uintmax_t min_size = 96 * 1024);

}  // namespace aisched::chaos
