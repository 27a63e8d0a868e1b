// The one binary codec of stored and replicated values: the wire codec
// (proto/wire.hpp, Protocol Buffers' wire format with fields numbered by
// inspect(); the schema is proto/schema/aisched.proto). Data format 2 on
// (storage/format_version.hpp). Formats 0 and 1 stored CAF's positional
// binary encoding of the same inspect(): format_1:: reads it, for the
// migrations (storage/migrations.hpp) and the golden files of those formats.
// Messages between actors use inspect() through CAF itself.
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
#include "proto/wire.hpp"

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

/// Deserializes a `T` from `bytes` with CAF's binary deserializer; see format_1::decode.
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

/// Serializes `x` in the wire format. Serializing a proto type cannot fail
/// for valid values; a failure (a non-finite double) is a broken invariant and aborts.
template <class T>
std::string encode(const T& x) {
  return wire::encode(x);
}

/// Deserializes a `T` from its wire bytes: a field absent (written before it
/// existed) stays at its default, fields of later builds are kept where the
/// record has room for them (proto/field.hpp). Bytes that are not a valid
/// value (truncated, a wrong wire type, an enum outside its names, a number
/// that is not finite) are `corrupted`. Never throws.
template <class T>
caf::expected<T> decode(std::string_view bytes) {
  return wire::decode<T>(bytes);
}

/// The encoding of data formats 0 and 1: CAF's binary serializer over
/// inspect(), the fields in order at their C++ widths. Read by the migration
/// to format 2 and the golden files of those formats; written by nothing else.
namespace format_1 {

template <class T>
std::string encode(const T& x) {
  return detail::caf_encode(x);
}

/// Anything but the exact encoding of a valid value is `corrupted`: a short
/// buffer, trailing bytes, or an enum byte outside its enum.
template <class T>
caf::expected<T> decode(std::string_view bytes) {
  return detail::caf_decode<T>(bytes);
}

}  // namespace format_1

}  // namespace aisched::proto
