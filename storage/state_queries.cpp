// Reads of the applied state (state_machine's const functions): point reads,
// paged listings, the state index and the scans a new leader rebuilds from.
// Safe to call from any thread concurrently with apply().
#include <algorithm>
#include <limits>

#include <rocksdb/db.h>

#include "proto/hex.hpp"
#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "storage/attempt_history.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"
#include "storage/run_retention.hpp"
#include "storage/state_machine.hpp"

namespace aisched::storage {

using namespace proto;

namespace {

bool tenant_matches(std::string_view want, const std::string& have) {
  return want.empty() || want == have;
}

template <class T>
caf::expected<T> decode_slice(const rocksdb::Slice& s) {
  return decode<T>(std::string_view(s.data(), s.size()));
}

}  // namespace

caf::expected<task> state_machine::get_task(std::string_view tenant, uint64_t id) const {
  auto raw = db_.get(column::tasks, keys::task(id));
  if (!raw) return raw.error();
  if (*raw) {
    auto t = decode<task>(**raw);
    if (!t) return t.error();
    if (tenant_matches(tenant, t->tenant)) return t;
  }
  return make_error(errc::not_found, "id", "task " + std::to_string(id) + " does not exist");
}

caf::expected<task_page> state_machine::list_tasks(const task_query& q) const {
  task_page page;
  if (q.after_id == std::numeric_limits<uint64_t>::max()) return page;
  auto it = db_.iterate(column::tasks);
  auto limit = std::max<uint32_t>(1, std::min<uint32_t>(q.limit, 1000));
  // A filter that matches little must not turn one page into a scan of every
  // task: after this many non-matching tasks the page ends with a cursor.
  constexpr size_t max_skipped = 10'000;
  size_t skipped = 0;
  auto matches = [&](const task& t) {
    using pf = task_query::paused_filter;
    return tenant_matches(q.tenant, t.tenant) &&
           (q.name_contains.empty() || t.name.find(q.name_contains) != std::string::npos) &&
           labels_match(q.labels, t.labels) &&
           (q.paused == pf::any || t.paused == (q.paused == pf::paused));
  };
  for (it->Seek(keys::task(q.after_id + 1)); it->Valid(); it->Next()) {
    auto t = decode_slice<task>(it->value());
    if (!t) return t.error();
    if (!matches(*t)) {
      if (++skipped == max_skipped) {
        page.next_cursor = std::to_string(t->id);
        break;
      }
      continue;
    }
    if (page.items.size() == limit) {
      page.next_cursor = std::to_string(page.items.back().id);
      break;
    }
    page.items.push_back(std::move(*t));
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  return page;
}

caf::expected<instance> state_machine::get_instance(std::string_view tenant,
                                                    std::string_view id) const {
  auto ref = keys::parse_instance_id(id);
  if (!ref)
    return make_error(errc::invalid_argument, "id",
                      "malformed instance id '" + std::string(id) + "'");
  auto raw = db_.get(column::instances, keys::instance(ref->task_id, ref->slot, ref->shard));
  if (!raw) return raw.error();
  if (*raw) {
    auto x = decode<instance>(**raw);
    if (!x) return x.error();
    if (tenant_matches(tenant, x->tenant)) return x;
  } else {
    auto gone = gone_if_pruned(db_, tenant, ref->task_id, ref->slot, id);
    if (!gone) return gone.error();
    if (*gone) return std::move(**gone);
  }
  return make_error(errc::not_found, "id", "instance " + std::string(id) + " does not exist");
}

caf::expected<prune_page> state_machine::scan_prunable(const prune_query& q) const {
  return storage::scan_prunable(db_, q);
}

caf::expected<attempt_list> state_machine::list_attempts(std::string_view tenant,
                                                       std::string_view id) const {
  auto x = get_instance(tenant, id);
  if (!x) return x.error();
  return read_attempts(db_, keys::instance(x->task_id, x->slot, x->shard), *x);
}

caf::expected<instance_page> state_machine::list_instances(const instance_query& q) const {
  instance_page page;
  auto limit = std::max<uint32_t>(1, std::min<uint32_t>(q.limit, 1000));
  std::string cursor;
  if (!q.cursor.empty()) {
    auto c = proto::from_hex(q.cursor);
    if (!c) return make_error(errc::invalid_argument, "cursor", "malformed cursor");
    cursor = std::move(*c);
  }
  // A time range filter may skip many instances in a row: like task filters,
  // a page then comes back short with a cursor after at most this many skips.
  constexpr size_t max_skipped = 10'000;
  size_t skipped = 0;
  auto in_range = [&](unix_ms slot) {
    return (q.since == 0 || slot >= q.since) && (q.until == 0 || slot < q.until);
  };
  auto take = [&](const rocksdb::Slice& value, std::string key) -> caf::expected<bool> {
    auto x = decode_slice<instance>(value);
    if (!x) return x.error();
    if (!tenant_matches(q.tenant, x->tenant)) return true;
    if (!in_range(x->slot)) {
      if (++skipped < max_skipped) return true;
      page.next_cursor = proto::to_hex(key);
      return false;
    }
    if (page.items.size() == limit) return false;
    page.items.push_back(std::move(*x));
    page.next_cursor = proto::to_hex(key);
    return true;
  };
  bool more = false;
  if (q.by_state) {
    // Index scan in instance-key order, then a point read per hit.
    auto prefix = std::string(1, static_cast<char>(q.state));
    auto it = db_.iterate(column::instances_by_state);
    auto start = cursor.empty() ? prefix : keys::state_index(uint8_t(q.state), cursor);
    for (it->Seek(start); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      std::string ikey(it->key().data() + 1, it->key().size() - 1);
      if (!cursor.empty() && ikey == cursor) continue;
      if (q.task_id != 0 && keys::get_u64(ikey) != q.task_id) continue;
      auto raw = db_.get(column::instances, ikey);
      if (!raw) return raw.error();
      if (!*raw) continue;
      auto ok = take(rocksdb::Slice(**raw), ikey);
      if (!ok) return ok.error();
      if (!*ok) {
        more = true;
        break;
      }
    }
  } else if (q.task_id != 0) {
    // Newest slot first within the task's key prefix.
    auto prefix = keys::task(q.task_id);
    auto it = db_.iterate(column::instances);
    if (cursor.empty()) {
      it->SeekForPrev(keys::task(q.task_id + 1));
      if (it->Valid() && it->key().starts_with(keys::task(q.task_id + 1))) it->Prev();
    } else {
      it->SeekForPrev(cursor);
      if (it->Valid() && it->key() == rocksdb::Slice(cursor)) it->Prev();
    }
    for (; it->Valid() && it->key().starts_with(prefix); it->Prev()) {
      // Keys sort by slot: once a slot is before `since`, so are the rest.
      if (q.since != 0 && keys::get_i64(it->key().ToString(), 8) < q.since) break;
      auto ok = take(it->value(), it->key().ToString());
      if (!ok) return ok.error();
      if (!*ok) {
        more = true;
        break;
      }
    }
  } else {
    auto it = db_.iterate(column::instances);
    if (cursor.empty()) it->SeekToFirst();
    else {
      it->Seek(cursor);
      if (it->Valid() && it->key() == rocksdb::Slice(cursor)) it->Next();
    }
    for (; it->Valid(); it->Next()) {
      auto ok = take(it->value(), it->key().ToString());
      if (!ok) return ok.error();
      if (!*ok) {
        more = true;
        break;
      }
    }
  }
  if (!more) page.next_cursor.clear();
  return page;
}

caf::expected<schedule_page> state_machine::scan_schedules(const task_query& q) const {
  auto tasks = list_tasks(q);
  if (!tasks) return tasks.error();
  schedule_page page;
  page.next_cursor = tasks->next_cursor;
  for (auto& t : tasks->items) {
    auto rt = get_task_runtime(t.id);
    if (!rt) return rt.error();
    page.runtimes.push_back(std::move(*rt));
    page.tasks.push_back(std::move(t));
  }
  return page;
}

caf::expected<schedule_page> state_machine::scan_active(const instance_query& q) const {
  schedule_page page;
  auto limit = std::max<uint32_t>(1, std::min<uint32_t>(q.limit, 10'000));
  std::string cursor;
  if (!q.cursor.empty()) {
    auto c = proto::from_hex(q.cursor);
    if (!c) return make_error(errc::invalid_argument, "cursor", "malformed cursor");
    cursor = std::move(*c);
  }
  auto it = db_.iterate(column::instances_by_state);
  if (cursor.empty()) it->SeekToFirst();
  else {
    it->Seek(cursor);
    if (it->Valid() && it->key() == rocksdb::Slice(cursor)) it->Next();
  }
  while (it->Valid()) {
    auto state = static_cast<instance_state>(static_cast<uint8_t>(it->key()[0]));
    if (is_terminal(state)) {
      // Jump over the (large) terminal history to the next state's entries.
      it->Seek(std::string(1, static_cast<char>(static_cast<uint8_t>(state) + 1)));
      continue;
    }
    if (page.active.size() == limit) {
      page.next_cursor = proto::to_hex(cursor);
      break;
    }
    std::string ikey(it->key().data() + 1, it->key().size() - 1);
    auto raw = db_.get(column::instances, ikey);
    if (!raw) return raw.error();
    if (*raw) {
      auto x = decode<instance>(**raw);
      if (!x) return x.error();
      page.active.push_back(std::move(*x));
    }
    cursor = it->key().ToString();
    it->Next();
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  return page;
}

caf::expected<task_runtime> state_machine::get_task_runtime(uint64_t id) const {
  auto raw = db_.get(column::task_state, keys::task(id));
  if (!raw) return raw.error();
  if (!*raw) {
    task_runtime fresh;
    fresh.task_id = id;
    return fresh;
  }
  return decode<task_runtime>(**raw);
}

}  // namespace aisched::storage
