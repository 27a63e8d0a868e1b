// The scheduler simulation's checkers; see scheduler_sim_checks.hpp.
#include "tests/sim/scheduler_sim_checks.hpp"

#include <algorithm>
#include <set>

#include "proto/time.hpp"

namespace aisched::sim {

using proto::instance;
using proto::instance_state;

void history::record(const std::string& member, const proto::applied& a) {
  auto [it, fresh] = commits.emplace(a.index, a.instances);
  if (!fresh && it->second != a.instances)
    disagreements.push_back("index " + std::to_string(a.index) + ": " + member + " applied " +
                            std::to_string(a.instances.size()) + " instance changes, another " +
                            "member " + std::to_string(it->second.size()) +
                            " (or the same runs differently)");
}

std::map<std::string, run_view> runs_of(const history& h) {
  std::map<std::string, run_view> out;
  for (auto& [index, changes] : h.commits)
    for (auto& x : changes) {
      auto& v = out[x.id];
      v.last = x;
      if (x.started_at > 0 && (v.first_start == 0 || x.started_at < v.first_start))
        v.first_start = x.started_at;
    }
  return out;
}

bool covered(const std::vector<fault_window>& faults, duration_ms heal, unix_ms t) {
  return std::any_of(faults.begin(), faults.end(),
                     [&](const fault_window& w) { return w.from <= t && t <= w.to + heal; });
}

bool ended_allowed(const instance& x, uint32_t max_attempts) {
  if (x.state == instance_state::success) return true;
  bool failed = x.state == instance_state::failed || x.state == instance_state::timed_out;
  return failed && x.attempt >= max_attempts;
}

namespace {

std::string describe(const instance& x) {
  return x.id + " (" + std::string(proto::name_of(x.state)) + ", attempt " +
         std::to_string(x.attempt) + (x.error.empty() ? "" : ", \"" + x.error + "\"") + ")";
}

/// The checks of one expected slot's run `v` of task `t`.
void check_run(const sim_task& t, unix_ms slot, const run_view& v,
               const std::vector<fault_window>& faults, const check_bounds& b,
               std::vector<std::string>& out) {
  auto where = "task " + t.name + " slot " + format_rfc3339(slot) + ": ";
  if (v.first_start == 0) {
    out.push_back(where + "its run never started: " + describe(v.last));
  } else if (v.first_start < slot) {
    out.push_back(where + "started " + format_duration(slot - v.first_start) +
                  " before its slot: " + describe(v.last));
  } else if (v.first_start > slot + b.eps && !covered(faults, b.heal, slot)) {
    out.push_back(where + "started " + format_duration(v.first_start - slot) +
                  " after its slot (eps " + format_duration(b.eps) + ", no fault window): " +
                  describe(v.last));
  }
  if (!ended_allowed(v.last, t.max_attempts))
    out.push_back(where + "did not end success (max_attempts " + std::to_string(t.max_attempts) +
                  "): " + describe(v.last));
}

}  // namespace

std::vector<std::string> check_slots(const std::vector<sim_task>& tasks,
                                     const std::vector<fault_window>& faults,
                                     const std::map<std::string, run_view>& runs,
                                     const check_bounds& b) {
  std::vector<std::string> out;
  for (auto& t : tasks) {
    if (t.every == 0 && t.at == 0) {  // a bulk enqueue's task: its runs end as allowed
      for (auto& id : t.enqueued) {
        auto r = runs.find(id);
        if (r == runs.end())
          out.push_back("task " + t.name + ": acknowledged enqueued run " + id +
                        " is not in the history");
        else if (!ended_allowed(r->second.last, t.max_attempts))
          out.push_back("task " + t.name + ": enqueued run did not end success: " +
                        describe(r->second.last));
      }
      continue;
    }
    // Its runs by slot (shard 0 only: these tasks have one shard).
    std::map<unix_ms, std::vector<const run_view*>> by_slot;
    for (auto& [id, v] : runs)
      if (v.last.task_id == t.id) by_slot[v.last.slot].push_back(&v);
    std::set<unix_ms> expected;
    if (t.every > 0) {
      auto first = (b.checked_from + t.every - 1) / t.every * t.every;
      for (auto s = first; s <= b.checked_until && (t.end_at == 0 || s <= t.end_at); s += t.every)
        expected.insert(s);
    } else if (b.checked_from <= t.at && t.at <= b.checked_until) {
      expected.insert(t.at);
    }
    for (auto& [slot, vs] : by_slot) {
      bool is_slot = t.every > 0 ? slot % t.every == 0 && (t.end_at == 0 || slot <= t.end_at)
                                 : slot == t.at;
      if (!is_slot)
        out.push_back("task " + t.name + ": a run at " + format_rfc3339(slot) +
                      ", which is no slot of it: " + describe(vs.front()->last));
      if (vs.size() != 1 || vs.front()->last.shard != 0)
        out.push_back("task " + t.name + " slot " + format_rfc3339(slot) + ": " +
                      std::to_string(vs.size()) + " runs (exactly one expected), the first " +
                      describe(vs.front()->last));
    }
    for (auto slot : expected) {
      auto it = by_slot.find(slot);
      if (it == by_slot.end()) {
        out.push_back("task " + t.name + " slot " + format_rfc3339(slot) + ": never fired" +
                      (covered(faults, b.heal, slot) ? " (in a fault window)" : ""));
        continue;
      }
      check_run(t, slot, *it->second.front(), faults, b, out);
    }
  }
  return out;
}

std::vector<std::string> check_settled(const std::map<std::string, instance>& final_state) {
  std::vector<std::string> out;
  for (auto& [id, x] : final_state)
    if (!proto::is_terminal(x.state)) out.push_back("stuck after the settle period: " + describe(x));
  return out;
}

std::vector<std::string> check_history(const history& h,
                                       const std::map<std::string, run_view>& runs,
                                       const std::map<std::string, instance>& final_state) {
  std::vector<std::string> out = h.disagreements;
  for (auto& [id, x] : final_state) {
    auto r = runs.find(id);
    if (r == runs.end())
      out.push_back("the history never saw run " + describe(x));
    else if (r->second.last.state != x.state || r->second.last.attempt != x.attempt)
      out.push_back("the history ends run " + id + " as " + describe(r->second.last) +
                    ", the leader's state as " + describe(x));
  }
  for (auto& [id, v] : runs)
    if (final_state.count(id) == 0)
      out.push_back("the history has run " + id + ", the leader's state has not");
  return out;
}

}  // namespace aisched::sim
