// Run-history retention in the state machine; see run_retention.hpp.
#include "storage/run_retention.hpp"

#include <algorithm>
#include <map>

#include <rocksdb/db.h>

#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "storage/batch_ctx.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

using namespace proto;

namespace retention {

retention_policy effective(const retention_policy& own, const retention_policy& defaults) {
  retention_policy out = own;
  if (out.keep_for == 0) out.keep_for = defaults.keep_for;
  if (out.keep_runs == 0) out.keep_runs = defaults.keep_runs;
  return out;
}

cut cut_for(const retention_policy& p, uint64_t runs, unix_ms now) {
  cut c;
  if (p.keep_runs != 0 && runs > p.keep_runs) c.excess = runs - p.keep_runs;
  if (p.keep_for != 0) c.ended_before = now - p.keep_for;
  return c;
}

}  // namespace retention

namespace {

/// A mark's value: the latest removed slot, then the tenant.
std::string encode_mark(unix_ms slot, std::string_view tenant) {
  std::string out;
  keys::put_i64(out, slot);
  out.append(tenant);
  return out;
}

struct mark {
  unix_ms slot = std::numeric_limits<unix_ms>::min();
  std::string tenant;
};

caf::expected<mark> decode_mark(std::string_view raw) {
  if (raw.size() < 8) return make_error(errc::corrupted, "retention mark is too short");
  return mark{keys::get_i64(raw, 0), std::string(raw.substr(8))};
}

template <class T>
caf::expected<std::optional<T>> read_record(rocks& db, column c, const std::string& key) {
  auto raw = db.get(c, key);
  if (!raw) return raw.error();
  if (!*raw) return std::optional<T>{};
  auto x = decode<T>(**raw);
  if (!x) return x.error();
  return std::optional<T>{std::move(*x)};
}

}  // namespace

caf::expected<prune_page> scan_prunable(rocks& db, const prune_query& q) {
  prune_page page;
  const auto limit = std::clamp<uint32_t>(q.limit, 1, 10'000);
  uint32_t named = 0;  // runs the page names, in spans or by id
  const auto max_tasks = std::clamp<uint32_t>(q.max_tasks, 1, 100'000);
  auto it = db.iterate(column::instances);
  uint64_t after = q.from.after_task;
  // The first task resumes where the last page stopped inside it, if it did.
  const bool resuming = !q.from.key.empty() && after != std::numeric_limits<uint64_t>::max();
  for (uint32_t looked = 0; looked < max_tasks; ++looked) {
    if (after == std::numeric_limits<uint64_t>::max()) break;
    const bool resumed = resuming && looked == 0;
    it->Seek(resumed ? q.from.key : keys::task(after + 1));
    if (!it->Valid()) break;
    auto first = keys::parse_instance(std::string_view(it->key().data(), it->key().size()));
    if (!first) return make_error(errc::corrupted, "malformed instance key");
    const uint64_t task_id = first->task_id;
    auto t = read_record<task>(db, column::tasks, keys::task(task_id));
    if (!t) return t.error();
    auto policy = retention::effective(*t ? (*t)->retention : retention_policy{}, q.defaults);
    retention::cut c;
    uint64_t i = 0;
    if (resumed && task_id == after + 1) {
      // The count bound as the walk found it when it began this task, and
      // the records it looked at since, those the last pages named included:
      // removed or not, no record among the newest keep_runs goes (runs
      // created since only make the walk keep more).
      c = retention::cut_for(policy, 0, q.now);
      c.excess = q.from.excess;
      i = q.from.index;
    } else {
      auto rt = read_record<task_runtime>(db, column::task_state, keys::task(task_id));
      if (!rt) return rt.error();
      c = retention::cut_for(policy, *t && *rt ? (*rt)->runs : 0, q.now);
    }
    // The records that go from the task's oldest on make its span; after the
    // first that stays, each that goes is named by id.
    bool in_span = resumed ? q.from.in_span : true;
    prune_span span{task_id};
    auto add_span = [&] {
      if (span.runs != 0) page.spans.push_back(span);
    };
    const auto own = keys::task(task_id);
    for (; it->Valid() && it->key().starts_with(own); it->Next(), ++i) {
      auto ref = keys::parse_instance(std::string_view(it->key().data(), it->key().size()));
      if (!ref) return make_error(errc::corrupted, "malformed instance key");
      if (c.past(i, ref->slot)) break;
      auto x = decode<instance>(std::string_view(it->value().data(), it->value().size()));
      if (!x) return x.error();
      if (!c.lets_go(i, *x)) {
        in_span = false;
        continue;
      }
      if (in_span) {
        if (span.runs == 0) {
          span.from_slot = ref->slot;
          span.from_shard = ref->shard;
        }
        span.slot = ref->slot;
        span.shard = ref->shard;
        span.runs += 1;
      } else {
        page.instance_ids.push_back(std::move(x->id));
      }
      if (++named == limit) {
        // Full within this task: the next page resumes just after this record.
        add_span();
        auto key = it->key().ToString();
        key.push_back('\0');  // the least key above this one
        page.next = prune_cursor{task_id - 1, std::move(key), i + 1, c.excess, in_span};
        return page;
      }
    }
    add_span();
    if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
    after = task_id;
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  page.next = prune_cursor{after, {}, 0, 0};
  page.done = !it->Valid();
  return page;
}

namespace {

struct removal : mark {
  uint64_t removed = 0;  // runs of the task this command removed
};
using removals = std::map<uint64_t, removal>;  // by task: the latest slot this command removed

/// Removes the runs `ids` names that are stored and finished, one at a time.
caf::expected<uint64_t> remove_runs(batch_ctx& ctx, const std::vector<std::string>& ids,
                                    removals& latest) {
  uint64_t removed = 0;
  auto* attempts = ctx.db().cf(column::attempts);
  auto* analyses = ctx.db().cf(column::ai_analysis);
  // Finished runs are not cached and mostly flushed already: one MultiGet for
  // the page, not a Get each.
  std::vector<std::string> run_keys;
  run_keys.reserve(ids.size());
  for (auto& id : ids)
    if (auto ref = keys::parse_instance_id(id))
      run_keys.push_back(keys::instance(ref->task_id, ref->slot, ref->shard));
  if (auto err = ctx.prefetch_instances(run_keys)) return err;
  for (auto& key : run_keys) {
    auto cur = ctx.read_instance(key);
    if (!cur) return cur.error();
    // Gone already (a repeated command), or retried by hand since the leader
    // looked: nothing to remove.
    if (!*cur || !is_terminal((*cur)->state)) continue;
    const auto& x = **cur;
    ctx.erase_instance(key, x.state);
    // The attempt records kept are the last attempts_kept (attempt_history).
    // A run that succeeded has none of its last attempt: the instance held it
    // (success comes only from the attempt in flight, which takes no record).
    // Deleting what was never written costs a tombstone per run to write,
    // flush and compact away.
    uint32_t from = x.attempt > attempts_kept ? x.attempt - attempts_kept + 1 : 1;
    uint32_t last = x.state == instance_state::success && x.attempt > 0 ? x.attempt - 1 : x.attempt;
    for (uint32_t a = from; a <= last; ++a) ctx.batch().Delete(attempts, keys::attempt(key, a));
    // Few runs have an analysis: looked up (a bloom filter answers most),
    // unless this batch wrote analyses the database does not show yet.
    auto akey = keys::analysis(x.tenant, x.id);
    bool analysed = ctx.analyses_written();
    if (!analysed) {
      auto found = ctx.db().get(column::ai_analysis, akey);
      if (!found) return found.error();
      analysed = found->has_value();
    }
    if (analysed) ctx.batch().Delete(analyses, akey);
    auto& m = latest[x.task_id];
    m.slot = std::max(m.slot, x.slot);
    if (m.tenant != x.tenant) m.tenant = x.tenant;
    m.removed += 1;
    ++removed;
  }
  return removed;
}

/// The least 20-byte instance key above every key that begins with `key`
/// (big-endian increment); nullopt past the last one.
std::optional<std::string> key_after(std::string key) {
  for (size_t i = key.size(); i-- > 0;) {
    auto b = static_cast<uint8_t>(key[i]);
    key[i] = static_cast<char>(b + 1);
    if (b != 0xff) return key;
  }
  return std::nullopt;
}

/// A key above every key below `first` that has `first`'s length or that
/// length plus the `pad`'s (`first` less one, then `pad`), and below `first`:
/// a range deletion from it removes what one from `first` would, from a key
/// out of the insert-hint domain (point keys only, storage/rocks.cpp: RocksDB
/// 7.8 shares a hint between a memtable's point and range-deletion lists).
std::optional<std::string> start_below(std::string first, std::string_view pad) {
  size_t i = first.size();
  while (i > 0 && first[i - 1] == '\0') first[--i] = '\xff';
  if (i == 0) return std::nullopt;  // nothing is below an all-zero key
  first[i - 1] = static_cast<char>(static_cast<uint8_t>(first[i - 1]) - 1);
  first.append(pad);
  return first;
}

/// Removes span `s` as a whole if the state holds exactly `s.runs` records in
/// it, every one finished; otherwise it stays (0). The state is the one this
/// command sees (the database under what earlier commands of its batch wrote),
/// so every member decides alike however its entries fall into batches. One
/// range deletion each for the records, their attempt histories and the
/// index entries of each finished state, instead of a read and two deletes a
/// run; the analyses (few) one by one.
caf::expected<uint64_t> remove_span(batch_ctx& ctx, const prune_span& s, removals& latest) {
  // From its first record, not its task's first key: what earlier spans
  // removed lies below, and an iterator steps over each record a range
  // deletion covers until compaction drops them.
  auto lo = keys::instance(s.task_id, s.from_slot, s.from_shard);
  auto hi = key_after(keys::instance(s.task_id, s.slot, s.shard));
  if (!hi || s.runs == 0 || !(lo < *hi)) return uint64_t{0};
  // Walked as the leader walked it: the records, not the state index, whose
  // entries moved at every transition (a tombstone each, until compaction).
  state_machine::state_counts stored{};  // records only the database holds, by state
  std::vector<std::pair<std::string, instance_state>> written;  // records this batch wrote
  std::vector<std::string> ids;  // every record's run id (analyses written in this batch)
  uint64_t total = 0;
  std::string tenant;
  unix_ms last_slot = std::numeric_limits<unix_ms>::min();
  auto take = [&](const instance& x) {
    ++total;
    last_slot = std::max(last_slot, x.slot);
    if (tenant != x.tenant) tenant = x.tenant;
    if (ctx.analyses_written()) ids.push_back(x.id);
    return is_terminal(x.state);
  };
  {
    rocksdb::Slice bound(*hi);
    rocksdb::ReadOptions ro;
    ro.iterate_upper_bound = &bound;
    auto& db = ctx.db();
    std::unique_ptr<rocksdb::Iterator> it(db.db()->NewIterator(ro, db.cf(column::instances)));
    for (it->Seek(lo); it->Valid(); it->Next()) {
      auto key = it->key().ToString();
      if (ctx.wrote_instance(key) || ctx.in_erased_span(key)) continue;  // as the batch has it
      auto x = decode<instance>(std::string_view(it->value().data(), it->value().size()));
      if (!x) return x.error();
      if (!take(*x)) return uint64_t{0};       // not finished (retried by hand since)
      if (total > s.runs) return uint64_t{0};  // runs came since the leader looked
      stored[static_cast<size_t>(x->state)] += 1;
    }
    if (!it->status().ok())
      return make_error(errc::storage_error, "instance scan failed: " + it->status().ToString());
  }
  bool unfinished = false;
  ctx.for_instances_written_in(lo, *hi,
                               [&](const std::string& key, const std::optional<instance>& x) {
                                 if (!x) return;  // erased by this batch
                                 if (!take(*x)) unfinished = true;
                                 written.emplace_back(key, x->state);
                               });
  if (unfinished || total != s.runs) return uint64_t{0};  // changed since the leader looked
  // Index entries are a state byte and a run key; attempt keys a run key and
  // four bytes, so theirs starts above every attempt of the run below.
  auto from = start_below(lo, std::string(1, '\0'));
  auto from_attempts = start_below(lo, std::string(5, '\xff'));
  if (!from || !from_attempts) return uint64_t{0};
  auto& batch = ctx.batch();
  auto& db = ctx.db();
  batch.DeleteRange(db.cf(column::instances), *from, *hi);
  batch.DeleteRange(db.cf(column::attempts), *from_attempts, *hi);
  for (size_t i = 0; i < stored.size(); ++i)
    if (stored[i] != 0)
      batch.DeleteRange(db.cf(column::instances_by_state),
                        keys::state_index(static_cast<uint8_t>(i), *from),
                        keys::state_index(static_cast<uint8_t>(i), *hi));
  for (auto& [key, state] : written) ctx.erase_instance(key, state);  // and its index entry
  if (ctx.analyses_written()) {
    // Some may be in this batch only, where a scan does not see them.
    for (auto& id : ids) batch.Delete(db.cf(column::ai_analysis), keys::analysis(tenant, id));
  } else {
    // Keyed by tenant and run id: this task's runs share "tenant/task-".
    auto prefix = keys::analysis(tenant, std::to_string(s.task_id) + "-");
    auto it = db.iterate(column::ai_analysis);
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      auto id = std::string_view(it->key().data(), it->key().size()).substr(tenant.size() + 1);
      auto run = keys::parse_instance_id(id);
      if (!run) continue;
      auto key = keys::instance(run->task_id, run->slot, run->shard);
      if (lo <= key && key < *hi) batch.Delete(db.cf(column::ai_analysis), it->key());
    }
    if (!it->status().ok())
      return make_error(errc::storage_error, "analysis scan failed: " + it->status().ToString());
  }
  ctx.erase_instance_span(lo, *hi, stored);
  auto& m = latest[s.task_id];
  m.slot = std::max(m.slot, last_slot);
  if (m.tenant != tenant) m.tenant = tenant;
  m.removed += total;
  return total;
}

/// Each task's count of runs goes down, and its mark moves, once per command.
caf::error settle_marks(batch_ctx& ctx, removals& latest) {
  for (auto& [task_id, m] : latest) {
    auto t = ctx.read_task(task_id);
    if (!t) return t.error();
    if (*t) {  // a deleted task keeps no count (nor runtime record) to lower
      auto rt = ctx.read_runtime(task_id);
      if (!rt) return rt.error();
      rt->runs -= std::min(rt->runs, m.removed);
      ctx.put_runtime(*rt);
    }
    auto raw = ctx.read_pruned_mark(task_id);
    if (!raw) return raw.error();
    if (*raw) {
      auto old = decode_mark(**raw);
      if (!old) return old.error();
      m.slot = std::max(m.slot, old->slot);
    }
    ctx.put_pruned_mark(task_id, encode_mark(m.slot, m.tenant));
  }
  return {};
}

}  // namespace

caf::expected<uint64_t> apply_prune(batch_ctx& ctx, const prune_runs& c) {
  removals latest;
  auto removed = remove_runs(ctx, c.instance_ids, latest);
  if (!removed) return removed;
  if (auto err = settle_marks(ctx, latest)) return err;
  ctx.effects().pruned += *removed;
  return removed;
}

caf::expected<uint64_t> apply_prune(batch_ctx& ctx, const prune_history& c) {
  removals latest;
  uint64_t removed = 0;
  for (auto& s : c.spans) {
    auto n = remove_span(ctx, s, latest);
    if (!n) return n;
    removed += *n;
  }
  auto n = remove_runs(ctx, c.instance_ids, latest);
  if (!n) return n;
  removed += *n;
  if (auto err = settle_marks(ctx, latest)) return err;
  ctx.effects().pruned += removed;
  return removed;
}

caf::expected<std::optional<caf::error>> gone_if_pruned(rocks& db, std::string_view tenant,
                                                        uint64_t task_id, unix_ms slot,
                                                        std::string_view instance_id) {
  auto raw = db.get(column::meta, keys::pruned_mark(task_id));
  if (!raw) return raw.error();
  if (!*raw) return std::optional<caf::error>{};
  auto m = decode_mark(**raw);
  if (!m) return m.error();
  // Another tenant's run is not found, as if it never was (its ids are guessable).
  if ((!tenant.empty() && tenant != m->tenant) || slot > m->slot)
    return std::optional<caf::error>{};
  return std::optional<caf::error>{make_error(
      errc::gone, "id",
      "instance " + std::string(instance_id) +
          " is gone: run-history retention removed it (see the task's 'retention')")};
}

}  // namespace aisched::storage
