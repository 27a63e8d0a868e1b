// The registered migrations between data formats; see migrations.hpp.
#include "storage/migrations.hpp"

#include <optional>
#include <string>
#include <string_view>

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "proto/analysis.hpp"
#include "proto/auth_types.hpp"
#include "proto/codec.hpp"
#include "proto/command_visit.hpp"
#include "proto/controls.hpp"
#include "proto/errors.hpp"
#include "proto/hex.hpp"
#include "proto/secret_types.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

namespace {

constexpr std::string_view format_key = "format";

/// Whether `c` (of format 0 or 1) decodes as the command its type names.
caf::error check_decodes(const proto::command& c) {
  auto r = command_to_format_2(c);
  if (!r) return r.error();
  return {};
}

/// Format 0 -> 1: every raft log entry rewritten as an opaque command.
caf::error opaque_log_entries(rocks& db, rocksdb::WriteBatch& batch) {
  auto it = db.iterate(column::raft_log);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto key = std::string_view(it->key().data(), it->key().size());
    auto e = log_entry_from_format_0(std::string_view(it->value().data(), it->value().size()));
    if (!e) {
      auto index = key.size() == 8 ? std::to_string(keys::get_u64(key, 0)) : "?";
      return make_error(errc::corrupted, "raft_log",
                        "raft log entry " + index + " of format 0 does not read: " +
                            view(e.error()).message);
    }
    batch.Put(db.cf(column::raft_log), rocksdb::Slice(key.data(), key.size()),
              proto::format_1::encode(*e));
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  return {};
}

/// A record of format 1 as format 2 writes it: CAF's encoding of a T read,
/// the wire codec's written.
template <class T>
caf::expected<std::string> record_to_format_2(std::string_view bytes) {
  auto x = proto::format_1::decode<T>(bytes);
  if (!x) return x.error();
  return proto::encode(*x);
}

caf::expected<std::string> log_entry_to_format_2(std::string_view bytes) {
  auto e = log_entry_from_format_1(bytes);
  if (!e) return e.error();
  return proto::encode(*e);
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

/// The value at `key` of column `c`, of format 1, as format 2 writes it. The
/// values storage/ lays out by hand (counters, indexes, the hard state...)
/// and the AI agent's JSON stay as they are: nothing answers those.
std::optional<caf::expected<std::string>> value_to_format_2(column c, std::string_view key,
                                                           std::string_view v) {
  using namespace proto;
  switch (c) {
    case column::raft_log: return log_entry_to_format_2(v);
    case column::raft_meta:  // hard state, log base, format, cluster id: by hand
      if (key == keys::bootstrap_members) return record_to_format_2<set_membership>(v);
      return std::nullopt;
    case column::tasks: return record_to_format_2<task>(v);
    case column::task_state: return record_to_format_2<task_runtime>(v);
    case column::instances: return record_to_format_2<instance>(v);
    case column::attempts: return record_to_format_2<attempt_record>(v);
    case column::audit: return record_to_format_2<audit_entry>(v);
    case column::ai_analysis: return record_to_format_2<failure_analysis>(v);
    case column::meta:  // counters, idempotency records, retention marks: by hand
      if (key == keys::membership) return record_to_format_2<set_membership>(v);
      if (starts_with(key, keys::load_prefix)) return record_to_format_2<load_sample>(v);
      return std::nullopt;
    case column::auth:  // a token's id by its hash, a worker's share: by hand
      if (starts_with(key, keys::user_prefix)) return record_to_format_2<user>(v);
      if (starts_with(key, keys::token_prefix)) return record_to_format_2<api_token>(v);
      if (starts_with(key, keys::data_key_prefix)) return record_to_format_2<data_key>(v);
      if (starts_with(key, keys::secret_prefix)) return record_to_format_2<secret_record>(v);
      return std::nullopt;
    case column::controls:  // a kind and '/', then the tenant and the name
      if (key.size() > 1 && key[1] == '/' && key[0] == keys::pool_kind)
        return record_to_format_2<pool>(v);
      if (key.size() > 1 && key[1] == '/' && key[0] == keys::calendar_kind)
        return record_to_format_2<calendar>(v);
      return std::nullopt;
    case column::instances_by_state:  // empty values
    case column::ai_conversations:    // JSON
      return std::nullopt;
  }
  return std::nullopt;
}

/// Format 1 -> 2: every record, command and raft entry rewritten in the wire format.
caf::error wire_records(rocks& db, rocksdb::WriteBatch& batch) {
  for (size_t i = 0; i < column_count; ++i) {
    auto c = static_cast<column>(i);
    auto it = db.iterate(c);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      auto key = std::string_view(it->key().data(), it->key().size());
      auto v = value_to_format_2(c, key, std::string_view(it->value().data(), it->value().size()));
      if (!v) continue;
      if (!*v)
        return make_error(errc::corrupted, column_name(c),
                          std::string("a record of ") + column_name(c) + " (key " +
                              proto::to_hex(key) + ") of format 1 does not read: " +
                              view(v->error()).message);
      batch.Put(db.cf(c), it->key(), **v);
    }
    if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  }
  return {};
}

}  // namespace

const std::vector<migration_step>& migration_steps() {
  static const std::vector<migration_step> steps{
      {0, "raft log entries become opaque commands (type number and bytes)", opaque_log_entries},
      {1, "records, commands and raft entries in the wire format (numbered fields)",
       wire_records},
  };
  return steps;
}

namespace {

/// Whether no column of `db` holds a record (an unreadable one counts as holding).
bool holds_nothing(rocks& db) {
  for (size_t c = 0; c < column_count; ++c) {
    auto it = db.iterate(static_cast<column>(c));
    it->SeekToFirst();
    if (it->Valid() || !it->status().ok()) return false;
  }
  return true;
}

}  // namespace

caf::expected<std::vector<std::string>> migrate_format(rocks& db, const std::string& dir,
                                                       const format_stamp& found,
                                                       const std::string& build) {
  auto in_db = stored_format(db);
  if (!in_db) return in_db.error();
  // Every step records the format it reaches, so from format 1 on the
  // database says its format; FORMAT alone saying more is a replaced database.
  if (found.version > (*in_db ? **in_db : 0))
    return make_error(errc::corrupted, "data_dir",
                      dir + "/FORMAT says format " + std::to_string(found.version) +
                          " but the database records " +
                          (*in_db ? "format " + std::to_string(**in_db) : "none"));
  // A step records its format in the database before FORMAT is rewritten: the
  // database is ahead after a crash between the two, never behind. A database
  // that holds nothing yet (a node's first start) is of the current format.
  uint32_t at = *in_db ? **in_db : found.version;
  if (!*in_db && found.version == 0 && holds_nothing(db)) {
    rocksdb::WriteBatch batch;
    put_stored_format(db, batch, current_format);
    if (auto err = db.write(batch, true)) return err;
    at = current_format;
  }
  if (at > current_format)
    return make_error(errc::invalid_argument, "data_dir",
                      "the database in " + dir + " holds format " + std::to_string(at) +
                          ", newer than format " + std::to_string(current_format) +
                          " that this build (" + build + ") reads");
  std::vector<std::string> ran;
  for (auto& step : migration_steps()) {
    if (step.from < at) continue;
    rocksdb::WriteBatch batch;
    if (auto err = step.run(db, batch)) return err;
    put_stored_format(db, batch, step.from + 1);
    if (auto err = db.write(batch, true)) return err;
    at = step.from + 1;
    ran.push_back("format " + std::to_string(step.from) + " -> " + std::to_string(at) + ": " +
                  step.what);
  }
  if (found.version != current_format || found.written_by != build)
    if (auto err = write_format(dir, format_stamp{current_format, build})) return err;
  return ran;
}

void put_stored_format(rocks& db, rocksdb::WriteBatch& batch, uint32_t format) {
  batch.Put(db.cf(column::raft_meta), rocksdb::Slice(format_key.data(), format_key.size()),
            keys::u64(format));
}

caf::expected<std::optional<uint32_t>> stored_format(rocks& db) {
  auto raw = db.get(column::raft_meta, format_key);
  if (!raw) return raw.error();
  if (!*raw) return std::optional<uint32_t>{};
  if ((*raw)->size() != 8) return make_error(errc::corrupted, "raft_meta", "the stored format is damaged");
  return std::optional<uint32_t>{static_cast<uint32_t>(keys::get_u64(**raw, 0))};
}

caf::expected<proto::command> command_to_format_2(const proto::command& c) {
  return proto::visit_command_format_1(c, [&](const auto& x) -> caf::expected<proto::command> {
    return proto::command{c.type, proto::encode(x)};
  });
}

caf::expected<proto::log_entry> log_entry_from_format_1(std::string_view bytes) {
  auto e = proto::format_1::decode<proto::log_entry>(bytes);
  if (!e) return e.error();
  auto cmd = command_to_format_2(e->cmd);
  if (!cmd) return cmd.error();
  e->cmd = std::move(*cmd);
  return e;
}

caf::expected<proto::log_entry> log_entry_from_format_0(std::string_view bytes) {
  // Index and term (big-endian u64 each), the variant's alternative (one
  // byte), then that command's fields: CAF's encoding of format 0.
  if (bytes.size() < 17) return make_error(errc::corrupted, "raft_log", "a format-0 entry is truncated");
  proto::log_entry e;
  e.index = keys::get_u64(bytes, 0);
  e.term = keys::get_u64(bytes, 8);
  auto alternative = static_cast<uint8_t>(bytes[16]);
  // Format 0's variant held 30 commands, numbered by their place in it.
  if (alternative >= 30 || proto::traits_of(alternative) == nullptr)
    return make_error(errc::corrupted, "raft_log",
                      "a format-0 entry names command " + std::to_string(alternative) +
                          ", which format 0 did not have");
  e.cmd = proto::command{alternative, std::string(bytes.substr(17))};
  if (auto err = check_decodes(e.cmd)) return err;
  return e;
}

}  // namespace aisched::storage
