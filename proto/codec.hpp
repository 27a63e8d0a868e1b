// The one binary codec: CAF's binary serializer over a proto type's inspect().
// Used for RocksDB values and the raft log; messages between actors use the
// same inspect() through CAF itself.
#pragma once

#include <string>
#include <string_view>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/expected.hpp>

#include "proto/errors.hpp"

namespace aisched::proto {

/// Serializes `x` into a byte string. Serializing a proto type cannot fail for
/// valid values; a failure is a broken invariant and aborts.
template <class T>
std::string encode(const T& x) {
  std::vector<char> buf;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), buf};
  auto err = sink(const_cast<T&>(x));
  if (err) std::abort();
  return std::string(buf.begin(), buf.end());
}

/// Deserializes a `T` from `bytes`; trailing bytes or a short buffer are `corrupted`.
template <class T>
caf::expected<T> decode(std::string_view bytes) {
  T x;
  caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr), bytes.data(),
                                  bytes.size()};
  if (auto err = source(x))
    return make_error(errc::corrupted, "cannot decode stored value");
  if (source.remaining() != 0)
    return make_error(errc::corrupted, "trailing bytes after stored value");
  return x;
}

}  // namespace aisched::proto
