// Snapshot export and staged install; see snapshot.hpp.
//
// Chunk format: records back to back, each
//   [column: u8][key size: u32][key][value size: u32][value]
// with big-endian sizes (keys.hpp). The column byte is the storage::column
// value, checked on arrival against state_columns.
#include "storage/snapshot.hpp"

#include <algorithm>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "proto/errors.hpp"
#include "storage/keys.hpp"

namespace aisched::storage {

namespace {

constexpr std::string_view applied_key = "applied_index";  // as in state_machine.cpp

bool is_state_column(uint8_t c) {
  return std::any_of(state_columns.begin(), state_columns.end(),
                     [c](column x) { return static_cast<uint8_t>(x) == c; });
}

caf::error status_error(const rocksdb::Status& s, const char* what) {
  if (s.ok()) return {};
  return make_error(errc::storage_error, std::string(what) + ": " + s.ToString());
}

}  // namespace

// -- export ------------------------------------------------------------------

snapshot_export::snapshot_export(rocks& db) : db_(db) {}

snapshot_export::~snapshot_export() {
  it_.reset();  // an iterator must not outlive the snapshot it reads
  if (snap_ != nullptr) db_.db()->ReleaseSnapshot(snap_);
}

caf::expected<std::unique_ptr<snapshot_export>> snapshot_export::open(rocks& db) {
  std::unique_ptr<snapshot_export> x{new snapshot_export(db)};
  x->snap_ = db.db()->GetSnapshot();
  rocksdb::ReadOptions ro;
  ro.snapshot = x->snap_;
  std::string raw;
  auto st = db.db()->Get(ro, db.cf(column::meta), rocksdb::Slice(applied_key.data(), applied_key.size()),
                         &raw);
  if (st.ok()) {
    if (raw.size() != 8) return make_error(errc::corrupted, "applied index has a bad size");
    x->applied_ = keys::get_u64(raw);
  } else if (!st.IsNotFound()) {
    return status_error(st, "reading the applied index for a snapshot");
  }
  if (auto err = x->open_column()) return err;
  return x;
}

caf::error snapshot_export::open_column() {
  if (done()) {
    it_.reset();
    return {};
  }
  rocksdb::ReadOptions ro;
  ro.snapshot = snap_;
  // A one-off scan: do not evict the working set from the block cache.
  ro.fill_cache = false;
  it_.reset(db_.db()->NewIterator(ro, db_.cf(state_columns[column_])));
  it_->SeekToFirst();
  return status_error(it_->status(), "opening a snapshot iterator");
}

caf::expected<std::string> snapshot_export::next_chunk(size_t max_bytes) {
  std::string out;
  while (!done()) {
    if (!it_->Valid()) {
      if (auto err = status_error(it_->status(), "reading a snapshot")) return err;
      ++column_;
      if (auto err = open_column()) return err;
      continue;
    }
    auto k = it_->key();
    auto v = it_->value();
    size_t size = 1 + 4 + k.size() + 4 + v.size();
    if (!out.empty() && out.size() + size > max_bytes) break;
    out.push_back(static_cast<char>(state_columns[column_]));
    keys::put_u32(out, static_cast<uint32_t>(k.size()));
    out.append(k.data(), k.size());
    keys::put_u32(out, static_cast<uint32_t>(v.size()));
    out.append(v.data(), v.size());
    ++records_;
    it_->Next();
  }
  bytes_ += out.size();
  return out;
}

caf::expected<std::optional<std::string>> snapshot_export::get(column c,
                                                                std::string_view key) const {
  rocksdb::ReadOptions ro;
  ro.snapshot = snap_;
  std::string value;
  auto st = db_.db()->Get(ro, db_.cf(c), rocksdb::Slice(key.data(), key.size()), &value);
  if (st.IsNotFound()) return std::optional<std::string>{};
  if (auto err = status_error(st, "reading a snapshot")) return err;
  return std::optional<std::string>{std::move(value)};
}

caf::expected<std::vector<std::string>> snapshot_export::values_with_prefix(
    column c, std::string_view prefix) const {
  rocksdb::ReadOptions ro;
  ro.snapshot = snap_;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_.db()->NewIterator(ro, db_.cf(c)));
  std::vector<std::string> out;
  rocksdb::Slice p(prefix.data(), prefix.size());
  for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next())
    out.emplace_back(it->value().data(), it->value().size());
  if (auto err = status_error(it->status(), "reading a snapshot")) return err;
  return out;
}

// -- staging -----------------------------------------------------------------

snapshot_staging::snapshot_staging(rocks& db)
    : db_(db), batch_(std::make_unique<rocksdb::WriteBatch>()) {
  // Wipe first: within one batch later puts win over the range deletion (they
  // get higher sequence numbers), so the old state goes and the new one stays.
  // The range ends just after each column's current last key; keys written
  // meanwhile are impossible, the raft actor being the only writer.
  for (auto c : state_columns) {
    auto it = db_.iterate(c);
    it->SeekToLast();
    if (!it->Valid()) continue;
    std::string end(it->key().data(), it->key().size());
    end.push_back('\0');  // the smallest key after the last one
    batch_->DeleteRange(db_.cf(c), rocksdb::Slice(), end);
  }
}

snapshot_staging::~snapshot_staging() = default;

caf::error snapshot_staging::add(std::string_view chunk) {
  auto bad = [](const char* what) {
    return make_error(errc::corrupted, std::string("snapshot chunk: ") + what);
  };
  size_t pos = 0;
  while (pos < chunk.size()) {
    if (chunk.size() - pos < 5) return bad("truncated record header");
    auto c = static_cast<uint8_t>(chunk[pos]);
    if (!is_state_column(c)) return bad("record for a column that is not state");
    auto klen = keys::get_u32(chunk, pos + 1);
    pos += 5;
    if (chunk.size() - pos < size_t{klen} + 4) return bad("truncated key");
    auto key = chunk.substr(pos, klen);
    pos += klen;
    auto vlen = keys::get_u32(chunk, pos);
    pos += 4;
    if (chunk.size() - pos < vlen) return bad("truncated value");
    auto value = chunk.substr(pos, vlen);
    pos += vlen;
    batch_->Put(db_.cf(static_cast<column>(c)), rocksdb::Slice(key.data(), key.size()),
                rocksdb::Slice(value.data(), value.size()));
    ++records_;
  }
  bytes_ += chunk.size();
  return {};
}

caf::error copy_state(rocks& from, rocks& to, size_t chunk_bytes) {
  auto exp = snapshot_export::open(from);
  if (!exp) return exp.error();
  snapshot_staging staging(to);
  while (!(*exp)->done()) {
    auto chunk = (*exp)->next_chunk(chunk_bytes);
    if (!chunk) return chunk.error();
    if (auto err = staging.add(*chunk)) return err;
  }
  return to.write(staging.batch(), true);
}

}  // namespace aisched::storage
