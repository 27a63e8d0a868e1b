// Durable raft log and hard state; see raft_log.hpp.
#include "storage/raft_log.hpp"

#include <limits>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

namespace {

constexpr std::string_view hard_state_key = "hard_state";
constexpr std::string_view base_key = keys::log_base;  // log_base: index, term

std::string encode_base(const log_base& b) {
  std::string out;
  keys::put_u64(out, b.index);
  keys::put_u64(out, b.term);
  return out;
}

std::string encode_hard_state(const hard_state& hs) {
  std::string out;
  keys::put_u64(out, hs.term);
  keys::put_u64(out, hs.commit);
  out += hs.voted_for;
  return out;
}

}  // namespace

caf::expected<raft_log> raft_log::open(rocks& db) {
  raft_log log(db);
  auto raw = db.get(column::raft_meta, hard_state_key);
  if (!raw) return raw.error();
  if (*raw) {
    if ((*raw)->size() < 16) return make_error(errc::corrupted, "raft hard state is truncated");
    log.state_.term = keys::get_u64(**raw, 0);
    log.state_.commit = keys::get_u64(**raw, 8);
    log.state_.voted_for = (*raw)->substr(16);
  }
  auto base = db.get(column::raft_meta, base_key);
  if (!base) return base.error();
  if (*base) {
    if ((*base)->size() != 16) return make_error(errc::corrupted, "raft snapshot base is truncated");
    log.base_ = log_base{keys::get_u64(**base, 0), keys::get_u64(**base, 8)};
  }
  log.last_index_ = log.base_.index;
  log.last_term_ = log.base_.term;
  auto it = db.iterate(column::raft_log);
  it->SeekToLast();
  if (it->Valid()) {
    auto e = proto::decode<proto::log_entry>(std::string_view(it->value().data(), it->value().size()));
    if (!e) return e.error();
    if (e->index != keys::get_u64(std::string_view(it->key().data(), it->key().size())))
      return make_error(errc::corrupted, "raft log key and entry index disagree");
    if (e->index <= log.base_.index)
      return make_error(errc::corrupted, "raft log holds entries below its snapshot base");
    log.last_index_ = e->index;
    log.last_term_ = e->term;
  } else if (!it->status().ok()) {
    return make_error(errc::storage_error, it->status().ToString());
  }
  return log;
}

caf::error raft_log::append(const std::vector<proto::log_entry>& entries, const hard_state& hs,
                            std::optional<uint64_t> truncate_from, bool sync) {
  rocksdb::WriteBatch batch;
  uint64_t base = last_index_;
  uint64_t base_term = last_term_;
  if (truncate_from && *truncate_from <= last_index_) {
    if (*truncate_from <= hs.commit && *truncate_from <= state_.commit)
      return make_error(errc::internal, "raft log truncation below the commit index");
    batch.DeleteRange(db_->cf(column::raft_log), keys::u64(*truncate_from),
                      keys::u64(last_index_ + 1));
    if (*truncate_from <= base_.index)
      return make_error(errc::internal, "raft log truncation below the snapshot base");
    base = *truncate_from - 1;
    base_term = base_.term;
    if (base > base_.index) {
      auto prev = read(base, base);
      if (!prev) return prev.error();
      if (!prev->empty()) base_term = prev->front().term;
    }
  }
  uint64_t expect = base + 1;
  for (auto& e : entries) {
    if (e.index != expect++)
      return make_error(errc::internal, "raft log append out of order at " +
                                            std::to_string(e.index));
    batch.Put(db_->cf(column::raft_log), keys::u64(e.index), proto::encode(e));
  }
  batch.Put(db_->cf(column::raft_meta), hard_state_key, encode_hard_state(hs));
  if (auto err = db_->write(batch, sync)) return err;
  last_index_ = base;
  last_term_ = base_term;
  if (!entries.empty()) {
    last_index_ = entries.back().index;
    last_term_ = entries.back().term;
  }
  state_ = hs;
  return {};
}

caf::error raft_log::save(const hard_state& hs) { return append({}, hs); }

caf::error raft_log::compact(uint64_t index, uint64_t term) {
  if (index <= base_.index) return {};
  if (index > last_index_)
    return make_error(errc::internal, "compacting raft log entries it does not hold");
  // The state machine writes without sync (the log can replay them). Once the
  // entries are deleted nothing can, so make those writes durable first.
  if (auto err = db_->sync_wal()) return err;
  log_base b{index, term};
  rocksdb::WriteBatch batch;
  batch.DeleteRange(db_->cf(column::raft_log), keys::u64(0), keys::u64(index + 1));
  batch.Put(db_->cf(column::raft_meta), base_key, encode_base(b));
  if (auto err = db_->write(batch, true)) return err;
  base_ = b;
  return {};
}

caf::error raft_log::install(const log_base& base, const hard_state& hs,
                             rocksdb::WriteBatch& state) {
  if (hs.commit < base.index)
    return make_error(errc::internal, "snapshot installed beyond the commit index");
  state.DeleteRange(db_->cf(column::raft_log), keys::u64(0),
                    keys::u64(std::numeric_limits<uint64_t>::max()));
  state.Put(db_->cf(column::raft_meta), base_key, encode_base(base));
  state.Put(db_->cf(column::raft_meta), hard_state_key, encode_hard_state(hs));
  if (auto err = db_->write(state, true)) return err;
  base_ = base;
  last_index_ = base.index;
  last_term_ = base.term;
  state_ = hs;
  return {};
}

caf::expected<std::vector<proto::log_entry>> raft_log::read(uint64_t from, uint64_t to,
                                                            size_t max) const {
  std::vector<proto::log_entry> out;
  auto it = db_->iterate(column::raft_log);
  for (it->Seek(keys::u64(from)); it->Valid() && out.size() < max; it->Next()) {
    auto idx = keys::get_u64(std::string_view(it->key().data(), it->key().size()));
    if (idx > to) break;
    auto e = proto::decode<proto::log_entry>(std::string_view(it->value().data(), it->value().size()));
    if (!e) return e.error();
    if (e->index != idx || idx != from + out.size())
      return make_error(errc::corrupted, "raft log has a gap or mismatch at " +
                                             std::to_string(idx));
    out.push_back(std::move(*e));
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  return out;
}

}  // namespace aisched::storage
