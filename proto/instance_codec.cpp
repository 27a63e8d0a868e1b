// The run record's codec by hand; see proto/codec.hpp. The layout is CAF
// 0.17's binary serializer over inspect(instance): integers big-endian at
// their width, an enum as its underlying byte, a string as its length in
// 7-bit groups (low first, the high bit set on all but the last) and then its
// bytes. The order of the fields is inspect()'s; a field added there must be
// added here too (tests/proto/proto_test compares the bytes with CAF's).
#include <cstdint>
#include <cstring>

#include "proto/codec.hpp"

namespace aisched::proto {

namespace {

void put_u8(std::string& out, uint8_t x) { out.push_back(static_cast<char>(x)); }

void put_u32(std::string& out, uint32_t x) {
  char b[4] = {static_cast<char>(x >> 24), static_cast<char>(x >> 16), static_cast<char>(x >> 8),
               static_cast<char>(x)};
  out.append(b, 4);
}

void put_u64(std::string& out, uint64_t x) {
  put_u32(out, static_cast<uint32_t>(x >> 32));
  put_u32(out, static_cast<uint32_t>(x));
}

void put_str(std::string& out, const std::string& s) {
  auto n = static_cast<uint32_t>(s.size());  // CAF writes a sequence size as 32 bits
  while (n > 0x7f) {
    put_u8(out, static_cast<uint8_t>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  put_u8(out, static_cast<uint8_t>(n));
  out.append(s);
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
  bool i32(int32_t& x) {
    uint32_t u;
    if (!u32(u)) return false;
    x = static_cast<int32_t>(u);
    return true;
  }
  bool u64(uint64_t& x) {
    uint32_t hi, lo;
    if (!u32(hi) || !u32(lo)) return false;
    x = (uint64_t{hi} << 32) | lo;
    return true;
  }
  bool i64(int64_t& x) {
    uint64_t u;
    if (!u64(u)) return false;
    x = static_cast<int64_t>(u);
    return true;
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
  uint8_t state;
  return r.str(x.id) && r.str(x.tenant) && r.u64(x.task_id) && r.i64(x.slot) && r.u32(x.shard) &&
         r.u32(x.shards) && r.u32(x.attempt) && r.u8(state) &&
         (x.state = static_cast<instance_state>(state), r.str(x.worker_id)) &&
         r.i64(x.created_at) && r.i64(x.dispatched_at) && r.i64(x.started_at) &&
         r.i64(x.finished_at) && r.i64(x.next_attempt_at) && r.i64(x.deadline) &&
         r.i32(x.exit_code) && r.str(x.error) && r.str(x.output) && r.str(x.trace_id) &&
         r.str(x.idempotency_key) && r.str(x.event_name) && r.str(x.event_payload) && r.at == r.end;
}

}  // namespace

template <>
std::string encode<instance>(const instance& x) {
  std::string out;
  out.reserve(4 * 8 + 64 + x.id.size() + x.tenant.size() + x.worker_id.size() + x.error.size() +
              x.output.size() + x.trace_id.size() + x.idempotency_key.size() + x.event_name.size() +
              x.event_payload.size() + 9 * 5);
  put_str(out, x.id);
  put_str(out, x.tenant);
  put_u64(out, x.task_id);
  put_u64(out, static_cast<uint64_t>(x.slot));
  put_u32(out, x.shard);
  put_u32(out, x.shards);
  put_u32(out, x.attempt);
  put_u8(out, static_cast<uint8_t>(x.state));
  put_str(out, x.worker_id);
  for (auto t :
       {x.created_at, x.dispatched_at, x.started_at, x.finished_at, x.next_attempt_at, x.deadline})
    put_u64(out, static_cast<uint64_t>(t));
  put_u32(out, static_cast<uint32_t>(x.exit_code));
  for (auto* s :
       {&x.error, &x.output, &x.trace_id, &x.idempotency_key, &x.event_name, &x.event_payload})
    put_str(out, *s);
  return out;
}

template <>
caf::expected<instance> decode<instance>(std::string_view bytes) {
  instance x;
  reader r{reinterpret_cast<const unsigned char*>(bytes.data()),
           reinterpret_cast<const unsigned char*>(bytes.data()) + bytes.size()};
  if (read(r, x) && enums_valid(x)) return x;
  return detail::caf_decode<instance>(bytes);  // not canonical: CAF's reading, and its errors
}

}  // namespace aisched::proto
