// Who is asking: the principal the gateway resolves for each request from its
// `Authorization: Bearer` header (gateway/auth.hpp), carried on the request.
#pragma once

#include <string>

#include "proto/auth_types.hpp"

namespace aisched::gateway {

/// Ordered: admin > operator_ > viewer.
using role = proto::role;

struct principal {
  std::string subject;              // user name, "token:<id>"; "anonymous" with auth off
  std::string tenant = "default";
  role r = role::admin;             // auth off: every request is admin of "default"
  bool authenticated = false;
};

}  // namespace aisched::gateway
