// GET /healthz and GET /readyz. /healthz is liveness: the process serves HTTP
// (it asks no actor, so it stays cheap). /readyz is readiness: this node knows
// a leader (raft), its last storage write succeeded, and its raft actor
// answers, and (on a leader with --backup-dir) its scheduled backups have not
// failed 3 times in a row; 200 {"ready":true,...} or 503 {"ready":false,"reasons":[...]}
// with the usual error envelope beside them.
#pragma once

#include "gateway/api.hpp"

namespace aisched::gateway {

/// GET /healthz: 200 {"status":"ok"}.
void healthz(reply_fn reply);

/// GET /readyz: asks the raft actor for its status (1 s at most) and reads
/// `ctx.storage_problem` and `ctx.backup_problem`.
void readyz(const api_context& ctx, reply_fn reply);

}  // namespace aisched::gateway
