// GET /api/v1/cluster/snapshot (cluster_admin, audited as cluster.snapshot):
// the leader streams a backup file (common/backup_file.hpp) of its applied
// state at the index it names in the header X-Aisched-Snapshot-Index and in the
// file. The export (storage/backup_export) pins a RocksDB snapshot and is read
// by a detached actor of its own, a piece at a time, while the client keeps up
// (at most a few MiB wait in the server), so scheduling never waits for it. A
// follower answers 503 not_leader naming the leader: save from its gateway.
#pragma once

#include "gateway/api.hpp"

namespace aisched::gateway {

void get_cluster_snapshot(route_call& c);  // GET /api/v1/cluster/snapshot

}  // namespace aisched::gateway
