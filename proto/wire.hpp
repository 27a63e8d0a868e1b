// The wire codec (issue 44): a record in Protocol Buffers' wire format, read
// off its inspect() (proto/field.hpp). Field n is the n-th value inspect()
// names; proto/wire_schema.hpp writes the .proto this implies.
//
//   bool, unsigned integers, enums  varint
//   signed integers                 zigzag varint (sint32/sint64)
//   double                          fixed64
//   std::string                     length-delimited
//   a struct with inspect()         length-delimited, its own fields inside
//   std::vector<T>                  one field per element (repeated)
//   std::map<K, V>, std::pair<K, V> an entry message per pair {1: key, 2: value}
//
// Every field is written, in order. A reader takes fields in any order (the
// last of a scalar wins, elements in the order read), leaves a field that is
// absent at its default (a record written before the field existed), and keeps
// fields beyond the last it knows in the record's unknown_fields, written again
// after its own. Anything else is errc::corrupted: a truncated value, a field
// of the wrong wire type, an enum outside its names, a non-finite double.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/expected.hpp>
#include <caf/meta/annotation.hpp>
#include <caf/meta/load_callback.hpp>
#include <caf/meta/save_callback.hpp>

#include "proto/errors.hpp"
#include "proto/field.hpp"
#include "proto/invariant.hpp"

namespace aisched::proto {
template <class E>
struct enum_names;
}  // namespace aisched::proto

namespace aisched::proto::wire {

/// Protocol Buffers' wire types.
enum wire_type : uint32_t { varint = 0, fixed64 = 1, length = 2, fixed32 = 5 };

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

template <class T>
struct is_map : std::false_type {};
template <class K, class V, class C, class A>
struct is_map<std::map<K, V, C, A>> : std::true_type {};

template <class T>
struct is_pair : std::false_type {};
template <class K, class V>
struct is_pair<std::pair<K, V>> : std::true_type {};

template <class E, class = void>
struct has_enum_names : std::false_type {};
template <class E>
struct has_enum_names<E, std::void_t<decltype(enum_names<E>::value.size())>> : std::true_type {};

/// The wire type a field of type T is written with.
template <class T>
constexpr wire_type wire_type_of() {
  if constexpr (std::is_same_v<T, double>) return fixed64;
  else if constexpr (std::is_same_v<T, float>) return fixed32;
  else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) return varint;
  else return length;
}

inline uint64_t zigzag(int64_t x) {
  return (static_cast<uint64_t>(x) << 1) ^ static_cast<uint64_t>(x >> 63);
}
inline int64_t unzigzag(uint64_t x) {
  return static_cast<int64_t>(x >> 1) ^ -static_cast<int64_t>(x & 1);
}

inline void put_varint(std::string& out, uint64_t x) {
  while (x >= 0x80) {
    out.push_back(static_cast<char>((x & 0x7f) | 0x80));
    x >>= 7;
  }
  out.push_back(static_cast<char>(x));
}

inline void put_tag(std::string& out, uint32_t number, wire_type t) {
  put_varint(out, (static_cast<uint64_t>(number) << 3) | t);
}

/// Writes the fields of one record (inspect()'s arguments) to `out`.
class writer {
 public:
  using result_type = bool;
  static constexpr bool reads_state = true;
  static constexpr bool writes_state = false;

  explicit writer(std::string& out) : out_(out) {}

  template <class... Ts>
  bool operator()(Ts&&... xs) {
    return (item(xs) && ...);
  }

  /// Writes `x` as field `number`; false when a value refuses to be written.
  template <class T>
  bool put(uint32_t number, const T& x) {
    if constexpr (is_vector<T>::value) {
      for (auto& e : x)
        if (!put(number, e)) return false;
      return true;
    } else if constexpr (is_map<T>::value) {
      for (auto& [k, v] : x)
        if (!put_entry(number, k, v)) return false;
      return true;
    } else if constexpr (is_pair<T>::value) {
      return put_entry(number, x.first, x.second);
    } else if constexpr (wire_type_of<T>() != length) {
      put_tag(out_, number, wire_type_of<T>());
      put_scalar(x);
      return true;
    } else if constexpr (std::is_same_v<T, std::string>) {
      put_tag(out_, number, length);
      put_varint(out_, x.size());
      out_.append(x);
      return true;
    } else {
      put_tag(out_, number, length);
      auto at = open();
      writer nested{out_};
      if (!inspect(nested, const_cast<T&>(x))) return false;
      close(at);
      return true;
    }
  }

 private:
  template <class T>
  bool item(T& x) {
    using U = std::decay_t<T>;
    if constexpr (caf::meta::is_save_callback<U>::value) {
      return !x.fun();
    } else if constexpr (std::is_same_v<U, keep_unknown_t>) {
      out_.append(x.fields->bytes);
      return true;
    } else if constexpr (caf::meta::is_annotation<U>::value) {
      return true;  // a type name, a field's name, a load callback
    } else {
      return put(next_++, x);
    }
  }

  template <class T>
  void put_scalar(const T& x) {
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
      char b[sizeof(T)];
      std::memcpy(b, &x, sizeof(T));  // little-endian, as the wire format is
      out_.append(b, sizeof(T));
    } else if constexpr (std::is_enum_v<T>) {
      put_varint(out_, static_cast<uint64_t>(static_cast<std::underlying_type_t<T>>(x)));
    } else if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) {
      put_varint(out_, static_cast<uint64_t>(x));
    } else {
      put_varint(out_, zigzag(static_cast<int64_t>(x)));
    }
  }

  template <class K, class V>
  bool put_entry(uint32_t number, const K& k, const V& v) {
    put_tag(out_, number, length);
    auto at = open();
    if (!put(1, k) || !put(2, v)) return false;
    close(at);
    return true;
  }

  /// Room for a nested message's length, most are shorter than 128 bytes.
  size_t open() {
    out_.push_back(0);
    return out_.size();
  }

  /// Writes the length of the nested message that began at `at`.
  void close(size_t at) {
    auto n = out_.size() - at;
    if (n < 0x80) {
      out_[at - 1] = static_cast<char>(n);
      return;
    }
    std::string len;
    put_varint(len, n);
    out_[at - 1] = len[0];
    out_.insert(at, len, 1, std::string::npos);
  }

  std::string& out_;
  uint32_t next_ = 1;
};

/// One field as it lies in the bytes: its number, wire type and value.
struct raw_field {
  uint32_t number = 0;
  wire_type type = varint;
  uint64_t value = 0;               // varint, fixed64, fixed32
  const char* data = nullptr;       // length: the bytes
  size_t size = 0;                  // length: how many
  const char* begin = nullptr;      // the whole field, tag included
  const char* end = nullptr;
};

/// Reads a varint at `at` (before `end`) into `x`; false when the bytes end
/// first or it runs past ten bytes.
inline bool get_varint(const char*& at, const char* end, uint64_t& x) {
  x = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at == end) return false;
    auto b = static_cast<unsigned char>(*at++);
    x |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) return true;
  }
  return false;
}

/// Reads the value of a varint, fixed64 or fixed32 field at `at` into `x`.
inline bool get_number(const char*& at, const char* end, wire_type t, uint64_t& x) {
  if (t == varint) return get_varint(at, end, x);
  size_t n = t == fixed64 ? 8 : 4;
  if (static_cast<size_t>(end - at) < n) return false;
  x = 0;
  std::memcpy(&x, at, n);  // little-endian host
  at += n;
  return true;
}

/// Reads one field at `at` (before `end`); false when the bytes are not one.
inline bool next_field(const char*& at, const char* end, raw_field& f) {
  f.begin = at;
  uint64_t tag = 0;
  if (!get_varint(at, end, tag)) return false;
  f.number = static_cast<uint32_t>(tag >> 3);
  f.type = static_cast<wire_type>(tag & 7);
  if (f.number == 0 || (tag >> 3) > 0x1fffffff) return false;
  switch (f.type) {
    case varint:
    case fixed64:
    case fixed32:
      if (!get_number(at, end, f.type, f.value)) return false;
      break;
    case length: {
      uint64_t n = 0;
      if (!get_varint(at, end, n) || n > static_cast<uint64_t>(end - at)) return false;
      f.data = at;
      f.size = static_cast<size_t>(n);
      at += n;
      break;
    }
    default:
      return false;  // groups are not used
  }
  f.end = at;
  return true;
}

/// Reads the fields of one record (inspect()'s arguments) from [at, end).
/// Fields come in order in what writer wrote: each is taken as its place in
/// inspect() comes. What is left after the last place (fields out of order,
/// or beyond the last this build knows) is read in a second pass.
class reader {
 public:
  using result_type = bool;
  static constexpr bool reads_state = false;
  static constexpr bool writes_state = true;

  reader(const char* at, const char* end) : at_(at), end_(end) {}

  template <class... Ts>
  bool operator()(Ts&&... xs) {
    if (!(item(xs) && ...)) return false;
    if (at_ == end_) return true;
    // Leftovers: fields written out of order are read in a second pass over
    // them; fields of numbers beyond the last place are unknown.
    auto rest = at_;
    leftover_ = true;
    next_ = 1;
    if (!(item(xs) && ...)) return false;
    for (auto p = rest; p != end_;) {
      raw_field f;
      if (!next_field(p, end_, f)) return fail("a field is cut short");
      if (f.number >= next_ && unknown_ != nullptr)
        unknown_->bytes.append(f.begin, f.end);
    }
    at_ = end_;
    return true;
  }

  /// Why reading failed (empty while it has not).
  const std::string& failure() const { return failure_; }

  /// Reads `x` from the value of field `f`.
  template <class T>
  bool get(const raw_field& f, T& x) {
    if constexpr (is_vector<T>::value) {
      using E = typename T::value_type;
      if constexpr (wire_type_of<E>() != length) {
        if (f.type == length) {  // packed, as other writers may write it
          for (auto p = f.data, e = f.data + f.size; p != e;) {
            raw_field g;
            g.type = wire_type_of<E>();
            if (!get_number(p, e, g.type, g.value)) return fail("a packed element is cut short");
            E v{};
            if (!get(g, v)) return false;
            x.push_back(v);
          }
          return true;
        }
      }
      E v{};
      if (!get(f, v)) return false;
      x.push_back(std::move(v));
      return true;
    } else if constexpr (is_map<T>::value) {
      std::pair<typename T::key_type, typename T::mapped_type> kv;
      if (!get_entry(f, kv.first, kv.second)) return false;
      x.insert_or_assign(std::move(kv.first), std::move(kv.second));
      return true;
    } else if constexpr (is_pair<T>::value) {
      return get_entry(f, x.first, x.second);
    } else {
      if (f.type != wire_type_of<T>()) return fail("a field has the wrong wire type");
      if constexpr (wire_type_of<T>() != length) {
        return get_scalar(f, x);
      } else if constexpr (std::is_same_v<T, std::string>) {
        x.assign(f.data, f.size);
        return true;
      } else {
        reader nested{f.data, f.data + f.size};
        if (!inspect(nested, x)) return fail(nested.failure_);
        return true;
      }
    }
  }

 private:
  template <class T>
  bool item(T& x) {
    using U = std::decay_t<T>;
    if constexpr (caf::meta::is_load_callback<U>::value) {
      if (auto err = x.fun()) return fail("a value is out of its range");
      return true;
    } else if constexpr (std::is_same_v<U, keep_unknown_t>) {
      unknown_ = x.fields;
      if (!leftover_) unknown_->bytes.clear();
      return true;
    } else if constexpr (caf::meta::is_annotation<U>::value) {
      return true;
    } else {
      return take(next_++, x);
    }
  }

  /// Reads every field numbered `number` where the reading stands.
  template <class T>
  bool take(uint32_t number, T& x) {
    if (leftover_) {
      for (auto p = at_; p != end_;) {
        raw_field f;
        if (!next_field(p, end_, f)) return fail("a field is cut short");
        if (f.number == number && !get(f, x)) return false;
      }
      return true;
    }
    while (at_ != end_) {
      if (!peeked_) {
        auto p = at_;
        if (!next_field(p, end_, peek_)) return fail("a field is cut short");
        peeked_ = true;
      }
      if (peek_.number != number) return true;  // the next field is a later one's
      peeked_ = false;
      at_ = peek_.end;
      if (!get(peek_, x)) return false;
    }
    return true;
  }

  template <class T>
  bool get_scalar(const raw_field& f, T& x) {
    if constexpr (std::is_same_v<T, double>) {
      std::memcpy(&x, &f.value, sizeof(double));
    } else if constexpr (std::is_same_v<T, float>) {
      auto v = static_cast<uint32_t>(f.value);
      std::memcpy(&x, &v, sizeof(float));
    } else if constexpr (std::is_enum_v<T>) {
      using U = std::underlying_type_t<T>;
      if (f.value > static_cast<uint64_t>(std::numeric_limits<U>::max()))
        return fail("an enum is out of range");
      if constexpr (has_enum_names<T>::value)
        if (f.value >= enum_names<T>::value.size()) return fail("an enum is out of range");
      x = static_cast<T>(static_cast<U>(f.value));
    } else if constexpr (std::is_same_v<T, bool>) {
      if (f.value > 1) return fail("a bool is neither 0 nor 1");
      x = f.value == 1;
    } else if constexpr (std::is_unsigned_v<T>) {
      if (f.value > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        return fail("an integer is out of range");
      x = static_cast<T>(f.value);
    } else {
      auto v = unzigzag(f.value);
      if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          v > static_cast<int64_t>(std::numeric_limits<T>::max()))
        return fail("an integer is out of range");
      x = static_cast<T>(v);
    }
    return true;
  }

  template <class K, class V>
  bool get_entry(const raw_field& f, K& k, V& v) {
    if (f.type != length) return fail("a map entry has the wrong wire type");
    for (auto p = f.data, e = f.data + f.size; p != e;) {
      raw_field g;
      if (!next_field(p, e, g)) return fail("a map entry is cut short");
      if (g.number == 1 && !get(g, k)) return false;
      if (g.number == 2 && !get(g, v)) return false;
    }
    return true;
  }

  bool fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
    return false;
  }

  const char* at_;
  const char* end_;
  uint32_t next_ = 1;
  bool leftover_ = false;
  bool peeked_ = false;  // peek_ is the field at at_, read ahead by the place before
  raw_field peek_;
  unknown_fields* unknown_ = nullptr;
  std::string failure_;
};

/// `x` in the wire format. Encoding a valid value cannot fail; a value that
/// does not encode (a non-finite double) is a broken invariant and aborts.
template <class T>
std::string encode(const T& x) {
  std::string out;
  out.reserve(256);  // most records fit: one allocation
  writer w{out};
  AISCHED_INVARIANT(inspect(w, const_cast<T&>(x)), "a proto value did not encode");
  return out;
}

/// Appends `x` in the wire format to `out`; false when a value refuses to be
/// written (a non-finite double).
template <class T>
bool encode_to(std::string& out, const T& x) {
  writer w{out};
  return inspect(w, const_cast<T&>(x));
}

/// The T in `bytes`; errc::corrupted naming what is wrong. No bytes at all
/// are not a record with a scalar or record field: writer writes each of
/// those, so an empty value is a value lost, not a record of defaults (a
/// record of repeated fields only, all empty, is empty). A value cut short at
/// a field's end reads as the fields before it, as in every Protocol Buffers
/// reader: RocksDB's block checksums, the outbox's and a backup's catch that.
template <class T>
caf::expected<T> decode(std::string_view bytes) {
  T x{};
  reader r{bytes.data(), bytes.data() + bytes.size()};
  if (!inspect(r, x))
    return make_error(errc::corrupted, "cannot decode stored value: " + r.failure());
  if (bytes.empty()) {
    static const bool never_empty = !wire::encode(T{}).empty();
    if (never_empty) return make_error(errc::corrupted, "cannot decode stored value: it is empty");
  }
  return x;
}

}  // namespace aisched::proto::wire
