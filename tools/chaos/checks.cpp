// aisched-chaos, checks: settling and the history checks; see checks.hpp.
#include "tools/chaos/checks.hpp"

#include <boost/json.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "proto/time.hpp"
#include "tools/chaos/rest.hpp"

namespace aisched::chaos {

namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

/// Whether run `x` is at rest on `m`: ended, or held by its task's pause (rest.hpp).
bool at_rest(const member_snapshot& m, const json::object& x) {
  if (final_state(str(x, "state"))) return true;
  auto t = m.tasks.find(static_cast<uint64_t>(num(x, "task_id")));
  return held_by_pause(x, t == m.tasks.end() ? nullptr : &t->second);
}

member_snapshot read_member(const std::string& id, const std::string& port) {
  member_snapshot m;
  m.id = id;
  m.view = view_of(port);
  if (!m.view.ok) {
    m.error = id + " does not answer GET /api/v1/cluster";
    return m;
  }
  auto tasks = list_all(port, "/api/v1/tasks");
  auto runs = list_all(port, "/api/v1/instances");
  if (!tasks || !runs) {
    m.error = id + " does not list its tasks and runs";
    return m;
  }
  for (auto& t : *tasks) m.tasks[static_cast<uint64_t>(num(t, "id"))] = t;
  for (auto& x : *runs)
    if (!m.instances.emplace(str(x, "id"), x).second) m.listed_twice.push_back(str(x, "id"));
  m.ok = true;
  return m;
}

/// The fields of a task that replicated state fixes (next_fire_times depends on
/// when it is asked).
std::string task_key(const json::object& t) {
  return str(t, "name") + " v" + std::to_string(num(t, "version")) +
         (t.contains("paused") ? " paused=" + json::serialize(t.at("paused")) : "");
}

/// Why the members' snapshots differ ("" when they agree).
std::string disagreement(const std::vector<member_snapshot>& s) {
  auto& a = s.front();
  for (auto& b : s) {
    if (b.view.commit != b.view.applied)
      return b.id + " has applied " + std::to_string(b.view.applied) + " of " +
             std::to_string(b.view.commit) + " committed entries";
    if (b.view.commit != a.view.commit)
      return "commit index " + a.id + "=" + std::to_string(a.view.commit) + " " + b.id + "=" +
             std::to_string(b.view.commit);
    if (b.tasks.size() != a.tasks.size())
      return "tasks " + a.id + "=" + std::to_string(a.tasks.size()) + " " + b.id + "=" +
             std::to_string(b.tasks.size());
    for (auto& [id, t] : a.tasks) {
      auto it = b.tasks.find(id);
      if (it == b.tasks.end()) return "task " + std::to_string(id) + " missing on " + b.id;
      if (task_key(it->second) != task_key(t))
        return "task " + std::to_string(id) + ": " + a.id + " has " + task_key(t) + ", " + b.id +
               " has " + task_key(it->second);
    }
    if (b.instances.size() != a.instances.size())
      return "runs " + a.id + "=" + std::to_string(a.instances.size()) + " " + b.id + "=" +
             std::to_string(b.instances.size());
    for (auto& [id, x] : a.instances) {
      auto it = b.instances.find(id);
      if (it == b.instances.end()) return "run " + id + " missing on " + b.id;
      if (json::serialize(it->second) != json::serialize(x))
        return "run " + id + ": " + a.id + " has " + json::serialize(x) + ", " + b.id + " has " +
               json::serialize(it->second);
    }
  }
  return "";
}

/// Why the leader's runs are not settled yet ("" when they are).
std::string unsettled_runs(const member_snapshot& leader, const std::vector<acked_task>& acked) {
  std::set<uint64_t> fired;
  for (auto& [id, x] : leader.instances) {
    if (!at_rest(leader, x)) return "run " + id + " is " + str(x, "state");
    fired.insert(static_cast<uint64_t>(num(x, "task_id")));
  }
  for (auto& t : acked)
    if (t.at_ms != 0 && !fired.count(t.id))
      return "one-shot task " + std::to_string(t.id) + " (" + t.name + ") has not fired";
  return "";
}

}  // namespace

settle_outcome settle(const port_board& ports, size_t members, const std::vector<acked_task>& acked,
                      steady::time_point deadline) {
  settle_outcome out;
  auto start = steady::now();
  for (;;) {
    out.reason.clear();
    auto up = ports.up();
    std::vector<member_view> views;
    for (auto& [id, port] : up) views.push_back(view_of(port));
    std::string leader;
    if (up.size() != members) {
      out.reason = std::to_string(up.size()) + " of " + std::to_string(members) + " members up";
    } else {
      for (size_t i = 0; i < views.size() && out.reason.empty(); ++i) {
        if (!views[i].ok) out.reason = up[i].first + " does not answer";
        else if (views[i].leader.empty()) out.reason = up[i].first + " knows no leader";
        else if (!leader.empty() && views[i].leader != leader) out.reason = "members name different leaders";
        leader = views[i].leader;
      }
    }
    if (out.reason.empty()) {
      out.leader = leader;
      // Cheap test first: the leader's runs. Then every member's full state.
      std::string leader_port;
      for (auto& [id, port] : up)
        if (id == leader) leader_port = port;
      auto l = read_member(leader, leader_port);
      out.reason = l.ok ? unsettled_runs(l, acked) : l.error;
      if (out.reason.empty()) {
        out.snapshot.clear();
        for (auto& [id, port] : up) {
          out.snapshot.push_back(read_member(id, port));
          if (!out.snapshot.back().ok) out.reason = out.snapshot.back().error;
        }
        if (out.reason.empty()) out.reason = disagreement(out.snapshot);
        if (out.reason.empty()) {
          out.settled = true;
          out.seconds = std::chrono::duration<double>(steady::now() - start).count();
          return out;
        }
      } else if (out.snapshot.empty() || steady::now() + 5s > deadline) {
        // Keep a snapshot for the checks should the deadline pass.
        out.snapshot.clear();
        for (auto& [id, port] : up) out.snapshot.push_back(read_member(id, port));
      }
    }
    if (steady::now() >= deadline) {
      out.seconds = std::chrono::duration<double>(steady::now() - start).count();
      return out;
    }
    std::this_thread::sleep_for(1s);
  }
}

std::vector<std::string> check_history(const settle_outcome& s, const std::vector<acked_task>& acked,
                                       const burst_record& bursts, const std::string& effects_path,
                                       const std::string& leader_port, run_summary& summary) {
  std::vector<std::string> v;
  if (!s.settled) v.push_back("not settled by the deadline: " + s.reason);
  const member_snapshot* leader = nullptr;
  for (auto& m : s.snapshot) {
    if (!m.ok) v.push_back("cannot read " + m.id + ": " + m.error);
    if (m.ok && m.id == s.leader) leader = &m;
  }
  if (!leader) {
    v.push_back("no readable leader: the history cannot be checked");
    return v;
  }

  // 1. Every acknowledged create is on every member.
  for (auto& m : s.snapshot) {
    if (!m.ok) continue;
    for (auto& t : acked) {
      auto it = m.tasks.find(t.id);
      if (it == m.tasks.end())
        v.push_back("acknowledged task " + std::to_string(t.id) + " (" + t.name + ", via " +
                    t.via + ") missing on " + m.id);
      else if (str(it->second, "name") != t.name)
        v.push_back("task " + std::to_string(t.id) + " on " + m.id + " is named " +
                    str(it->second, "name") + ", acknowledged as " + t.name);
    }
  }

  // 2. One fire per (task, slot, shard), at a slot of the task's schedule.
  std::map<uint64_t, const acked_task*> by_id;
  for (auto& t : acked) by_id[t.id] = &t;
  for (auto& m : s.snapshot) {
    if (!m.ok) continue;
    std::map<std::tuple<uint64_t, int64_t, int64_t>, std::string> fired;
    std::map<uint64_t, size_t> per_task;
    for (auto& [id, x] : m.instances) {
      auto task = static_cast<uint64_t>(num(x, "task_id"));
      auto slot = parse_rfc3339(str(x, "slot")).value_or(-1);
      auto shard = num(x, "shard");
      auto key = std::make_tuple(task, slot, shard);
      if (auto [it, fresh] = fired.emplace(key, id); !fresh)
        v.push_back("(task " + std::to_string(task) + ", slot " + str(x, "slot") + ", shard " +
                    std::to_string(shard) + ") fired twice on " + m.id + ": " + it->second +
                    " and " + id);
      if (id != std::to_string(task) + "-" + std::to_string(slot) + "-" + std::to_string(shard))
        v.push_back("run " + id + " on " + m.id + " does not carry its key (task " +
                    std::to_string(task) + ", slot " + str(x, "slot") + ")");
      ++per_task[task];
      auto t = by_id.find(task);
      if (t == by_id.end()) continue;
      if (t->second->interval_ms > 0 && slot % t->second->interval_ms != 0)
        v.push_back("run " + id + " on " + m.id + " is off its task's @every grid");
      if (t->second->at_ms != 0 && slot != t->second->at_ms)
        v.push_back("run " + id + " on " + m.id + " is not at its one-shot instant " +
                    format_rfc3339(t->second->at_ms));
    }
    for (auto& t : acked)
      if (t.at_ms != 0 && per_task[t.id] != 1)
        v.push_back("one-shot task " + std::to_string(t.id) + " (" + t.name + ") has " +
                    std::to_string(per_task[t.id]) + " runs on " + m.id);
    for (auto& id : m.listed_twice) v.push_back("run " + id + " listed twice by " + m.id);
    // Bulk enqueues: each acknowledged run there once, as acknowledged; batches whole.
    auto found = check_bursts(m.id, m.instances, bursts);
    v.insert(v.end(), found.begin(), found.end());
  }

  // 3. Every execution is a distinct, recorded attempt.
  std::ifstream in(effects_path);
  std::map<std::pair<std::string, uint32_t>, size_t> executions;
  for (std::string line; std::getline(in, line);) {
    ++summary.effect_lines;
    std::istringstream fields(line);
    std::string id;
    long long attempt = 0;
    std::string rest;
    if (!(fields >> id >> attempt) || (fields >> rest) || attempt < 1) {
      v.push_back("malformed side-effect line: \"" + line + "\"");
      continue;
    }
    ++executions[{id, static_cast<uint32_t>(attempt)}];
  }
  std::map<std::string, std::map<uint32_t, json::object>> histories;
  auto history = [&](const std::string& id) -> const std::map<uint32_t, json::object>* {
    auto it = histories.find(id);
    if (it != histories.end()) return &it->second;
    auto h = attempts_of(leader_port, id);
    if (!h) return nullptr;
    return &histories.emplace(id, std::move(*h)).first->second;
  };
  for (auto& [key, n] : executions) {
    auto& [id, attempt] = key;
    if (n > 1)
      v.push_back("run " + id + " attempt " + std::to_string(attempt) + " executed " +
                  std::to_string(n) + " times");
    if (!leader->instances.count(id)) {
      v.push_back("executed run " + id + " (attempt " + std::to_string(attempt) +
                  ") is not in the leader's runs");
      continue;
    }
    auto* h = history(id);
    if (!h)
      v.push_back("cannot read the attempts of run " + id);
    else if (!h->count(attempt))
      v.push_back("run " + id + " attempt " + std::to_string(attempt) +
                  " executed but is not in its attempt history");
  }
  for (auto& [id, x] : leader->instances) {
    auto state = str(x, "state");
    ++summary.by_state[state];
    auto attempt = static_cast<uint32_t>(num(x, "attempt"));
    if (attempt > 1) ++summary.retried_runs;
    if (state == "success" && !executions.count({id, attempt}))
      v.push_back("run " + id + " succeeded at attempt " + std::to_string(attempt) +
                  " that left no side effect");
    // 5. Nothing is left in flight (a run its task's pause holds is counted apart).
    if (state == "pending" && at_rest(*leader, x)) ++summary.held_by_pause;
    else if (!final_state(state)) {
      summary.stuck.push_back(id);
      v.push_back("run " + id + " stuck " + state + " (attempt " + std::to_string(attempt) +
                  ", worker " + str(x, "worker_id") + ", error \"" + str(x, "error") + "\")");
    }
    if (attempt > 1)
      if (auto* h = history(id))
        for (auto& [n, a] : *h) {
          if (n == attempt) continue;
          auto error = str(a, "error");
          if (error.rfind("worker_lost", 0) == 0) ++summary.lost_attempts;
          // "failed: worker_lost", "timed_out: ...": the error up to its first colon.
          auto reason = error.substr(0, error.find(':'));
          ++summary.ended_attempts[str(a, "state") + (reason.empty() ? "" : ": " + reason)];
        }
  }
  summary.instances = leader->instances.size();

  // 4. The members agree (already the settling condition; restated when unmet).
  if (auto d = disagreement(s.snapshot); !d.empty() && s.snapshot.size() > 1)
    v.push_back("members disagree: " + d);
  return v;
}

}  // namespace aisched::chaos
