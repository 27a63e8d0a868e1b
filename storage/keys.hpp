// Order-preserving key encoding for RocksDB: unsigned integers big-endian so
// byte order equals numeric order; signed instants offset by 2^63 so negative
// times sort before positive ones. Instance keys are (task, slot, shard).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proto/time.hpp"

namespace aisched::storage::keys {

inline void put_u64(std::string& out, uint64_t x) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((x >> (i * 8)) & 0xff));
}

inline void put_u32(std::string& out, uint32_t x) {
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((x >> (i * 8)) & 0xff));
}

inline void put_i64(std::string& out, int64_t x) {
  put_u64(out, static_cast<uint64_t>(x) ^ (uint64_t{1} << 63));
}

/// Reads a big-endian u64 at `pos`; the caller guarantees 8 bytes are there.
inline uint64_t get_u64(std::string_view in, size_t pos = 0) {
  uint64_t x = 0;
  for (size_t i = 0; i < 8; ++i) x = (x << 8) | static_cast<uint8_t>(in[pos + i]);
  return x;
}

inline uint32_t get_u32(std::string_view in, size_t pos = 0) {
  uint32_t x = 0;
  for (size_t i = 0; i < 4; ++i) x = (x << 8) | static_cast<uint8_t>(in[pos + i]);
  return x;
}

inline int64_t get_i64(std::string_view in, size_t pos = 0) {
  return static_cast<int64_t>(get_u64(in, pos) ^ (uint64_t{1} << 63));
}

inline std::string u64(uint64_t x) {
  std::string out;
  put_u64(out, x);
  return out;
}

/// Key of a task in the `tasks` column family.
inline std::string task(uint64_t id) { return u64(id); }

/// Key in `meta` recording which task a create with idempotency key `key` of
/// `tenant` made. NUL separates the parts: neither may contain one.
inline std::string idempotency(const std::string& tenant, const std::string& key) {
  std::string out = "idem/";
  out += tenant;
  out.push_back('\0');
  out += key;
  return out;
}

/// Key of an instance in the `instances` column family: task, slot, shard.
/// All instances of a task share the 8-byte prefix `task(id)`.
constexpr size_t instance_key_size = 20;
inline std::string instance(uint64_t task_id, unix_ms slot, uint32_t shard) {
  std::string out;
  out.reserve(instance_key_size);
  put_u64(out, task_id);
  put_i64(out, slot);
  put_u32(out, shard);
  return out;
}

struct instance_ref {
  uint64_t task_id = 0;
  unix_ms slot = 0;
  uint32_t shard = 0;
};

/// Key of one attempt record in the `attempts` column family: the instance key,
/// then the attempt, so an instance's attempts are adjacent and in order.
inline std::string attempt(std::string_view instance_key, uint32_t attempt) {
  std::string out;
  out.reserve(instance_key.size() + 4);
  out.append(instance_key);
  put_u32(out, attempt);
  return out;
}

/// Decodes an instance key; nullopt if it is not one.
inline std::optional<instance_ref> parse_instance(std::string_view key) {
  if (key.size() != instance_key_size) return std::nullopt;
  return instance_ref{get_u64(key, 0), get_i64(key, 8), get_u32(key, 16)};
}

/// Parses an instance id `{task}-{slot_ms}-{shard}`; nullopt if malformed.
std::optional<instance_ref> parse_instance_id(std::string_view id);

/// Key of a run's failure analysis in the `ai_analysis` column family.
inline std::string analysis(std::string_view tenant, std::string_view instance_id) {
  std::string out(tenant);
  out.push_back('/');
  out.append(instance_id);
  return out;
}

/// Key in `meta` of task `task_id`'s retention mark: the latest slot of a run
/// of it retention removed (then the task's tenant), so a read of a removed
/// run answers `gone`.
inline std::string pruned_mark(uint64_t task_id) {
  std::string out = "pruned/";
  put_u64(out, task_id);
  return out;
}

/// Key in the `instances_by_state` index: state byte, then the instance key.
inline std::string state_index(uint8_t state, std::string_view instance_key) {
  std::string out;
  out.reserve(1 + instance_key.size());
  out.push_back(static_cast<char>(state));
  out.append(instance_key);
  return out;
}

// -- the names and prefixes of the other records ------------------------------
// Each column's records by key, for the modules that keep them and for what
// reads every record (the migrations, backups). Prefixes never overlap in a column.

inline constexpr std::string_view user_prefix = "u/";        // auth: proto::user by name
inline constexpr std::string_view token_prefix = "t/";       // auth: proto::api_token by id
inline constexpr std::string_view token_hash_prefix = "h/";  // auth: a token's id by its hash
inline constexpr std::string_view share_prefix = "s/";       // auth: a worker's tenant share
inline constexpr std::string_view data_key_prefix = "dk/";   // auth: proto::data_key by tenant
inline constexpr std::string_view secret_prefix = "sv/";     // auth: proto::secret_record
inline constexpr char pool_kind = 'p';                       // controls: "p/" proto::pool
inline constexpr char calendar_kind = 'c';                   // controls: "c/" proto::calendar
inline constexpr std::string_view load_prefix = "load/";     // meta: proto::load_sample by time
inline constexpr std::string_view membership = "membership";  // meta: proto::set_membership
inline constexpr std::string_view bootstrap_members = "bootstrap_members";  // raft_meta: the same
inline constexpr std::string_view cluster_id = "cluster_id";                // raft_meta: by hand
inline constexpr std::string_view log_base = "snapshot";                    // raft_meta: by hand

}  // namespace aisched::storage::keys
