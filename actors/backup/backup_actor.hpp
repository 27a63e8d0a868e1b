// The backup actor, leader only, spawned only with --backup-dir: every backup
// interval (1 h by default, --backup-interval) it asks raft whether this node
// leads and, if so, has a backup file of the applied state written into the
// backup directory (backup_files.hpp: NAME.tmp, synced, read back, renamed;
// the newest --backup-keep of this cluster kept). The file I/O runs on the
// backup's own thread (a run_pool of one), never on a CAF scheduler thread;
// one backup is in flight at most. It owns the backup counters
// (backups_total, backup_failures_total, backup_last_success_timestamp_seconds)
// and the backup's readiness reason: after `misses_reported` failures in a
// row, /readyz names it (backup_health, read by the gateway) and the alerter
// POSTs one `backup_failed` alert; a success, or this node no longer leading,
// clears it.
// Talks to: raft (status), the alerter (backup_failed).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "common/activity.hpp"
#include "common/clock.hpp"
#include "common/run_pool.hpp"
#include "proto/interfaces.hpp"

namespace aisched::storage {
class rocks;
}

namespace aisched::backups {

/// Failures in a row after which /readyz shows a reason and the alert goes out.
constexpr uint32_t misses_reported = 3;

/// Why the scheduled backups fail, for /readyz: "" while they work. Written by
/// the backup actor, read by the gateway's threads.
class backup_health {
 public:
  std::string problem() const {
    std::lock_guard<std::mutex> guard(mtx_);
    return problem_;
  }
  void set(std::string p) {
    std::lock_guard<std::mutex> guard(mtx_);
    problem_ = std::move(p);
  }

 private:
  mutable std::mutex mtx_;
  std::string problem_;
};

struct backup_options {
  std::string dir;                   // --backup-dir (exists)
  duration_ms interval = 3'600'000;  // --backup-interval
  uint32_t keep = 24;                // --backup-keep (at least 1)
  std::string node_id;               // in each file's header
  std::string written_by;            // the build's version, in each file's header
  std::shared_ptr<storage::rocks> db;
  /// The thread the files are written on. Null: on the actor's own (tests on
  /// the test coordinator, which no other thread may send to).
  std::shared_ptr<worker::run_pool> io;
  std::shared_ptr<backup_health> health;  // may be null
  proto::alerter_actor alerter;           // may be null: no alert
  wall_clock clock{};                     // names and dates each file (common/clock.hpp)
};

struct backup_state {
  proto::raft_actor raft;
  backup_options opts;
  wall_clock clock;  // opts.clock
  bool writing = false;
  uint64_t round = 0;        // of the backup in flight
  unix_ms started_at = 0;    // its creation time (in its header and name)
  uint64_t backups = 0;      // written by this node
  uint64_t failures = 0;     // rounds that failed
  uint32_t misses = 0;       // failures in a row
  unix_ms last_success = 0;  // creation time of the last file written
  std::string last_file;
  uint64_t last_index = 0;   // the applied index last_file holds
  std::string last_error;
  inspector::activity activity;
  static inline const char* name = "backup";
};

proto::backup_actor::behavior_type backup_actor_impl(
    proto::backup_actor::stateful_pointer<backup_state> self, proto::raft_actor raft,
    backup_options opts);

}  // namespace aisched::backups
