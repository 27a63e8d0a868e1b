// The scheduler simulation's checkers of when tasks fire and their runs
// start: check_slots (tasks with a schedule) and check_chains (tasks that fire
// on their upstream's success); see scheduler_sim_checks.hpp. Slots, jittered
// instants and what fires after what are the trigger's own pure code
// (actors/trigger/schedule.hpp, planner.hpp), not computed again here.
#include "tests/sim/scheduler_sim_checks.hpp"

#include <algorithm>
#include <utility>

#include <caf/error.hpp>

#include "actors/trigger/planner.hpp"
#include "actors/trigger/schedule.hpp"
#include "proto/time.hpp"

namespace aisched::sim {

using proto::instance_state;
using proto::overlap_policy;

namespace {

/// When one run may start and how it may end (check_run).
struct run_rules {
  std::string where;            // the run in a violation: "task X slot T: "
  unix_ms not_before = 0;       // it starts never before this...
  std::string not_before_what;  // ...named so: "its slot", "its jittered instant T"
  unix_ms due = 0;              // ...and at most eps after this (forever: no bound)...
  std::string due_what;
  bool timely = true;       // ...when this holds and no fault window is near
  /// A fault window any time from `due` to its start excuses it too, not only
  /// one near `due` (overlap tasks: check_slots' known gap).
  bool late_until_start = false;
  bool may_cancel = false;  // it may end cancelled
};

/// The checks of one run `v` of task `t`.
void check_run(const sim_task& t, const run_view& v, const run_rules& r,
               const std::vector<fault_window>& faults, const slot_bounds& b,
               std::vector<std::string>& out) {
  bool cancelled = r.may_cancel && v.last.state == instance_state::cancelled;
  if (v.first_start == 0) {
    if (!cancelled) out.push_back(r.where + "its run never started: " + describe(v.last));
  } else if (v.first_start < r.not_before) {
    out.push_back(r.where + "started " + format_duration(r.not_before - v.first_start) +
                  " before " + r.not_before_what + ": " + describe(v.last));
  } else if (r.timely && r.due != forever && v.first_start > r.due + b.eps &&
             !fault_near(faults, b.heal, r.due,
                         r.late_until_start ? v.first_start : r.due + b.eps)) {
    out.push_back(r.where + "started " + format_duration(v.first_start - r.due) + " after " +
                  r.due_what + " (eps " + format_duration(b.eps) +
                  ", no fault window): " + describe(v.last));
  }
  if (!ended_allowed(v.last, t.max_attempts, r.may_cancel))
    out.push_back(r.where + "did not end success (max_attempts " + std::to_string(t.max_attempts) +
                  "): " + describe(v.last));
  if (v.finals > 1)
    out.push_back(r.where + "its run reached a final state " + std::to_string(v.finals) +
                  " times: " + describe(v.last));
}

/// Where slot `s` of `t` stands against the task's pauses (check_slots' rule).
enum class paused_status { no, edge, yes };

paused_status paused_status_of(const sim_task& t, unix_ms s, duration_ms m) {
  auto status = paused_status::no;
  for (auto& p : t.paused) {
    unix_ms paused_until = p.paused != 0 ? p.paused + m : forever;  // the pause's edge ends
    unix_ms resume_from = p.resume != 0 ? p.resume - m : forever;   // the resume's edge begins
    unix_ms resume_until = p.to != 0 ? p.to + m : forever;
    if ((p.from - m <= s && s <= paused_until) || (resume_from <= s && s <= resume_until))
      return paused_status::edge;
    if (paused_until < s && s < resume_from) status = paused_status::yes;
  }
  return status;
}

/// The schedule `t` fires by, read as the trigger reads a task's (planner
/// upsert): its cron in its zone, its `@every` (the expression the workload
/// gives it: sim_workload.cpp), or its one-shot instant.
caf::expected<trigger::schedule> schedule_of(const sim_task& t) {
  if (!t.cron.empty()) return trigger::schedule::parse(t.cron, t.timezone);
  if (t.every > 0) return trigger::schedule::parse("@every " + format_duration(t.every), "UTC");
  return trigger::schedule::one_shot(t.at);
}

/// The instant slot `slot` of `t` fires: the trigger's own function of the
/// task's id, its jitter and the slot.
unix_ms jittered(const sim_task& t, unix_ms slot) {
  proto::task def;
  def.id = t.id;
  def.jitter = t.jitter;
  return trigger::planner::jittered(def, slot);
}

using runs_by_slot = std::map<unix_ms, std::vector<const run_view*>>;

/// The runs of the slots before `slot`.
std::vector<const run_view*> runs_before(const runs_by_slot& by_slot, unix_ms slot) {
  std::vector<const run_view*> out;
  for (auto it = by_slot.begin(); it != by_slot.end() && it->first < slot; ++it)
    out.insert(out.end(), it->second.begin(), it->second.end());
  return out;
}

/// Whether the overlap policy of `t` let a slot the trigger decided at
/// `decided` or later go without a run (check_slots' rule), `earlier` being
/// the runs of its earlier slots.
bool dropped_by_overlap(const sim_task& t, const std::vector<const run_view*>& earlier,
                        unix_ms decided) {
  size_t active = 0;    // active at `decided` or later: final then or later, or never
  bool waited = false;  // one of them created then or later: it waited in the buffer
  for (auto* v : earlier) {
    if (v->final_index != 0 && v->finalized < decided) continue;
    ++active;
    waited = waited || v->created >= decided;
  }
  if (t.overlap == overlap_policy::skip) return active >= 1;
  if (t.overlap == overlap_policy::buffer_one) return active >= 2 && waited;
  return false;
}

/// The latest commit that ended one of `earlier` (forever: one never ended;
/// 0: none).
unix_ms latest_end(const std::vector<const run_view*>& earlier) {
  unix_ms end = 0;
  for (auto* v : earlier) end = std::max(end, v->final_index == 0 ? forever : v->finalized);
  return end;
}

}  // namespace

std::vector<std::string> check_slots(const std::vector<sim_task>& tasks,
                                     const std::vector<fault_window>& faults,
                                     const std::map<std::string, run_view>& runs,
                                     const slot_bounds& b) {
  std::vector<std::string> out;
  for (auto& t : tasks) {
    if (!t.scheduled()) continue;  // a queue (check_total_queue) or chained (check_chains)
    auto sched = schedule_of(t);
    if (!sched) {
      out.push_back("task " + t.name + ": its schedule cannot be read: " +
                    caf::to_string(sched.error()));
      continue;
    }
    auto is_slot = [&](unix_ms s) {
      auto n = sched->next_after(s - 1);
      return n && *n == s && (t.end_at == 0 || s <= t.end_at);
    };
    // Its runs by slot (shard 0 only: these tasks have one shard).
    runs_by_slot by_slot;
    for (auto& [id, v] : runs)
      if (v.last.task_id == t.id) by_slot[v.last.slot].push_back(&v);
    for (auto& [slot, vs] : by_slot) {
      if (!is_slot(slot))
        out.push_back("task " + t.name + ": a run at " + format_rfc3339(slot) +
                      ", which is no slot of it: " + describe(vs.front()->last));
      if (paused_status_of(t, slot, b.pause_margin) == paused_status::yes)
        out.push_back("task " + t.name + " slot " + format_rfc3339(slot) +
                      ": fired while paused: " + describe(vs.front()->last));
      if (vs.size() != 1 || vs.front()->last.shard != 0)
        out.push_back("task " + t.name + " slot " + format_rfc3339(slot) + ": " +
                      std::to_string(vs.size()) + " runs (exactly one expected), the first " +
                      describe(vs.front()->last));
    }
    for (auto s = sched->next_after(b.checked_from - 1);
         s && *s <= b.checked_until && (t.end_at == 0 || *s <= t.end_at);
         s = sched->next_after(*s)) {
      auto slot = *s;
      auto status = paused_status_of(t, slot, b.pause_margin);
      if (status == paused_status::yes) continue;  // a run there was reported above
      auto due = jittered(t, slot);
      auto earlier = runs_before(by_slot, slot);
      auto it = by_slot.find(slot);
      if (it == by_slot.end()) {
        if (status == paused_status::edge) continue;  // may or may not have fired
        if (dropped_by_overlap(t, earlier, due - b.decided_ahead)) continue;
        out.push_back("task " + t.name + " slot " + format_rfc3339(slot) + ": never fired" +
                      (covered(faults, b.heal, slot) ? " (in a fault window)" : ""));
        continue;
      }
      auto& v = *it->second.front();
      run_rules r;
      r.where = "task " + t.name + " slot " + format_rfc3339(slot) + ": ";
      r.not_before = r.due = due;
      r.not_before_what = r.due_what =
          t.jitter > 0 ? "its jittered instant " + format_rfc3339(due) : std::string("its slot");
      if (t.overlap == overlap_policy::buffer_one || t.overlap == overlap_policy::buffer_all) {
        // Buffered, it fires when the run before it ends.
        if (auto end = latest_end(earlier); end > due) {
          r.due = end;
          r.due_what = end == forever ? std::string("a run before it, which never ended")
                                      : "the end of the run before it (" + format_rfc3339(end) + ")";
        }
      }
      r.timely = !t.limited() && status == paused_status::no;
      r.late_until_start = t.overlap != overlap_policy::allow;
      r.may_cancel = status == paused_status::edge || t.cancels.count(v.last.id) > 0;
      check_run(t, v, r, faults, b, out);
    }
  }
  return out;
}

// -- DAG -----------------------------------------------------------------------

std::vector<std::string> check_chains(const std::vector<sim_task>& tasks,
                                      const std::vector<fault_window>& faults,
                                      const std::map<std::string, run_view>& runs,
                                      const slot_bounds& b) {
  std::vector<std::string> out;
  std::map<uint64_t, const sim_task*> by_id;
  for (auto& t : tasks) by_id[t.id] = &t;
  auto by_index = [](auto index) {
    return [index](const run_view* x, const run_view* y) { return x->*index < y->*index; };
  };
  for (auto& t : tasks) {
    if (!t.chained()) continue;
    auto where = "chained task " + t.name + ": ";
    if (t.depends_on.size() != 1) {
      out.push_back(where + std::to_string(t.depends_on.size()) +
                    " upstreams, not judged (check_chains judges a task of one)");
      continue;
    }
    auto up_id = t.depends_on.front();
    auto u = by_id.find(up_id);
    auto up = u == by_id.end() ? "task " + std::to_string(up_id) : u->second->name;
    std::vector<const run_view*> ups, mine;
    for (auto& [id, v] : runs) {
      if (v.last.task_id == up_id) ups.push_back(&v);
      if (v.last.task_id == t.id) mine.push_back(&v);
    }
    // The causes: successes of the upstream's latest run, in log order.
    std::vector<const run_view*> causes;
    for (auto* a : ups) {
      if (a->last.state != instance_state::success || a->final_index == 0) continue;
      bool latest = std::none_of(ups.begin(), ups.end(), [&](const run_view* w) {
        return w->last.slot > a->last.slot && w->created_index < a->final_index;
      });
      if (latest) causes.push_back(a);
    }
    std::sort(causes.begin(), causes.end(), by_index(&run_view::final_index));
    std::sort(mine.begin(), mine.end(), by_index(&run_view::created_index));
    std::map<const run_view*, std::vector<const run_view*>> fired;  // cause -> its runs of t
    for (auto* r : mine) {
      auto run_where = where + "run " + r->last.id + ": ";
      const run_view* cause = nullptr;  // the latest before it
      for (auto* a : causes)
        if (a->final_index < r->created_index) cause = a;
      if (!cause) {
        out.push_back(run_where + "fired with no success of " + up +
                      "'s latest run committed before it: " + describe(r->last));
        continue;
      }
      fired[cause].push_back(r);
      if (r->created > cause->finalized + b.eps &&
          !fault_near(faults, b.heal, cause->finalized, cause->finalized + b.eps))
        out.push_back(run_where + "fired " + format_duration(r->created - cause->finalized) +
                      " after the success of " + up + "'s " + describe(cause->last) +
                      " committed (eps " + format_duration(b.eps) + ", no fault window)");
      run_rules rules;
      rules.where = run_where;
      rules.not_before = rules.due = r->last.slot;  // the instant it fired
      rules.not_before_what = rules.due_what = "its slot";
      check_run(t, *r, rules, faults, b, out);
    }
    for (auto* a : causes) {
      if (auto f = fired.find(a); f != fired.end()) {
        if (f->second.size() > 1) {
          std::string ids;
          for (auto* r : f->second) ids += (ids.empty() ? "" : ", ") + r->last.id;
          out.push_back(where + "fired " + std::to_string(f->second.size()) +
                        " times for one success of " + up + ", " + describe(a->last) +
                        ": runs " + ids);
        }
        continue;
      }
      auto at = a->finalized;
      if (at < b.checked_from || at > b.checked_until) continue;
      if (fault_near(faults, b.heal, at, at + b.eps)) continue;
      bool fired_again = std::any_of(ups.begin(), ups.end(), [&](const run_view* w) {
        return w->last.slot > a->last.slot && w->created <= at + b.eps;
      });
      if (fired_again) continue;
      out.push_back(where + "never fired for the success of " + up + "'s latest run " +
                    describe(a->last) + ", committed at " + format_rfc3339(at));
    }
  }
  return out;
}

}  // namespace aisched::sim
