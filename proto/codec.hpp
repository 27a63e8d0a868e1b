// The one binary codec: CAF's binary serializer over a proto type's inspect()
// (a run's instance and report written and read by hand, the same bytes).
// Used for RocksDB values and the raft log; messages between actors use the
// same inspect() through CAF itself.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/expected.hpp>

#include "proto/errors.hpp"
#include "proto/validity.hpp"
#include "proto/invariant.hpp"

namespace aisched::proto {

namespace detail {

/// Serializes `x` into a byte string with CAF's binary serializer.
template <class T>
std::string caf_encode(const T& x) {
  std::vector<char> buf;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), buf};
  auto err = sink(const_cast<T&>(x));
  AISCHED_INVARIANT(!err, "a proto value did not encode");
  return std::string(buf.begin(), buf.end());
}

}  // namespace detail

/// Serializes `x` into a byte string. Serializing a proto type cannot fail for
/// valid values; a failure is a broken invariant and aborts.
template <class T>
std::string encode(const T& x) {
  return detail::caf_encode(x);
}

namespace detail {

/// Deserializes a `T` from `bytes` with CAF's binary deserializer; see decode.
template <class T>
caf::expected<T> caf_decode(std::string_view bytes) {
  T x;
  try {
    caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr), bytes.data(),
                                    bytes.size()};
    if (auto err = source(x))
      return make_error(errc::corrupted, "cannot decode stored value");
    if (source.remaining() != 0)
      return make_error(errc::corrupted, "trailing bytes after stored value");
  } catch (const std::exception& e) {
    return make_error(errc::corrupted, std::string("cannot decode stored value: ") + e.what());
  }
  if (!enums_valid(x)) return make_error(errc::corrupted, "stored value has an invalid enum");
  return x;
}

}  // namespace detail

/// Deserializes a `T` from `bytes`. Anything but the exact encoding of a valid
/// value is `corrupted`: a short buffer, trailing bytes, or an enum byte
/// outside its enum. Never throws.
template <class T>
caf::expected<T> decode(std::string_view bytes) {
  return detail::caf_decode<T>(bytes);
}

/// The records every run goes through, its instance (written twice, read back
/// by retention) and its worker's report (kept in the worker's outbox), are
/// written and read by hand (proto/hand_codec.cpp): byte for byte what CAF's
/// serializer makes of their inspect(), without CAF's virtual call and error
/// value per field (tools/bench/bench_codec). Bytes the hand reader does not
/// take at once (not the canonical ones) are left to CAF's, so both accept
/// and refuse the same input (tests/proto/proto_test).
template <>
std::string encode<instance>(const instance& x);
template <>
caf::expected<instance> decode<instance>(std::string_view bytes);
template <>
std::string encode<run_result>(const run_result& x);
template <>
caf::expected<run_result> decode<run_result>(std::string_view bytes);

}  // namespace aisched::proto
