// A backup file of the applied state; see backup_export.hpp.
#include "storage/backup_export.hpp"

#include <algorithm>

#include "proto/codec.hpp"
#include "proto/commands.hpp"
#include "proto/errors.hpp"
#include "storage/format_version.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"
#include "storage/snapshot.hpp"

namespace aisched::storage {

namespace {

// Keys written elsewhere (storage/keys.hpp), read here at the pinned state.
constexpr std::string_view cluster_id_key = keys::cluster_id;
constexpr std::string_view bootstrap_key = keys::bootstrap_members;
constexpr std::string_view membership_key = keys::membership;
constexpr std::string_view log_base_key = keys::log_base;
constexpr std::string_view data_key_prefix = keys::data_key_prefix;

/// The term of entry `index`: from the raft log, or its compaction base.
caf::expected<uint64_t> term_at(const snapshot_export& s, uint64_t index) {
  if (index == 0) return uint64_t{0};
  auto entry = s.get(column::raft_log, keys::u64(index));
  if (!entry) return entry.error();
  if (*entry) {
    auto e = proto::decode<proto::log_entry>(**entry);
    if (!e) return e.error();
    return e->term;
  }
  auto base = s.get(column::raft_meta, log_base_key);
  if (!base) return base.error();
  if (*base && (*base)->size() == 16 && keys::get_u64(**base, 0) == index)
    return keys::get_u64(**base, 8);
  return uint64_t{0};  // compacted past it meanwhile: not at hand
}

caf::expected<proto::membership> members_at(const snapshot_export& s) {
  for (auto [c, key] : {std::pair{column::meta, membership_key},
                        std::pair{column::raft_meta, bootstrap_key}}) {
    auto raw = s.get(c, key);
    if (!raw) return raw.error();
    if (!*raw) continue;
    auto m = proto::decode<proto::set_membership>(**raw);
    if (!m) return m.error();
    return std::move(m->members);
  }
  return proto::membership{};
}

caf::expected<std::vector<std::string>> key_checks_at(const snapshot_export& s) {
  auto raw = s.values_with_prefix(column::auth, data_key_prefix);
  if (!raw) return raw.error();
  std::vector<std::string> out;
  for (auto& bytes : *raw) {
    auto k = proto::decode<proto::data_key>(bytes);
    if (!k) return k.error();
    if (std::find(out.begin(), out.end(), k->kek_check) == out.end()) out.push_back(k->kek_check);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

caf::expected<std::unique_ptr<backup_export>> backup_export::open(rocks& db, origin from) {
  auto source = snapshot_export::open(db);
  if (!source) return source.error();
  std::unique_ptr<backup_export> x{new backup_export()};
  x->source_ = std::move(*source);
  auto& s = *x->source_;
  auto& h = x->header_;
  h.data_format = current_format;
  h.written_by = std::move(from.written_by);
  h.node_id = std::move(from.node_id);
  h.created_at_ms = from.created_at_ms;
  h.index = s.applied_index();
  auto cluster = s.get(column::raft_meta, cluster_id_key);
  if (!cluster) return cluster.error();
  h.cluster_id = cluster->value_or("");
  auto term = term_at(s, h.index);
  if (!term) return term.error();
  h.term = *term;
  auto members = members_at(s);
  if (!members) return members.error();
  h.members = std::move(*members);
  auto checks = key_checks_at(s);
  if (!checks) return checks.error();
  h.key_checks = std::move(*checks);
  for (auto c : state_columns)
    h.columns.push_back(backup::column_info{static_cast<uint8_t>(c), column_name(c)});
  x->writer_ = std::make_unique<backup::backup_writer>(h);
  return x;
}

backup_export::~backup_export() = default;

uint64_t backup_export::records() const { return writer_->record_count(); }

const std::string& backup_export::checksum() const { return writer_->checksum(); }

caf::expected<std::string> backup_export::next(size_t max_bytes) {
  std::string out;
  switch (stage_) {
    case stage::header:
      out = writer_->begin();
      stage_ = stage::records;
      break;
    case stage::records: {
      if (!source_->done()) {
        auto chunk = source_->next_chunk(max_bytes);
        if (!chunk) return chunk.error();
        auto passed = writer_->records(std::move(*chunk));
        if (!passed) return passed.error();
        out = std::move(*passed);
      }
      if (out.empty()) {  // next_chunk hands out nothing only at the end
        out = writer_->finish();
        stage_ = stage::done;
        source_.reset();  // releases the pinned snapshot at once
      }
      break;
    }
    case stage::done:
      break;
  }
  bytes_ += out.size();
  return out;
}

}  // namespace aisched::storage
