// Decisions of the trigger on what people ask for rather than what schedules
// bring: a manual trigger, an event, a bulk enqueue (each batch at an instant
// of its own, never an earlier batch's or a schedule's) and a backfill; see
// planner.hpp. The scheduled side is planner.cpp.
#include <algorithm>
#include <string>
#include <vector>

#include "actors/trigger/planner.hpp"
#include "proto/errors.hpp"
#include "proto/validate.hpp"

namespace aisched::trigger {

using namespace proto;

caf::expected<decisions> planner::trigger_now(const std::string& tenant, uint64_t id,
                                              unix_ms now) {
  auto i = tasks_.find(id);
  if (i == tasks_.end() || (!tenant.empty() && i->second.def.tenant != tenant))
    return make_error(errc::not_found, "id", "task " + std::to_string(id) + " does not exist");
  auto& e = i->second;
  // Bulk enqueues may hold this instant and the next ones (enqueue_slot): a
  // trigger then takes the next free one after them, as a batch would.
  if (now <= e.last_enqueued) now = e.last_enqueued = enqueue_slot(e, now);
  if (e.proposed.count(now))
    return make_error(errc::already_exists, "id", "a run for this instant is already starting");
  decisions out;
  auto before = stats_;
  decide(e, now, out, false);
  if (out.fires.empty()) {
    if (stats_.blocked != before.blocked) {
      out.waiting_for = pending_upstreams(e);
      return out;
    }
    return make_error(errc::already_exists, "overlap",
                      "held back by overlap policy '" + std::string(name_of(e.def.overlap)) +
                          "' while a previous run is active");
  }
  return out;
}

decisions planner::fire_event(const std::string& tenant, const std::string& name,
                              const std::string& payload, unix_ms now) {
  decisions out;
  for (auto& [id, e] : tasks_) {
    if (e.def.event() != name || e.def.paused) continue;
    if (!tenant.empty() && e.def.tenant != tenant) continue;
    auto at = now;
    if (at <= e.last_enqueued) at = e.last_enqueued = enqueue_slot(e, at);  // see trigger_now
    if (e.proposed.count(at)) continue;  // this instant already fired for it
    decide(e, at, out, true, name, payload);
  }
  return out;
}

caf::expected<decisions> planner::enqueue(const std::string& tenant, uint64_t id,
                                          std::vector<std::string> payloads, unix_ms now) {
  auto i = tasks_.find(id);
  if (i == tasks_.end() || (!tenant.empty() && i->second.def.tenant != tenant))
    return make_error(errc::not_found, "id", "task " + std::to_string(id) + " does not exist");
  auto& e = i->second;
  auto refuse = [](std::string why) {
    return make_error(errc::invalid_argument, "id", "a bulk enqueue runs one run per payload: " +
                                                        std::move(why));
  };
  if (e.def.shards > 1) return refuse("not for a task with shards (trigger it instead)");
  if (e.def.route == route_strategy::broadcast) return refuse("not for a broadcast task");
  if (!e.def.depends_on().empty()) return refuse("not for a task with depends_on");
  if (payloads.empty())
    return make_error(errc::invalid_argument, "payloads", "payloads: at least one is needed");
  if (payloads.size() > proto::max_bulk_runs)
    return make_error(errc::invalid_argument, "payloads",
                      "payloads: at most " + std::to_string(proto::max_bulk_runs) +
                          " runs per request, got " + std::to_string(payloads.size()));
  if (e.def.overlap != overlap_policy::allow && e.def.overlap != overlap_policy::replace &&
      busy(e))
    return make_error(errc::already_exists, "overlap",
                      "held back by overlap policy '" + std::string(name_of(e.def.overlap)) +
                          "' while a previous run is active");
  decisions out;
  if (e.def.overlap == overlap_policy::replace)
    for (auto& active : e.active) {
      out.cancels.push_back(active);
      stats_.replaced += 1;
    }
  auto slot = enqueue_slot(e, now);
  e.last_enqueued = slot;
  fire_now(e, slot, out, false);
  out.fires.back().payloads = std::move(payloads);
  return out;
}

unix_ms planner::enqueue_slot(const entry& e, unix_ms now) const {
  // Run ids are {task}-{slot}-{k} and storage makes a fired slot's repeat a
  // no-op, so a batch must not take a slot another fire holds: one in flight,
  // the last committed, or one of the schedule's own instants (kept for it).
  auto taken = [&](unix_ms s) {
    if (e.proposed.count(s) || s == e.last_slot || s == e.next_slot) return true;
    auto on_schedule = e.sched.next_after(s - 1);  // nullopt for a manual task
    return on_schedule && *on_schedule == s;
  };
  // After every committed slot too: a new leader whose clock is behind the old
  // one's must not pick an older batch's slot (storage would skip it silently).
  auto slot = std::max({now, e.last_enqueued + 1, e.last_slot + 1});
  while (taken(slot)) ++slot;
  return slot;
}

caf::expected<decisions> planner::backfill(const std::string& tenant, uint64_t id, unix_ms from,
                                           unix_ms to) {
  auto i = tasks_.find(id);
  if (i == tasks_.end() || (!tenant.empty() && i->second.def.tenant != tenant))
    return make_error(errc::not_found, "id", "task " + std::to_string(id) + " does not exist");
  auto& e = i->second;
  if (e.sched.is_manual())
    return make_error(errc::invalid_argument, "schedule", "the task has no schedule to backfill");
  std::vector<unix_ms> slots;
  for (auto s = e.excluded.next_after(e.sched, from - 1); s && *s <= to;
       s = e.excluded.next_after(e.sched, *s)) {
    if (slots.size() == max_backfill)
      return make_error(errc::invalid_argument, "to",
                        "the range holds more than " + std::to_string(max_backfill) + " slots");
    slots.push_back(*s);
  }
  decisions out;
  for (auto s : slots)
    if (!e.proposed.count(s)) decide(e, s, out, false);
  return out;
}

}  // namespace aisched::trigger
