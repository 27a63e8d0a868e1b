// The scheduler simulation's checkers; see scheduler_sim_checks.hpp.
#include "tests/sim/scheduler_sim_checks.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "proto/time.hpp"

namespace aisched::sim {

using proto::instance;
using proto::instance_state;

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

/// Whether a commit that leaves a run in state `s` ends the attempt it shows.
bool ends_attempt(instance_state s) {
  return proto::is_terminal(s) || s == instance_state::retry_waiting;
}

/// Whether `x`, a commit that ended its attempt, was the leader's decision
/// rather than its worker's report (the errors of router::lost_report, of the
/// retry actor's deadline, and of a worker proxy that stopped waiting for the
/// worker's answer to the dispatch).
bool ended_by_leader(const instance& x) {
  return starts_with(x.error, "worker_lost") || starts_with(x.error, "dispatch to worker ") ||
         x.error.find("before the run's deadline") != std::string::npos;
}

std::string at_or_never(unix_ms t) { return t == forever ? "never" : format_rfc3339(t); }

}  // namespace

std::string describe(const instance& x) {
  return x.id + " (" + std::string(proto::name_of(x.state)) + ", attempt " +
         std::to_string(x.attempt) + (x.error.empty() ? "" : ", \"" + x.error + "\"") + ")";
}

void history::record(const std::string& member, const proto::applied& a, unix_ms at) {
  applied_at.emplace(a.index, at);  // the first member to apply it: the earliest
  auto [it, fresh] = commits.emplace(a.index, a.instances);
  if (!fresh && it->second != a.instances)
    disagreements.push_back("index " + std::to_string(a.index) + ": " + member + " applied " +
                            std::to_string(a.instances.size()) + " instance changes, another " +
                            "member " + std::to_string(it->second.size()) +
                            " (or the same runs differently)");
}

std::map<std::string, run_view> runs_of(const history& h) {
  std::map<std::string, run_view> out;
  for (auto& [index, changes] : h.commits) {
    auto t = h.applied_at.find(index);
    unix_ms at = t == h.applied_at.end() ? 0 : t->second;
    for (auto& x : changes) {
      auto [it, fresh] = out.try_emplace(x.id);
      auto& v = it->second;
      if (fresh) {
        v.created_index = index;
        v.created = at;
      }
      bool was_final = !fresh && proto::is_terminal(v.last.state);
      if (proto::is_terminal(x.state) && !was_final) {
        v.finals += 1;
        if (v.final_index == 0) {
          v.final_index = index;
          v.finalized = at;
        }
      }
      v.last = x;
      if (x.started_at > 0 && (v.first_start == 0 || x.started_at < v.first_start))
        v.first_start = x.started_at;
      if (v.attempts.empty() || v.attempts.back().attempt != x.attempt) {
        attempt_view a;
        a.attempt = x.attempt;
        v.attempts.push_back(std::move(a));
      }
      auto& a = v.attempts.back();
      if (!x.worker_id.empty()) a.workers.insert(x.worker_id);
      if (x.started_at != 0 && a.started == 0) a.started = x.started_at;
      if (!a.ended && ends_attempt(x.state)) {
        a.ended = true;
        a.finished = x.finished_at;
        a.end = x.state;
        a.by_leader = ended_by_leader(x);
      }
    }
  }
  return out;
}

bool covered(const std::vector<fault_window>& faults, duration_ms heal, unix_ms t) {
  return std::any_of(faults.begin(), faults.end(),
                     [&](const fault_window& w) { return w.from <= t && t <= w.to + heal; });
}

bool fault_near(const std::vector<fault_window>& faults, duration_ms heal, unix_ms from,
                unix_ms to) {
  return std::any_of(faults.begin(), faults.end(),
                     [&](const fault_window& w) { return w.from <= to && from <= w.to + heal; });
}

bool cut_off(const std::vector<fault_window>& faults, duration_ms heal, const std::string& worker,
             unix_ms t) {
  return std::any_of(faults.begin(), faults.end(), [&](const fault_window& w) {
    bool its = w.member == worker || starts_with(w.member, worker + "->");
    return its && w.from <= t && t <= w.to + heal;
  });
}

bool ended_allowed(const instance& x, uint32_t max_attempts, bool may_cancel) {
  if (x.state == instance_state::success) return true;
  if (x.state == instance_state::cancelled) return may_cancel;
  bool failed = x.state == instance_state::failed || x.state == instance_state::timed_out;
  return failed && x.attempt >= max_attempts;
}

// -- total queue ---------------------------------------------------------------

std::vector<std::string> check_total_queue(const std::vector<sim_task>& tasks,
                                           const std::map<std::string, run_view>& runs) {
  std::vector<std::string> out;
  for (auto& t : tasks) {
    if (!t.queue()) continue;
    auto where = "queue task " + t.name + ": ";
    std::set<std::string> named;
    for (auto& id : t.enqueued) {
      if (!named.insert(id).second) {
        out.push_back(where + "run " + id + " named by two enqueue acknowledgements");
        continue;
      }
      auto r = runs.find(id);
      if (r == runs.end()) {
        out.push_back(where + "acknowledged enqueued run " + id + " is not in the history");
        continue;
      }
      auto& v = r->second;
      auto c = t.cancels.find(id);
      if (c != t.cancels.end() && c->second && v.last.state != instance_state::cancelled)
        out.push_back(where + "its cancel was acknowledged, yet the run ended " + describe(v.last));
      else if (!ended_allowed(v.last, t.max_attempts, c != t.cancels.end()))
        out.push_back(where + "enqueued run did not end success: " + describe(v.last));
      if (v.finals > 1)
        out.push_back(where + "enqueued run reached a final state " + std::to_string(v.finals) +
                      " times: " + describe(v.last));
    }
    if (t.unacknowledged == 0)
      for (auto& [id, v] : runs)
        if (v.last.task_id == t.id && named.count(id) == 0)
          out.push_back(where + "run " + describe(v.last) +
                        " is in the history, and no enqueue acknowledgement named it");
  }
  return out;
}

// -- attempts ------------------------------------------------------------------

namespace {

/// The committed attempt `attempt` of `v` (the first entry of that number), or nullptr.
const attempt_view* attempt_of(const run_view* v, uint32_t attempt) {
  if (!v) return nullptr;
  for (auto& a : v->attempts)
    if (a.attempt == attempt) return &a;
  return nullptr;
}

/// Whether attempt `older` may still run at `t`, when a newer one of its run
/// starts: the leader ended it without its worker's report while a fault
/// window cut one of its workers off.
bool excused(const attempt_view* older, const std::vector<fault_window>& faults, duration_ms heal,
             unix_ms t) {
  if (!older || !older->by_leader) return false;
  return std::any_of(older->workers.begin(), older->workers.end(),
                     [&](const std::string& w) { return cut_off(faults, heal, w, t); });
}

/// The committed side: attempt numbers, max_attempts, overlapping attempts.
void check_committed_attempts(const std::map<uint64_t, const sim_task*>& task_of,
                              const std::vector<fault_window>& faults, duration_ms heal,
                              const std::map<std::string, run_view>& runs,
                              std::vector<std::string>& out) {
  for (auto& [id, v] : runs) {
    auto t = task_of.find(v.last.task_id);
    for (size_t k = 0; k < v.attempts.size(); ++k) {
      auto& a = v.attempts[k];
      uint32_t expected = k == 0 ? 1 : v.attempts[k - 1].attempt + 1;
      if (a.attempt != expected)
        out.push_back("run " + id + ": attempt " + std::to_string(a.attempt) + " committed " +
                      (k == 0 ? std::string("first")
                              : "after attempt " + std::to_string(v.attempts[k - 1].attempt)) +
                      " (" + std::to_string(expected) + " expected)");
      if (t != task_of.end() && a.attempt > t->second->max_attempts)
        out.push_back("run " + id + ": attempt " + std::to_string(a.attempt) +
                      " beyond its task's " + "max_attempts " +
                      std::to_string(t->second->max_attempts));
      if (k == 0 || a.started == 0) continue;
      auto& p = v.attempts[k - 1];
      unix_ms p_end = p.ended ? p.finished : forever;
      if (a.started < p_end && !excused(&p, faults, heal, a.started))
        out.push_back("run " + id + ": attempt " + std::to_string(a.attempt) + " started at " +
                      format_rfc3339(a.started) + ", before attempt " + std::to_string(p.attempt) +
                      " ended (" + at_or_never(p_end) + ")");
    }
  }
}

/// The executions against the history.
void check_executions(const std::vector<fault_window>& faults, duration_ms heal,
                      const std::map<std::string, run_view>& runs,
                      const std::vector<execution>& executions, std::vector<std::string>& out) {
  std::map<std::string, std::vector<const execution*>> by_run;
  for (auto& e : executions) by_run[e.instance_id].push_back(&e);
  auto end_of = [](const execution* e) { return e->ended == 0 ? forever : e->ended; };
  auto text = [&](const execution* e) {
    return "attempt " + std::to_string(e->attempt) + " on " + e->worker + " [" +
           format_rfc3339(e->started) + ", " + at_or_never(end_of(e)) + "]";
  };
  for (auto& [id, es] : by_run) {
    std::stable_sort(es.begin(), es.end(), [](const execution* a, const execution* b) {
      return a->started < b->started;
    });
    auto r = runs.find(id);
    const run_view* v = r == runs.end() ? nullptr : &r->second;
    const execution* longest = nullptr;           // of those before, the one that ends last
    std::map<uint32_t, const execution*> latest;  // by attempt
    for (auto* e : es) {
      auto* a = attempt_of(v, e->attempt);
      if (!a || a->workers.count(e->worker) == 0)
        out.push_back("run " + id + ": " + text(e) + " executed, which the history never " +
                      "committed to that worker");
      if (auto p = latest.find(e->attempt); p != latest.end() && p->second->reported)
        out.push_back("run " + id + ": attempt " + std::to_string(e->attempt) +
                      " executed again after it was reported: " + text(p->second) + ", then " +
                      text(e));
      latest[e->attempt] = e;
      // The older attempt is the one excused, at the newer one's start: a
      // stopped worker may start its attempt only once it resumes, after the
      // newer one began elsewhere.
      auto* older = longest && e->attempt < longest->attempt ? e : longest;
      auto* newer = older == e ? longest : e;
      if (longest && e->started < end_of(longest) &&
          !excused(attempt_of(v, older->attempt), faults, heal, newer->started))
        out.push_back("run " + id + ": two executions at once: " + text(longest) + " and " +
                      text(e));
      if (!longest || end_of(e) > end_of(longest)) longest = e;
    }
  }
  for (auto& [id, v] : runs) {
    auto es = by_run.find(id);
    for (auto& a : v.attempts) {
      if (a.started == 0) continue;
      bool ran = es != by_run.end() &&
                 std::any_of(es->second.begin(), es->second.end(), [&](const execution* e) {
                   return e->attempt == a.attempt && a.workers.count(e->worker) > 0;
                 });
      if (!ran)
        out.push_back("run " + id + ": attempt " + std::to_string(a.attempt) +
                      " committed as started at " + format_rfc3339(a.started) +
                      ", and no executor of a worker it was committed to ran it");
    }
  }
}

}  // namespace

std::vector<std::string> check_attempts(const std::vector<sim_task>& tasks,
                                        const std::vector<fault_window>& faults, duration_ms heal,
                                        const std::map<std::string, run_view>& runs,
                                        const std::vector<execution>& executions) {
  std::vector<std::string> out;
  std::map<uint64_t, const sim_task*> task_of;
  for (auto& t : tasks) task_of[t.id] = &t;
  check_committed_attempts(task_of, faults, heal, runs, out);
  check_executions(faults, heal, runs, executions, out);
  return out;
}

// -- bounds --------------------------------------------------------------------

namespace {

/// One attempt's running interval [from, to) (to: forever when never ended).
struct span {
  unix_ms from = 0;
  unix_ms to = 0;
  std::string what;  // "<run id> attempt <n>"
};

/// Reports each episode in which more than `size` of `spans` run at once,
/// at the instant it begins, with the attempts running then.
void sweep(const std::string& limit, uint32_t size, const std::vector<span>& spans,
           std::vector<std::string>& out) {
  // (instant, +1 start / -1 end, span): ends before starts at one instant.
  std::vector<std::tuple<unix_ms, int, size_t>> events;
  for (size_t i = 0; i < spans.size(); ++i) {
    events.emplace_back(spans[i].from, 1, i);
    if (spans[i].to != forever) events.emplace_back(spans[i].to, -1, i);
  }
  std::sort(events.begin(), events.end());
  std::set<size_t> running;
  bool over = false;
  for (auto& [t, delta, i] : events) {
    if (delta < 0) {
      running.erase(i);
    } else {
      running.insert(i);
    }
    if (running.size() <= size) {
      over = false;
    } else if (!over) {
      over = true;
      std::string names;
      for (auto k : running) names += (names.empty() ? "" : ", ") + spans[k].what;
      out.push_back(limit + ": " + std::to_string(running.size()) + " attempts running at " +
                    format_rfc3339(t) + ": " + names);
    }
  }
}

}  // namespace

std::vector<std::string> check_bounds(const std::vector<sim_task>& tasks,
                                      const std::map<std::string, uint32_t>& pools,
                                      const std::map<std::string, run_view>& runs) {
  std::vector<std::string> out;
  struct limit {
    uint32_t size = 0;
    std::vector<span> spans;
  };
  std::map<std::string, limit> limits;                     // by its name in a violation
  std::map<uint64_t, std::vector<std::string>> limits_of;  // task id -> its limits' names
  for (auto& t : tasks) {
    if (!t.pool.empty()) {
      auto p = pools.find(t.pool);
      if (p == pools.end()) {
        out.push_back("task " + t.name + ": its pool " + t.pool + " was never created");
      } else {
        auto name = "pool " + t.pool + " (size " + std::to_string(p->second) + ")";
        limits[name].size = p->second;
        limits_of[t.id].push_back(name);
      }
    }
    if (t.max_concurrency != 0) {
      auto name = "task " + t.name + " (max_concurrency " + std::to_string(t.max_concurrency) + ")";
      limits[name].size = t.max_concurrency;
      limits_of[t.id].push_back(name);
    }
    if (t.overlap == proto::overlap_policy::skip || t.overlap == proto::overlap_policy::buffer_one ||
        t.overlap == proto::overlap_policy::buffer_all) {
      auto name = "task " + t.name + " (overlap " + std::string(proto::name_of(t.overlap)) + ")";
      limits[name].size = 1;
      limits_of[t.id].push_back(name);
    }
  }
  for (auto& [id, v] : runs) {
    auto l = limits_of.find(v.last.task_id);
    if (l == limits_of.end()) continue;
    for (auto& a : v.attempts) {
      if (a.started == 0) continue;
      // A run cancelled before its start was reported may show a start after its end.
      span s{a.started, a.ended ? std::max(a.finished, a.started) : forever,
             id + " attempt " + std::to_string(a.attempt)};
      if (s.to == s.from) continue;  // ran no instant
      for (auto& name : l->second) limits[name].spans.push_back(s);
    }
  }
  for (auto& [name, l] : limits) sweep(name, l.size, l.spans, out);
  return out;
}

// -- liveness and agreement ----------------------------------------------------

std::vector<std::string> check_settled(const std::map<std::string, instance>& final_state) {
  std::vector<std::string> out;
  for (auto& [id, x] : final_state)
    if (!proto::is_terminal(x.state))
      out.push_back("stuck after the settle period: " + describe(x));
  return out;
}

std::vector<std::string> check_history(const history& h,
                                       const std::map<std::string, run_view>& runs,
                                       const std::map<std::string, instance>& final_state,
                                       const std::vector<sim_task>& tasks) {
  std::vector<std::string> out = h.disagreements;
  std::map<uint64_t, uint32_t> keeps;  // task id -> keep_runs, for the tasks that set it
  for (auto& t : tasks)
    if (t.keep_runs != 0) keeps[t.id] = t.keep_runs;
  std::map<uint64_t, std::pair<size_t, size_t>> finished;  // task -> (in history, kept)
  for (auto& [id, x] : final_state) {
    auto r = runs.find(id);
    if (r == runs.end())
      out.push_back("the history never saw run " + describe(x));
    else if (r->second.last.state != x.state || r->second.last.attempt != x.attempt)
      out.push_back("the history ends run " + id + " as " + describe(r->second.last) +
                    ", the leader's state as " + describe(x));
  }
  for (auto& [id, v] : runs) {
    auto k = keeps.find(v.last.task_id);
    bool ended = proto::is_terminal(v.last.state);
    if (k != keeps.end() && ended) {
      auto& [seen, kept] = finished[v.last.task_id];
      ++seen;
      kept += final_state.count(id);
      continue;  // its retention may have removed it
    }
    if (final_state.count(id) == 0)
      out.push_back("the history has run " + id + ", the leader's state has not" +
                    (k != keeps.end() ? " (retention removed a run not finished: " +
                                            describe(v.last) + ")"
                                      : ""));
  }
  for (auto& [task, counts] : finished) {
    auto [seen, kept] = counts;
    auto least = std::min<size_t>(seen, keeps.at(task));
    if (kept < least)
      out.push_back("retention kept " + std::to_string(kept) + " of task " +
                    std::to_string(task) + "'s " + std::to_string(seen) +
                    " finished runs, fewer than its keep_runs " +
                    std::to_string(keeps.at(task)));
  }
  return out;
}

}  // namespace aisched::sim
