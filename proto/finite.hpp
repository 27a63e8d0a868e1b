// Finite numbers only, in the binary format. CAF 0.17 encodes a double with
// pack754, whose normalising loop never ends on an infinity, and its unpack754
// decodes an infinity from an exponent field of all ones: a stored or received
// value could hang the member that re-encodes it. Every double in proto/ is
// inspected between these two checks, so such a value fails instead: it does
// not encode (proto::encode aborts; CAF does not send the message) and does not
// decode (proto::decode answers `corrupted`).
#pragma once

#include <cmath>

#include <caf/meta/load_callback.hpp>
#include <caf/meta/save_callback.hpp>

#include "proto/errors.hpp"

namespace aisched::proto {

namespace detail {
inline auto finite_check(const double& x) {
  return [&x]() -> caf::error {
    if (std::isfinite(x)) return caf::error{};
    return make_error(errc::corrupted, "a number is not finite");
  };
}
}  // namespace detail

/// Put before a double in inspect(): refuses to encode a non-finite value.
inline auto save_finite(const double& x) {
  return caf::meta::save_callback(detail::finite_check(x));
}

/// Put after a double in inspect(): refuses a decoded non-finite value.
inline auto load_finite(const double& x) {
  return caf::meta::load_callback(detail::finite_check(x));
}

}  // namespace aisched::proto
