// The state machine's meta-column bookkeeping; see state_meta.hpp.
#include "storage/state_meta.hpp"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "obs/metrics.hpp"
#include "proto/errors.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

using namespace proto;
using state_counts = state_machine::state_counts;

caf::expected<uint64_t> read_meta(rocks& db, std::string_view key, uint64_t fallback) {
  auto raw = db.get(column::meta, key);
  if (!raw) return raw.error();
  if (!*raw) return fallback;
  if ((*raw)->size() != 8) return make_error(errc::corrupted, "meta key has a bad size");
  return keys::get_u64(**raw);
}

std::string encode_counts(const state_counts& counts) {
  std::string out;
  for (auto n : counts) keys::put_u64(out, n);
  return out;
}

/// The per-state instance counts: stored beside the applied index, or, for a
/// database written before they were kept, counted once from the state index
/// (every instance has exactly one entry there) and stored. Stored rather than
/// recounted at each start because finished instances are never removed: a
/// scan would cost O(every run ever) on each restart or failover, while the
/// stored counts are one small write in batches that write instances anyway.
caf::expected<state_counts> load_counts(rocks& db) {
  state_counts counts{};
  auto raw = db.get(column::meta, instance_counts_key);
  if (!raw) return raw.error();
  if (*raw) {
    if ((*raw)->size() != 8 * counts.size())
      return make_error(errc::corrupted, "instance counts have a bad size");
    for (size_t i = 0; i < counts.size(); ++i) counts[i] = keys::get_u64(**raw, 8 * i);
    return counts;
  }
  auto it = db.iterate(column::instances_by_state);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto key = it->key();
    if (key.size() == 0 || static_cast<uint8_t>(key[0]) >= counts.size())
      return make_error(errc::corrupted, "state index key with a bad state");
    counts[static_cast<uint8_t>(key[0])] += 1;
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  rocksdb::WriteBatch b;
  b.Put(db.cf(column::meta), instance_counts_key, encode_counts(counts));
  if (auto err = db.write(b, false)) return err;
  return counts;
}

void publish_counts(const state_counts& counts) {
  auto& m = obs::get();
  for (size_t i = 0; i < counts.size(); ++i) m.instances[i].set(static_cast<double>(counts[i]));
}

void publish_mutations(const batch_effects& fx) {
  auto& m = obs::get();
  if (fx.created) m.task_created.inc(static_cast<double>(fx.created));
  if (fx.updated) m.task_updated.inc(static_cast<double>(fx.updated));
  if (fx.deleted) m.task_deleted.inc(static_cast<double>(fx.deleted));
  if (fx.paused) m.task_paused.inc(static_cast<double>(fx.paused));
  if (fx.resumed) m.task_resumed.inc(static_cast<double>(fx.resumed));
  if (fx.pruned) m.runs_pruned.inc(static_cast<double>(fx.pruned));
}

caf::error check_task_ids(rocks& db, uint64_t next) {
  auto last = db.iterate(column::tasks);
  last->SeekToLast();
  if (!last->status().ok())
    return make_error(errc::corrupted, "cannot read the tasks: " + last->status().ToString());
  if (!last->Valid() || last->key().size() != 8) return {};
  auto highest = keys::get_u64(std::string_view(last->key().data(), 8));
  if (highest < next) return {};
  return make_error(errc::corrupted, "the task id counter (next " + std::to_string(next) +
                                         ") is not above the highest task id present (" +
                                         std::to_string(highest) + "): ids would be reused");
}

}  // namespace aisched::storage
