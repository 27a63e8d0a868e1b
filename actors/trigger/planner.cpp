// Decisions of the trigger; see planner.hpp.
#include "actors/trigger/planner.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <tuple>

#include "proto/errors.hpp"
#include "proto/random.hpp"

namespace aisched::trigger {

using namespace proto;

namespace {

// Bound on the slots a catch-up walks through (an `@every 100ms` task down for a
// day has 864 000); beyond it, older slots are counted as missed in one step.
constexpr size_t max_catch_up_walk = 100'000;

bool is_active(instance_state s) { return !is_terminal(s); }

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

}  // namespace

planner::planner(unix_ms now, duration_ms fire_ahead)
    : fire_ahead_(std::max<duration_ms>(0, fire_ahead)),
      timers_(now),
      ahead_(now),
      began_(now),
      clock_(now) {}

unix_ms planner::jittered(uint64_t id, duration_ms jitter, unix_ms slot) {
  if (jitter <= 0) return slot;
  auto h = mix(id * 0x9e3779b97f4a7c15ULL ^ static_cast<uint64_t>(slot));
  return slot + static_cast<unix_ms>(h % static_cast<uint64_t>(jitter + 1));
}

planner::terms planner::terms::of(const task& t) {
  terms x;
  x.id = t.id;
  x.tenant = t.tenant;
  if (!t.event.empty() || !t.exclude_calendar.empty() || !t.depends_on.empty())
    x.rare_ = std::make_unique<rare>(rare{t.event, t.exclude_calendar,
                                          t.exclude_calendar.empty() ? "" : t.timezone,
                                          t.depends_on, std::max(t.created_at, t.updated_at)});
  x.start_at = t.start_at;
  x.end_at = t.end_at;
  x.jitter = t.jitter;
  x.catchup_window = t.catchup_window;
  x.max_runs = t.max_runs;
  x.shards = t.shards;
  x.misfire_limit = t.misfire_limit;
  x.overlap = t.overlap;
  x.misfire = t.misfire;
  x.route = t.route;
  x.paused = t.paused;
  return x;
}

void planner::upsert(const task& t, const task_runtime& rt, unix_ms now, bool catch_up) {
  auto& e = tasks_[t.id];
  for (auto up : e.def.depends_on()) dependents_[up].erase(t.id);
  for (auto up : t.depends_on) {
    dependents_[up].insert(t.id);
    // An upstream gaining a dependent no longer fires ahead (lead_of).
    if (auto u = tasks_.find(up); u != tasks_.end() && u->second.next_slot != 0)
      arm(up, fires_at(u->second.def, u->second.next_slot), lead_of(u->second.def) > 0);
  }
  const bool resumed = e.def.paused && !t.paused;
  e.def = terms::of(t);
  e.excluded = exclusion_of(e.def);
  e.fires_committed = std::max(e.fires_committed, rt.scheduled_fires);
  e.last_slot = std::max(e.last_slot, rt.last_slot);
  // The slots an overlap buffer kept through the pause go on, oldest first,
  // as when the run they waited for ends (no run of it is active now).
  if (resumed && !busy(e)) release(e);
  if (rt.last_instance_id.size() > 0) e.last_state = rt.last_state;
  if (!t.schedule.empty()) {
    auto s = schedule::parse(t.schedule, t.timezone);
    e.sched = s ? *s : schedule::manual();  // validated at create; a bad one never fires
  } else if (t.at != 0) {
    e.sched = schedule::one_shot(t.at);
  } else {
    e.sched = schedule::manual();
  }
  disarm(t.id);
  e.next_slot = 0;
  if (t.paused || e.sched.is_manual()) return;
  // A catch-up starts after the task's latest change committed before this
  // planner began (create, update, pause, resume): the leader that committed it
  // armed the task after that instant (upsert without catch_up), and a paused
  // task's slots were never due, so those slots are neither missed nor fired now.
  // A change committed since belongs to this leader, whose rebuild is the catch-up.
  const unix_ms changed = std::max(t.created_at, t.updated_at < began_ ? t.updated_at : 0);
  unix_ms after = catch_up ? std::max(e.last_slot, changed) : std::max(now, e.last_slot);
  if (t.start_at != 0) after = std::max(after, t.start_at - 1);
  // A one-shot whose instant passed before the task reached the trigger (its
  // create committed late, e.g. forwarded across a failover or sent to a member
  // that stalled) missed its only slot; the misfire policy decides, as for slots
  // missed while nobody led. Without this it would never fire, acknowledged or not.
  if (auto at = e.sched.at(); at && *at > e.last_slot && *at <= after) {
    after = *at - 1;
    catch_up = true;
  }
  if (catch_up) {
    auto until = due_until(e, after, now);
    this->catch_up(e, after, until, now);
    after = std::max(after, until);
  }
  arm_after(e, after);
}

uint64_t planner::release_held(unix_ms now) {
  uint64_t held = 0;
  for (auto& [id, e] : tasks_) {
    if (e.next_slot == 0 || e.next_slot > now || e.def.paused) continue;
    disarm(id);
    auto first = e.next_slot;
    auto until = due_until(e, first - 1, now);
    held += catch_up(e, first - 1, until, now);
    arm_after(e, std::max(first - 1, until));
  }
  return held;
}

unix_ms planner::due_until(const entry& e, unix_ms after, unix_ms now) const {
  if (e.def.jitter <= 0) return now;
  // Only a slot within `jitter` of now can still be ahead of its jittered instant.
  size_t walked = 0;
  for (auto s = e.excluded.next_after(e.sched, std::max(after, now - e.def.jitter - 1));
       s && *s <= now && walked++ < max_catch_up_walk; s = e.excluded.next_after(e.sched, *s))
    if (jittered(e.def, *s) > now) return *s - 1;
  return now;
}

uint64_t planner::catch_up(entry& e, unix_ms after, unix_ms until, unix_ms now) {
  const auto& t = e.def;
  size_t keep_max = 0;
  switch (t.misfire) {
    case misfire_policy::skip: keep_max = 0; break;
    case misfire_policy::fire_once: keep_max = 1; break;
    case misfire_policy::fire_all: keep_max = t.misfire_limit; break;
  }
  unix_ms last = until;
  if (t.end_at != 0) last = std::min(last, t.end_at);
  // Slots older than the catch-up window are missed whatever the policy.
  unix_ms eligible_from = t.catchup_window > 0 ? now - t.catchup_window : after + 1;
  std::deque<unix_ms> newest;  // the newest eligible missed slots, at most keep_max
  uint64_t total = 0;
  if (auto every = e.sched.interval(); every > 0 && e.excluded.empty()) {
    // Fixed rate: count and pick the newest slots arithmetically (an outage of a
    // day at 100 ms is 864 000 slots; no need to walk them).
    auto floor_div = [](unix_ms a, unix_ms b) { return a / b - ((a % b != 0) && (a < 0)); };
    auto hi = floor_div(last, every), lo = floor_div(after, every);
    total = hi > lo ? static_cast<uint64_t>(hi - lo) : 0;
    for (int64_t k = hi; k > lo && newest.size() < keep_max; --k) {
      auto s = k * every;
      if (s < eligible_from) break;
      newest.push_front(s);
    }
  } else {
    // Calendar schedules (and any with excluded dates, which were never due):
    // walk, keeping only the newest slots (bounded walk).
    auto s = e.excluded.next_after(e.sched, std::max(after, eligible_from - 1));
    total = 0;
    // Slots before the window are counted coarsely by one walk step (they are missed).
    if (eligible_from > after + 1) {
      auto first = e.excluded.next_after(e.sched, after);
      if (first && *first < eligible_from) total += 1;
    }
    size_t walked = 0;
    while (s && *s <= last && walked++ < max_catch_up_walk) {
      ++total;
      newest.push_back(*s);
      if (newest.size() > keep_max) newest.pop_front();
      s = e.excluded.next_after(e.sched, *s);
    }
  }
  stats_.missed += total - std::min<uint64_t>(total, newest.size());
  for (auto s : newest) ready_.push_back({t.id, s, false});
  return total;
}

void planner::arm_after(entry& e, unix_ms after) {
  if (exhausted(e)) {  // max_runs: the schedule has ended
    e.next_slot = 0;
    return;
  }
  auto s = e.excluded.next_after(e.sched, after);
  if (!s || (e.def.end_at != 0 && *s > e.def.end_at)) {
    e.next_slot = 0;
    return;
  }
  e.next_slot = *s;
  arm(e.def.id, fires_at(e.def, *s), lead_of(e.def) > 0);
}

void planner::rearm(entry& e, unix_ms now) {
  disarm(e.def.id);
  e.next_slot = 0;
  if (e.def.paused || e.sched.is_manual()) return;
  unix_ms after = std::max(now, e.last_slot);
  if (e.def.start_at != 0) after = std::max(after, e.def.start_at - 1);
  arm_after(e, after);
}

exclusion planner::exclusion_of(const terms& t) const {
  if (t.exclude_calendar().empty()) return {};
  auto i = calendars_.find({t.tenant, t.exclude_calendar()});
  // Unknown here (the store refuses such a task; a new leader loads calendars first).
  return i == calendars_.end() ? exclusion{} : exclusion{i->second, t.timezone()};
}

void planner::put_calendar(const calendar& c, unix_ms now) {
  calendars_[{c.tenant, c.name}] = c;
  for (auto& [id, e] : tasks_) {
    if (e.def.tenant != c.tenant || e.def.exclude_calendar() != c.name) continue;
    e.excluded = exclusion_of(e.def);
    rearm(e, now);
  }
}

void planner::remove_calendar(const std::string& tenant, const std::string& name, unix_ms now) {
  calendars_.erase({tenant, name});
  for (auto& [id, e] : tasks_) {
    if (e.def.tenant != tenant || e.def.exclude_calendar() != name) continue;
    e.excluded = {};
    rearm(e, now);
  }
}

void planner::requeue(const fire_slot& s) {
  if (auto i = tasks_.find(s.task_id); i != tasks_.end() && s.scheduled)
    i->second.fires_proposed.erase(s.slot);
  ready_.push_back({s.task_id, s.slot, false});
}

uint64_t planner::scheduled_fires(uint64_t id) const {
  auto i = tasks_.find(id);
  return i == tasks_.end() ? 0 : i->second.fires_committed + i->second.fires_proposed.size();
}

void planner::remove(uint64_t id) {
  disarm(id);
  if (auto i = tasks_.find(id); i != tasks_.end())
    for (auto up : i->second.def.depends_on()) dependents_[up].erase(id);
  tasks_.erase(id);
}

void planner::observe(const instance& x) {
  auto i = tasks_.find(x.task_id);
  if (i == tasks_.end()) return;
  auto& e = i->second;
  bool was_busy = busy(e);
  if (is_active(x.state)) e.active.insert(x.id);
  else e.active.erase(x.id);
  e.proposed.erase(x.slot);
  // The task's latest run turns success now (not a repeat of a success seen).
  bool succeeded = x.state == instance_state::success && x.shard == 0 &&
                   x.slot >= e.last_slot &&
                   !(x.slot == e.last_slot && e.last_state == instance_state::success);
  if (x.shard == 0 && x.slot >= e.last_slot) {
    e.last_slot = x.slot;
    e.last_state = x.state;
  }
  if (was_busy && !busy(e)) release(e);
  // A success may unblock downstream tasks waiting on this one, and fires the
  // ones that chain (collect() checks their other upstreams).
  if (x.state == instance_state::success) {
    auto deps = dependents_.find(x.task_id);
    if (deps == dependents_.end()) return;
    for (auto id : deps->second) {
      auto di = tasks_.find(id);
      if (di == tasks_.end()) continue;
      auto& d = di->second;
      if (!d.blocked) {
        if (succeeded && chains(d)) chained_.insert(id);
        continue;
      }
      if (upstreams_ok(d)) {
        ready_.push_back({id, *d.blocked, false});
        d.blocked.reset();
      }
    }
  }
}

void planner::resume_chains() {
  for (auto& [id, e] : tasks_)
    if (chains(e) && chain_due(e, true)) chained_.insert(id);
}

std::vector<uint64_t> planner::dependents_of(uint64_t id) const {
  auto i = dependents_.find(id);
  if (i == dependents_.end()) return {};
  return {i->second.begin(), i->second.end()};
}

unix_ms planner::newest_upstream_slot(const entry& e) const {
  unix_ms newest = 0;
  for (auto up : e.def.depends_on())
    if (auto i = tasks_.find(up); i != tasks_.end()) newest = std::max(newest, i->second.last_slot);
  return newest;
}

bool planner::chain_due(const entry& e, bool recovering) const {
  if (e.def.paused || !e.proposed.empty() || e.blocked || !upstreams_ok(e)) return false;
  if (!recovering) return true;
  auto newest = newest_upstream_slot(e);
  return newest > e.last_slot && newest > e.def.changed_at();
}

void planner::release(entry& e) {
  if (e.buffered.empty()) return;
  ready_.push_back({e.def.id, e.buffered.front(), true});
  e.buffered.erase(e.buffered.begin());
}

std::vector<uint64_t> planner::pending_upstreams(const entry& e) const {
  std::vector<uint64_t> out;
  for (auto up : e.def.depends_on()) {
    auto i = tasks_.find(up);
    if (i == tasks_.end()) {  // an unknown upstream never succeeded
      out.push_back(up);
      continue;
    }
    const auto& u = i->second;
    // The upstream's latest slot must have succeeded, and no newer slot of it may
    // be on its way (proposed but not yet committed).
    bool ok = u.last_slot != 0 && u.last_state == instance_state::success && u.proposed.empty();
    // An upstream whose newer slot waits (for its own upstreams or in an overlap
    // buffer) has not finished its latest slot either.
    ok = ok && !u.blocked && u.buffered.empty();
    if (!ok) out.push_back(up);
  }
  return out;
}

decisions planner::collect(unix_ms now) {
  decisions out;
  clock_ = std::max(clock_, now);
  // Slots already decided to be ready (catch-up, buffered, unblocked) go first:
  // they are older than anything due now.
  auto ready = std::move(ready_);
  ready_.clear();
  std::vector<std::pair<uint64_t, unix_ms>> with_deps;
  for (auto& r : ready) {
    auto i = tasks_.find(r.task);
    if (i == tasks_.end()) continue;
    if (i->second.def.paused) {
      // A paused task fires nothing; its overlap buffer keeps the slot whose
      // turn came (its run ended) for the resume, at the head.
      auto& b = i->second.buffered;
      if (r.released) b.insert(b.begin(), r.slot);
      continue;
    }
    if (r.released) decide_released(i->second, r.slot, out);
    else if (!i->second.def.depends_on().empty()) with_deps.emplace_back(r.task, r.slot);
    else decide(i->second, r.slot, out, true);
  }
  due_buf_.clear();
  timers_.advance(now, due_buf_);
  if (!ahead_.empty()) {
    // A burst's slots fire earlier than the lead alone (burst_lead()).
    auto lead = burst_lead();
    size_t at_instant = due_buf_.size();
    ahead_.advance(now + lead, due_buf_);
    burst_fired(at_instant);
    if (at_instant != 0 && at_instant != due_buf_.size())
      std::sort(due_buf_.begin(), due_buf_.end(), [](auto& a, auto& b) {
        return std::tie(a.second, a.first) < std::tie(b.second, b.first);
      });
  }
  for (auto& [id, due] : due_buf_) {
    auto i = tasks_.find(id);
    if (i == tasks_.end()) continue;
    auto& e = i->second;
    auto slot = e.next_slot;
    if (now < slot && e.def.overlap != overlap_policy::allow && busy(e)) {
      // Ahead of the instant with a run still active: the policy decides at
      // the instant, when that run may have ended.
      arm(id, slot, false);
      continue;
    }
    arm_after(e, slot);
    if (e.def.depends_on().empty()) decide(e, slot, out, true);
    else with_deps.emplace_back(id, slot);
  }
  // Downstream tasks decide after their upstreams (by DAG depth), so an upstream
  // slot fired in this batch holds back the downstream slot until it succeeds.
  std::stable_sort(with_deps.begin(), with_deps.end(),
                   [&](auto& a, auto& b) { return depth(a.first) < depth(b.first); });
  for (auto& [id, slot] : with_deps) {
    auto i = tasks_.find(id);
    if (i != tasks_.end()) decide(i->second, slot, out, true);
  }
  // Chaining tasks whose upstream just succeeded, as a manual run at `now`
  // (later than the upstream's slot and its own last one, so the run id is new).
  auto chained = std::move(chained_);
  chained_.clear();
  for (auto id : chained) {
    auto i = tasks_.find(id);
    if (i == tasks_.end() || !chain_due(i->second, false)) continue;
    auto& d = i->second;
    decide(d, std::max({now, d.last_slot + 1, newest_upstream_slot(d) + 1}), out, false);
  }
  return out;
}

size_t planner::depth(uint64_t id, size_t guard) const {
  auto i = tasks_.find(id);
  if (i == tasks_.end() || guard > tasks_.size()) return 0;  // guard: cycles are rejected upstream
  size_t d = 0;
  for (auto up : i->second.def.depends_on()) d = std::max(d, 1 + depth(up, guard + 1));
  return d;
}

void planner::decide_released(entry& e, unix_ms slot, decisions& out) {
  // Its turn came when the previous run ended; if another run started since,
  // it goes back to the head of the buffer.
  if (busy(e)) {
    e.buffered.insert(e.buffered.begin(), slot);
    return;
  }
  fire_now(e, slot, out, true);
}

void planner::decide(entry& e, unix_ms slot, decisions& out, bool scheduled,
                     const std::string& event, const std::string& payload) {
  // The schedule ended (max_runs) or the slot falls on an excluded date (a
  // catch-up or an event): nothing fires. Manual runs are the operator's call.
  if (scheduled && (exhausted(e) || e.excluded.excludes(slot))) {
    stats_.skipped += 1;
    return;
  }
  if (!e.def.depends_on().empty() && !upstreams_ok(e)) {
    if (e.blocked) stats_.skipped += 1;  // a newer slot supersedes the waiting one
    e.blocked = slot;
    stats_.blocked += 1;
    return;
  }
  bool busy = planner::busy(e);
  switch (e.def.overlap) {
    case overlap_policy::allow:
      return fire_now(e, slot, out, scheduled, event, payload);
    case overlap_policy::skip:
      if (busy) {
        stats_.skipped += 1;
        return;
      }
      return fire_now(e, slot, out, scheduled, event, payload);
    case overlap_policy::buffer_one:
      if (busy) {
        if (e.buffered.empty()) {
          e.buffered.push_back(slot);
          stats_.buffered += 1;
        } else {
          stats_.skipped += 1;
        }
        return;
      }
      return fire_now(e, slot, out, scheduled, event, payload);
    case overlap_policy::buffer_all:
      if (busy || !e.buffered.empty()) {
        if (e.buffered.size() < max_buffered) {
          e.buffered.push_back(slot);
          stats_.buffered += 1;
        } else {
          stats_.skipped += 1;
        }
        if (!busy) release(e);  // the oldest waiting slot goes first
        return;
      }
      return fire_now(e, slot, out, scheduled, event, payload);
    case overlap_policy::replace:
      for (auto& id : e.active) {
        out.cancels.push_back(id);
        stats_.replaced += 1;
      }
      return fire_now(e, slot, out, scheduled, event, payload);
  }
}

void planner::fire_now(entry& e, unix_ms slot, decisions& out, bool scheduled,
                       const std::string& event, const std::string& payload) {
  fire_slot f;
  f.task_id = e.def.id;
  f.slot = slot;
  f.scheduled = scheduled;
  if (scheduled && e.def.max_runs != 0) {
    e.fires_proposed.insert(slot);
    if (exhausted(e)) {  // that was the last one: nothing more to arm
      disarm(e.def.id);
      e.next_slot = 0;
    }
  }
  f.event_name = event;
  f.event_payload = payload;
  f.trace_id = new_trace_id();  // random: unique across nodes and restarts, never guessable
  // A broadcast slot's fanout stays 0: the router decides it as it proposes
  // the fire, by the workers online then (router::broadcast_fanout).
  // Counts as running from now on, so a slot due before the commit arrives sees it.
  e.proposed.insert(slot);
  stats_.fired += 1;
  out.fires.push_back(std::move(f));
}

void planner::settle(const fire_slot& s) {
  auto i = tasks_.find(s.task_id);
  if (i == tasks_.end()) return;
  bool was_busy = busy(i->second);
  i->second.proposed.erase(s.slot);
  if (was_busy && !busy(i->second)) release(i->second);
}

std::optional<unix_ms> planner::next_due() const {
  if (!ready_.empty() || !chained_.empty()) return std::numeric_limits<unix_ms>::min();
  auto due = timers_.next_due();
  if (auto a = ahead_.next_due()) {
    auto at = *a - burst_lead();
    if (!due || at < *due) due = at;
  }
  return due;
}

std::optional<unix_ms> planner::due_of(uint64_t id) const {
  if (auto d = timers_.due_of(id)) return d;
  return ahead_.due_of(id);
}

void planner::arm(uint64_t id, unix_ms due, bool ahead) {
  forget_burst(id);
  if (!ahead) {
    ahead_.cancel(id);
    timers_.arm(id, due);
    return;
  }
  timers_.cancel(id);
  ahead_.arm(id, due);
  if (!burst_.valid) return;
  if (due < burst_.first)
    burst_.valid = false;  // a new earliest: count again
  else if (due <= burst_.first + burst_window)
    ++burst_.count;
}

void planner::disarm(uint64_t id) {
  timers_.cancel(id);
  forget_burst(id);
  ahead_.cancel(id);
}

void planner::forget_burst(uint64_t id) {
  if (!burst_.valid) return;
  auto due = ahead_.due_of(id);
  if (!due || *due > burst_.first + burst_window) return;
  if (*due == burst_.first)
    burst_.valid = false;  // the earliest may have left
  else
    --burst_.count;
}

void planner::burst_fired(size_t from) {
  if (!burst_.valid) return;
  auto next = ahead_.next_due();
  // Counted again every burst_recount at most: what enters the window as it
  // moves on waits until then (a stream of slots due every millisecond would
  // otherwise be counted anew on every wake-up).
  if (!next || *next > burst_.first + burst_window || clock_ - burst_.counted_at >= burst_recount) {
    burst_.valid = false;
    return;
  }
  for (size_t i = from; i < due_buf_.size(); ++i)
    if (due_buf_[i].second <= burst_.first + burst_window && burst_.count > 0) --burst_.count;
}

duration_ms planner::burst_lead() const {
  if (!burst_.valid) {
    auto a = ahead_.next_due();
    if (!a) return 0;
    burst_ = {true, *a, ahead_.count_due_by(*a + burst_window, max_burst_slots), clock_};
  }
  auto slots = static_cast<duration_ms>(std::min(burst_.count, max_burst_slots));
  return slots * max_burst_lead / static_cast<duration_ms>(max_burst_slots);
}

}  // namespace aisched::trigger
