// The writes of one state-machine apply() call (storage/state_machine.cpp):
// a RocksDB WriteBatch with an overlay so later commands of the batch read what
// earlier ones wrote, in front of the apply cache and the database. Internal
// to the state machine; only its applying thread uses either.
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <caf/expected.hpp>
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "proto/types.hpp"
#include "storage/apply_cache.hpp"
#include "storage/idempotency.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"
#include "storage/state_machine.hpp"

namespace aisched::storage {

/// What one apply() call changed, for metrics; published once the batch is written.
struct batch_effects {
  std::array<int64_t, std::tuple_size_v<state_machine::state_counts>> instances{};  // per-state delta
  uint64_t created = 0, updated = 0, deleted = 0, paused = 0, resumed = 0, pruned = 0;
};

/// Whether a command naming tenant `want` may touch a record of tenant `have`
/// ("" matches every tenant); a record of another tenant is "not found".
inline bool tenant_matches(std::string_view want, const std::string& have) {
  return want.empty() || want == have;
}


/// The writes of one apply() call, with an overlay so later entries of the same
/// batch see what earlier ones wrote. Records are written once per batch, with
/// their last value (finish()): a run that is dispatched, starts and ends
/// within one batch costs one instance write and one state-index move, not
/// three of each.
class batch_ctx {
 public:
  batch_ctx(rocks& db, apply_cache& cache) : db_(db), cache_(cache) {}

  [[nodiscard]] caf::expected<std::optional<proto::task>> read_task(uint64_t id) {
    auto t = task_ref(id);
    if (!t) return t.error();
    if (!*t) return std::optional<proto::task>{};
    return std::optional<proto::task>{**t};
  }

  /// Task `id` as this batch sees it, not copied (nullptr: no such task).
  /// Valid until the batch is written (written()).
  [[nodiscard]] caf::expected<const proto::task*> task_ref(uint64_t id) {
    auto key = keys::task(id);
    if (auto i = tasks_.find(key); i != tasks_.end()) return i->second ? &*i->second : nullptr;
    auto i = cache_.tasks.find(id);
    if (i == cache_.tasks.end()) {
      auto t = read<proto::task>(column::tasks, key);
      if (!t) return t.error();
      i = cache_.tasks.emplace(id, std::move(*t)).first;
    }
    return i->second ? &*i->second : nullptr;
  }

  void put_task(const proto::task& t) { tasks_[keys::task(t.id)] = t; }

  /// The tasks whose `depends_on` lists `id`, as this batch sees them, in id
  /// order. A scan of every task: for deletes, which are rare.
  caf::expected<std::vector<proto::task>> dependents_of(uint64_t id) {
    return tasks_where([id](const proto::task& t) {
      return std::find(t.depends_on.begin(), t.depends_on.end(), id) != t.depends_on.end();
    });
  }

  /// The tasks for which `keep` holds, as this batch sees them, in id order.
  /// A scan of every task: for deletes (of tasks, calendars), which are rare.
  template <class Keep>
  caf::expected<std::vector<proto::task>> tasks_where(Keep keep) {
    std::map<std::string, proto::task> found;
    auto it = db_.iterate(column::tasks);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      auto key = it->key().ToString();
      if (tasks_.count(key)) continue;  // this batch's version wins (below)
      auto t = proto::decode<proto::task>(it->value().ToString());
      if (!t) return t.error();
      if (keep(*t)) found.emplace(key, std::move(*t));
    }
    if (!it->status().ok())
      return make_error(errc::storage_error, "task scan failed: " + it->status().ToString());
    for (auto& [key, t] : tasks_)
      if (t && keep(*t)) found.emplace(key, *t);
    std::vector<proto::task> out;
    for (auto& [key, t] : found) out.push_back(std::move(t));
    return out;
  }

  /// Deletes the task and its runtime facts (task ids are never reused).
  void delete_task(uint64_t id) {
    auto key = keys::task(id);
    tasks_[key] = std::nullopt;
    proto::task_runtime fresh;  // what read_runtime answers for a task that never fired
    fresh.task_id = id;
    runtimes_[key] = fresh;
  }

  [[nodiscard]] caf::expected<proto::task_runtime> read_runtime(uint64_t id) {
    auto key = keys::task(id);
    if (auto i = runtimes_.find(key); i != runtimes_.end()) return i->second;
    if (auto i = cache_.runtimes.find(id); i != cache_.runtimes.end()) return i->second;
    auto r = read<proto::task_runtime>(column::task_state, key);
    if (!r) return r.error();
    proto::task_runtime out;
    if (*r) {
      out = std::move(**r);
    } else {
      out.task_id = id;
    }
    cache_.runtimes.emplace(id, out);
    return out;
  }

  void put_runtime(const proto::task_runtime& r) { runtimes_[keys::task(r.task_id)] = r; }

  [[nodiscard]] caf::expected<std::optional<proto::instance>> read_instance(const std::string& key) {
    if (auto i = instances_.find(key); i != instances_.end()) return i->second.x;
    if (in_erased_span(key)) return std::optional<proto::instance>{};
    if (auto i = cache_.instances.find(key); i != cache_.instances.end()) {
      // Taken out, not copied: written() puts back what this batch wrote, and
      // one it did not write is read from the database again (the same value).
      auto x = std::move(i->second);
      cache_.instances.erase(i);
      return std::optional<proto::instance>{std::move(x)};
    }
    if (auto i = prefetched_.find(key); i != prefetched_.end()) {
      auto x = std::move(i->second);
      prefetched_.erase(i);
      if (x && !is_terminal(x->state)) cache_.instances.emplace(key, *x);
      return x;
    }
    auto x = read<proto::instance>(column::instances, key);
    if (x && *x && !is_terminal((*x)->state)) cache_.instances.emplace(key, **x);
    return x;
  }

  /// Reads the stored instances at `keys` in one RocksDB MultiGet, for the
  /// read_instance calls that follow (each taken once): what a command about
  /// many finished runs (prune_runs) would otherwise read one Get at a time
  /// from the SST files; decoded here (a value that does not decode fails
  /// the prefetch). Keys this batch or the cache holds are skipped.
  [[nodiscard]] caf::error prefetch_instances(const std::vector<std::string>& keys) {
    std::vector<rocksdb::Slice> wanted;
    for (auto& k : keys)
      if (!instances_.count(k) && !cache_.instances.count(k) && !prefetched_.count(k))
        wanted.emplace_back(k);
    if (wanted.empty()) return {};
    std::vector<rocksdb::PinnableSlice> values(wanted.size());
    std::vector<rocksdb::Status> status(wanted.size());
    db_.db()->MultiGet(rocksdb::ReadOptions{}, db_.cf(column::instances), wanted.size(),
                       wanted.data(), values.data(), status.data());
    prefetched_.reserve(prefetched_.size() + wanted.size());
    for (size_t i = 0; i < wanted.size(); ++i) {
      auto key = wanted[i].ToString();
      if (status[i].IsNotFound()) {
        prefetched_.emplace(std::move(key), std::nullopt);
      } else if (status[i].ok()) {
        auto x =
            proto::decode<proto::instance>(std::string_view(values[i].data(), values[i].size()));
        if (!x) return x.error();
        prefetched_.emplace(std::move(key), std::move(*x));
      } else {
        return make_error(errc::storage_error, "read from instances failed: " + status[i].ToString());
      }
    }
    return {};
  }

  /// Writes `x`, whose state was `old_state` (none: a new instance); the state
  /// index follows at finish().
  void put_instance(const std::string& key, const proto::instance& x,
                    std::optional<proto::instance_state> old_state) {
    if (!old_state || *old_state != x.state) {
      if (old_state) effects_.instances[static_cast<size_t>(*old_state)] -= 1;
      effects_.instances[static_cast<size_t>(x.state)] += 1;
    }
    // The state the database holds: the one before this batch's first write.
    auto [i, fresh] = instances_.try_emplace(key);
    if (fresh) i->second.stored = old_state;
    i->second.x = x;
  }

  /// Removes the instance at `key`, whose state is `state` (run-history
  /// retention); its state-index entry goes at finish().
  void erase_instance(const std::string& key, proto::instance_state state) {
    effects_.instances[static_cast<size_t>(state)] -= 1;
    auto [i, fresh] = instances_.try_emplace(key);
    if (fresh) i->second.stored = state;  // kept if this batch wrote it before
    i->second.x = std::nullopt;
  }

  /// The instances this batch wrote (nullopt: erased) with keys in [lo, hi),
  /// in key order: `f(key, value)`.
  template <class F>
  void for_instances_written_in(const std::string& lo, const std::string& hi, F f) const {
    for (auto i = instances_.lower_bound(lo); i != instances_.end() && i->first < hi; ++i)
      f(i->first, i->second.x);
  }

  /// Whether this batch wrote (or erased) the instance at `key`.
  [[nodiscard]] bool wrote_instance(const std::string& key) const {
    return instances_.count(key) != 0;
  }

  /// Whether an earlier command of this batch range-deleted the instance at `key`.
  [[nodiscard]] bool in_erased_span(const std::string& key) const {
    return std::any_of(erased_spans_.begin(), erased_spans_.end(),
                       [&](const auto& r) { return r.first <= key && key < r.second; });
  }

  /// Notes that the batch range-deleted the instances with keys in [lo, hi)
  /// (run-history retention, storage/run_retention.cpp) that it did not
  /// write itself (those go by erase_instance), all finished, `n` of them in
  /// each state: later reads of this batch find none there.
  void erase_instance_span(std::string lo, std::string hi, const state_machine::state_counts& n) {
    for (size_t s = 0; s < n.size(); ++s) effects_.instances[s] -= static_cast<int64_t>(n[s]);
    // Attempt records put earlier in the batch go with the range deletion.
    attempts_.erase(attempts_.lower_bound(lo), attempts_.lower_bound(hi));
    erased_spans_.emplace_back(std::move(lo), std::move(hi));
  }

  void put_meta(std::string_view key, uint64_t value) {
    batch_.Put(db_.cf(column::meta), key, keys::u64(value));
  }

  /// What a create with this idempotency key made (task_id 0: none yet).
  /// Stored as 8 bytes (the task id: records written before requests were
  /// fingerprinted, which match any request) or 16 (id, then fingerprint).
  [[nodiscard]] caf::expected<idempotency_record> read_created_by(const std::string& key) {
    if (auto i = created_by_.find(key); i != created_by_.end()) return i->second;
    auto raw = db_.get(column::meta, key);
    if (!raw) return raw.error();
    if (!*raw) return idempotency_record{};
    auto size = (*raw)->size();
    if (size != 8 && size != 16)
      return make_error(errc::corrupted, "idempotency record has a bad size");
    idempotency_record r;
    r.task_id = keys::get_u64(**raw, 0);
    if (size == 16) r.fingerprint = keys::get_u64(**raw, 8);
    return r;
  }

  void put_created_by(const std::string& key, idempotency_record r) {
    created_by_[key] = r;
    auto value = keys::u64(r.task_id);
    if (r.fingerprint != 0) value += keys::u64(r.fingerprint);
    batch_.Put(db_.cf(column::meta), key, value);
  }

  /// Task `task_id`'s retention mark (storage/run_retention) as this batch sees it.
  [[nodiscard]] caf::expected<std::optional<std::string>> read_pruned_mark(uint64_t task_id) {
    if (auto i = marks_.find(task_id); i != marks_.end()) return std::optional<std::string>{i->second};
    return db_.get(column::meta, keys::pruned_mark(task_id));
  }

  void put_pruned_mark(uint64_t task_id, std::string value) {
    batch_.Put(db_.cf(column::meta), keys::pruned_mark(task_id), value);
    marks_[task_id] = std::move(value);
  }

  /// Whether the attempt record at `key` exists, this batch's writes included.
  [[nodiscard]] caf::expected<bool> read_attempt_exists(const std::string& key) {
    if (attempts_.count(key)) return true;
    if (in_erased_span(key.substr(0, keys::instance_key_size))) return false;
    auto raw = db_.get(column::attempts, key);
    if (!raw) return raw.error();
    return raw->has_value();
  }

  /// Notes that this batch put the attempt record at `key` (record_attempt).
  void wrote_attempt(std::string key) { attempts_.insert(std::move(key)); }

  /// Notes that this batch writes AI analyses (the database does not show
  /// them until it is written).
  void wrote_analyses() { analyses_written_ = true; }
  [[nodiscard]] bool analyses_written() const { return analyses_written_; }

  /// Puts every record's last value of this batch into the WriteBatch; call
  /// once, before writing it.
  void finish() {
    auto* cf_tasks = db_.cf(column::tasks);
    auto* cf_state = db_.cf(column::task_state);
    for (auto& [key, t] : tasks_) {
      if (t) {
        batch_.Put(cf_tasks, key, proto::encode(*t));
      } else {
        batch_.Delete(cf_tasks, key);
        batch_.Delete(cf_state, key);
      }
    }
    for (auto& [key, r] : runtimes_) {
      auto t = tasks_.find(key);
      if (t == tasks_.end() || t->second) batch_.Put(cf_state, key, proto::encode(r));
    }
    auto* cf_index = db_.cf(column::instances_by_state);
    for (auto& [key, w] : instances_) {
      auto& x = w.x;
      auto from = w.stored;
      if (!x) {  // erased: what the database holds goes, with its index entry
        batch_.Delete(db_.cf(column::instances), key);
        if (from) batch_.Delete(cf_index, keys::state_index(static_cast<uint8_t>(*from), key));
        continue;
      }
      batch_.Put(db_.cf(column::instances), key, proto::encode(*x));
      if (from && *from == x->state) continue;
      if (from) batch_.Delete(cf_index, keys::state_index(static_cast<uint8_t>(*from), key));
      batch_.Put(cf_index, keys::state_index(static_cast<uint8_t>(x->state), key), "");
    }
  }

  /// After the batch is written: the cache takes what it changed (moved out:
  /// the context is done). Tasks and runtimes it holds already are updated;
  /// others are not added: a task enters the cache when a command reads it,
  /// so tasks created and left idle cost no memory here (#17: 200 000 idle
  /// tasks filled it to its bound).
  void written() {
    for (auto& [key, t] : tasks_)
      if (auto i = cache_.tasks.find(keys::get_u64(key)); i != cache_.tasks.end())
        i->second = std::move(t);
    for (auto& [key, r] : runtimes_)
      if (auto i = cache_.runtimes.find(keys::get_u64(key)); i != cache_.runtimes.end())
        i->second = std::move(r);
    for (auto& [key, w] : instances_) {
      if (w.x && !is_terminal(w.x->state))
        cache_.instances[key] = std::move(*w.x);
      else
        cache_.instances.erase(key);
    }
    cache_.trim();
  }

  rocksdb::WriteBatch& batch() { return batch_; }
  batch_effects& effects() { return effects_; }
  rocks& db() { return db_; }

 private:
  template <class T>
  [[nodiscard]] caf::expected<std::optional<T>> read(column c, const std::string& key) {
    auto raw = db_.get(c, key);
    if (!raw) return raw.error();
    if (!*raw) return std::optional<T>{};
    auto x = proto::decode<T>(**raw);
    if (!x) return x.error();
    return std::optional<T>{std::move(*x)};
  }

  rocks& db_;
  apply_cache& cache_;
  rocksdb::WriteBatch batch_;
  batch_effects effects_;
  std::map<std::string, std::optional<proto::task>> tasks_;
  std::map<std::string, proto::task_runtime> runtimes_;
  /// An instance this batch wrote: its last value (nullopt: erased), and the
  /// state the database holds, before the batch's first write (nullopt: new).
  struct instance_write {
    std::optional<proto::instance> x;
    std::optional<proto::instance_state> stored;
  };
  std::map<std::string, instance_write> instances_;  // by instance key
  std::vector<std::pair<std::string, std::string>> erased_spans_;  // [lo, hi) instance keys
  std::map<std::string, idempotency_record> created_by_;
  std::map<uint64_t, std::string> marks_;  // retention marks, by task id
  std::set<std::string> attempts_;         // attempt records this batch put
  bool analyses_written_ = false;
  // prefetch_instances: decoded, each taken once by read_instance
  std::unordered_map<std::string, std::optional<proto::instance>> prefetched_;
};

}  // namespace aisched::storage
