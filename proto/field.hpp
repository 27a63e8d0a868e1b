// The name of a field in inspect(), and the unknown fields a record keeps
// (issue 44). Every record's inspect() names each field before its value:
//
//   return f(caf::meta::type_name("aisched.retention_policy"),
//            field("keep_for"), x.keep_for, field("keep_runs"), x.keep_runs);
//
// CAF's inspectors skip annotations, so CAF's encoding (messages between
// actors, formats 0 and 1 of stored data) is what it was. The wire codec
// (proto/wire.hpp) numbers the fields 1, 2, ... in that order and writes
// Protocol Buffers' wire format; the schema it implies (proto/schema/) is
// generated from the same inspect(). So a field is listed once, in inspect(),
// and its number is its place there: fields are only ever appended, never
// reordered or removed (tests/compat/schema pins every number ever used).
#pragma once

#include <string>

#include <caf/meta/annotation.hpp>

namespace aisched::proto {

/// Names the value that follows it in inspect().
struct field_t : caf::meta::annotation {
  constexpr explicit field_t(const char* name, bool raw = false) : value(name), bytes(raw) {}
  const char* value;
  bool bytes;  // a string of any bytes, not text: the schema says `bytes`
};

/// Names the value that follows it in inspect().
constexpr field_t field(const char* name) { return field_t{name}; }

/// Names a string field that holds any bytes (a sealed secret, a process's
/// output cut anywhere), not necessarily UTF-8 text.
constexpr field_t bytes_field(const char* name) { return field_t{name, true}; }

/// Fields a newer build wrote that this build does not know, as their wire
/// bytes: kept with the record and written again when it is, so a member of
/// an older build passes on what it cannot read. CAF's encoding leaves it out.
struct unknown_fields {
  std::string bytes;
  friend bool operator==(const unknown_fields& a, const unknown_fields& b) {
    return a.bytes == b.bytes;
  }
};

/// Put last in inspect(), after every field: where the wire codec keeps the
/// record's unknown fields. CAF's inspectors skip it.
struct keep_unknown_t : caf::meta::annotation {
  constexpr explicit keep_unknown_t(unknown_fields& u) : fields(&u) {}
  unknown_fields* fields;
};

inline keep_unknown_t keep_unknown(unknown_fields& u) { return keep_unknown_t{u}; }

}  // namespace aisched::proto
