// The codec by hand of the records every run goes through (the instance, the
// worker's report); see proto/codec.hpp. The layout is CAF 0.17's binary
// serializer over their inspect(): integers big-endian at their width, an
// enum as its underlying byte, a string as its length in 7-bit groups (low
// first, the high bit set on all but the last) and then its bytes. The order
// of the fields is inspect()'s; a field added there must be added here too
// (tests/proto/proto_test compares the bytes with CAF's).
#include <cstdint>

#include "proto/codec.hpp"

namespace aisched::proto {

namespace {

void put_u8(std::string& out, uint8_t x) { out.push_back(static_cast<char>(x)); }

void put_u32(std::string& out, uint32_t x) {
  char b[4] = {static_cast<char>(x >> 24), static_cast<char>(x >> 16), static_cast<char>(x >> 8),
               static_cast<char>(x)};
  out.append(b, 4);
}

void put_i32(std::string& out, int32_t x) { put_u32(out, static_cast<uint32_t>(x)); }

void put_u64(std::string& out, uint64_t x) {
  put_u32(out, static_cast<uint32_t>(x >> 32));
  put_u32(out, static_cast<uint32_t>(x));
}

void put_i64(std::string& out, int64_t x) { put_u64(out, static_cast<uint64_t>(x)); }

void put_str(std::string& out, const std::string& s) {
  auto n = static_cast<uint32_t>(s.size());  // CAF writes a sequence size as 32 bits
  while (n > 0x7f) {
    put_u8(out, static_cast<uint8_t>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  put_u8(out, static_cast<uint8_t>(n));
  out.append(s);
}

/// Bytes for `fixed` bytes of integers and the strings `s`, each with its
/// longest length prefix: one allocation.
template <class... Strings>
size_t size_for(size_t fixed, const Strings&... s) {
  return fixed + (... + (s.size() + 5));
}

/// Reads the canonical bytes only; false on anything else (the caller then
/// leaves the bytes to CAF's reader).
struct reader {
  const unsigned char* at;
  const unsigned char* end;

  bool u8(uint8_t& x) {
    if (at == end) return false;
    x = *at++;
    return true;
  }
  bool u32(uint32_t& x) {
    if (end - at < 4) return false;
    x = (uint32_t{at[0]} << 24) | (uint32_t{at[1]} << 16) | (uint32_t{at[2]} << 8) | at[3];
    at += 4;
    return true;
  }
  bool u64(uint64_t& x) {
    uint32_t hi, lo;
    if (!u32(hi) || !u32(lo)) return false;
    x = (uint64_t{hi} << 32) | lo;
    return true;
  }
  /// A signed integer or an enum, stored as the unsigned integer U.
  template <class U, class T>
  bool as(T& x) {
    U u;
    bool ok;
    if constexpr (sizeof(U) == 1)
      ok = u8(u);
    else if constexpr (sizeof(U) == 4)
      ok = u32(u);
    else
      ok = u64(u);
    if (ok) x = static_cast<T>(u);  // an enum is checked by enums_valid
    return ok;
  }
  bool str(std::string& s) {
    // At most four groups (28 bits), none of them a needless trailing zero.
    uint32_t n = 0;
    for (int shift = 0;; shift += 7) {
      uint8_t b;
      if (shift > 21 || !u8(b)) return false;
      n |= uint32_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) {
        if (b == 0 && shift > 0) return false;
        break;
      }
    }
    if (static_cast<size_t>(end - at) < n) return false;
    s.assign(reinterpret_cast<const char*>(at), n);
    at += n;
    return true;
  }
};

bool read(reader& r, instance& x) {
  return r.str(x.id) && r.str(x.tenant) && r.u64(x.task_id) && r.as<uint64_t>(x.slot) &&
         r.u32(x.shard) && r.u32(x.shards) && r.u32(x.attempt) && r.as<uint8_t>(x.state) &&
         r.str(x.worker_id) && r.as<uint64_t>(x.created_at) && r.as<uint64_t>(x.dispatched_at) &&
         r.as<uint64_t>(x.started_at) && r.as<uint64_t>(x.finished_at) &&
         r.as<uint64_t>(x.next_attempt_at) && r.as<uint64_t>(x.deadline) &&
         r.as<uint32_t>(x.exit_code) && r.str(x.error) && r.str(x.output) && r.str(x.trace_id) &&
         r.str(x.idempotency_key) && r.str(x.event_name) && r.str(x.event_payload);
}

bool read(reader& r, run_result& x) {
  return r.str(x.instance_id) && r.str(x.worker_id) && r.u32(x.attempt) && r.as<uint8_t>(x.state) &&
         r.as<uint32_t>(x.exit_code) && r.str(x.error) && r.str(x.output) &&
         r.as<uint64_t>(x.started_at) && r.as<uint64_t>(x.finished_at) &&
         r.as<uint64_t>(x.next_attempt_at);
}

/// `bytes` as a T: read by hand when they are canonical, else by CAF.
template <class T>
caf::expected<T> read_bytes(std::string_view bytes) {
  T x;
  reader r{reinterpret_cast<const unsigned char*>(bytes.data()),
           reinterpret_cast<const unsigned char*>(bytes.data()) + bytes.size()};
  if (read(r, x) && r.at == r.end && enums_valid(x)) return x;
  return detail::caf_decode<T>(bytes);  // not canonical: CAF's reading, and its errors
}

}  // namespace

template <>
std::string encode<instance>(const instance& x) {
  std::string out;
  out.reserve(size_for(8 * 8 + 4 * 4 + 1, x.id, x.tenant, x.worker_id, x.error, x.output,
                       x.trace_id, x.idempotency_key, x.event_name, x.event_payload));
  put_str(out, x.id);
  put_str(out, x.tenant);
  put_u64(out, x.task_id);
  put_i64(out, x.slot);
  put_u32(out, x.shard);
  put_u32(out, x.shards);
  put_u32(out, x.attempt);
  put_u8(out, static_cast<uint8_t>(x.state));
  put_str(out, x.worker_id);
  for (auto t :
       {x.created_at, x.dispatched_at, x.started_at, x.finished_at, x.next_attempt_at, x.deadline})
    put_i64(out, t);
  put_i32(out, x.exit_code);
  for (auto* s :
       {&x.error, &x.output, &x.trace_id, &x.idempotency_key, &x.event_name, &x.event_payload})
    put_str(out, *s);
  return out;
}

template <>
caf::expected<instance> decode<instance>(std::string_view bytes) {
  return read_bytes<instance>(bytes);
}

template <>
std::string encode<run_result>(const run_result& x) {
  std::string out;
  out.reserve(size_for(3 * 8 + 2 * 4 + 1, x.instance_id, x.worker_id, x.error, x.output));
  put_str(out, x.instance_id);
  put_str(out, x.worker_id);
  put_u32(out, x.attempt);
  put_u8(out, static_cast<uint8_t>(x.state));
  put_i32(out, x.exit_code);
  put_str(out, x.error);
  put_str(out, x.output);
  put_i64(out, x.started_at);
  put_i64(out, x.finished_at);
  put_i64(out, x.next_attempt_at);
  return out;
}

template <>
caf::expected<run_result> decode<run_result>(std::string_view bytes) {
  return read_bytes<run_result>(bytes);
}

}  // namespace aisched::proto
