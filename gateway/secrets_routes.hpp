// The secret routes (/api/v1/secrets, the cluster key rotation) and the
// create-time check of a task's secret references. Values are sealed here,
// on the gateway that receives them, by the node's storage/secret_keeper,
// before anything is proposed to the raft actor; no route ever answers one.
#pragma once

#include <caf/error.hpp>

#include "gateway/route_table.hpp"
#include "proto/types.hpp"

namespace aisched::gateway {

struct api_context;

void list_secrets(route_call& c);        // GET /api/v1/secrets (names and metadata only; no key needed)
void put_secret_route(route_call& c);    // PUT /api/v1/secrets/{name} {"value"}
void delete_secret_route(route_call& c); // DELETE /api/v1/secrets/{name}
void rotate_secrets_key(route_call& c);  // POST /api/v1/cluster/secrets-key/rotate

/// Whether every secret task `t` refers to (its `secrets` map, an HTTP
/// task's `{{secret.NAME}}` in headers and body) exists in its tenant:
/// invalid_argument naming the field otherwise, or when this node has no
/// secrets key (secrets disabled).
caf::error check_secret_refs(const api_context& ctx, const proto::task& t);

}  // namespace aisched::gateway
