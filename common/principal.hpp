// Who is asking: the principal the gateway resolves for each request from its
// `Authorization: Bearer` header (gateway/auth.hpp), carried on the request.
#pragma once

#include <string>

#include "proto/auth_types.hpp"

namespace aisched::gateway {

/// Ordered: cluster_admin > admin > operator_ > viewer. cluster_admin is the
/// only role above tenants (the group, the node, other tenants' users).
using role = proto::role;

struct principal {
  std::string subject;              // user name, "token:<id>"; "anonymous" with auth off
  std::string tenant = "default";
  role r = role::admin;             // always set by the gate (auth off: cluster_admin)
  bool authenticated = false;
};

}  // namespace aisched::gateway
