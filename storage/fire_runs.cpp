// What a fire creates; see fire_runs.hpp.
#include "storage/fire_runs.hpp"

#include <algorithm>

#include "storage/batch_ctx.hpp"
#include "storage/keys.hpp"

namespace aisched::storage {

using namespace proto;

namespace {

/// About the runs `slots` create (one shard a task): a hint to reserve room.
size_t runs_hint(const std::vector<fire_slot>& slots) {
  size_t n = 0;
  for (auto& s : slots) n += runs_of(s, 1);
  return n;
}

}  // namespace

caf::error create_fired_runs(batch_ctx& ctx, unix_ms at, const std::vector<fire_slot>& slots,
                             const fire_placements& placed, std::vector<instance>& created) {
  created.reserve(created.size() + runs_hint(slots));
  for (auto& s : slots) {
    auto t = ctx.task_ref(s.task_id);
    if (!t) return t.error();
    if (!*t) continue;  // deleted after the leader decided to fire: nothing to run
    auto rt = ctx.read_runtime(s.task_id);
    if (!rt) return rt.error();
    const uint32_t shards = runs_of(s, (*t)->shards);
    // Every instance of a task is at or before its runtime's last_slot (set
    // below by each slot's first run): a later slot has none to look up.
    const bool later = s.slot > rt->last_slot;
    bool any = false;
    for (uint32_t shard = 0; shard < shards; ++shard) {
      auto key = keys::instance(s.task_id, s.slot, shard);
      if (!later) {
        auto existing = ctx.read_instance(key);
        if (!existing) return existing.error();
        if (*existing) continue;  // this slot already fired: a repeat is a no-op
      }
      instance x;
      x.id = make_instance_id(s.task_id, s.slot, shard);
      x.tenant = (*t)->tenant;
      x.task_id = s.task_id;
      x.slot = s.slot;
      x.shard = shard;
      x.shards = shards;
      x.created_at = at;
      x.trace_id = s.trace_id;
      x.event_name = s.event_name;
      x.event_payload = s.payloads.empty() ? s.event_payload : s.payloads[shard];
      x.idempotency_key = x.id;
      if (auto w = placed.empty() ? placed.end() : placed.find(x.id); w != placed.end())
        mark_dispatched(x, std::string(w->second), at, (*t)->timeout);
      ctx.put_instance(key, x, std::nullopt);
      if (shard == 0 && s.slot >= rt->last_slot) {
        rt->last_slot = s.slot;
        rt->last_instance_id = x.id;
        rt->last_state = x.state;
      }
      any = true;
      rt->runs += 1;
      created.push_back(std::move(x));
    }
    // What max_runs counts, from fire records: a repeated slot counts once.
    if (any && s.scheduled) rt->scheduled_fires += 1;
    ctx.put_runtime(*rt);
  }
  return {};
}

}  // namespace aisched::storage
