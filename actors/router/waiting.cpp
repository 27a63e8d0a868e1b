// Waiting reasons of pending runs; see waiting.hpp.
#include "actors/router/waiting.hpp"

#include <chrono>
#include <unordered_map>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "obs/metrics.hpp"

namespace aisched::router {

using namespace proto;

namespace {

/// Why runs of a task wait: no worker can take them (`unplaceable`, what
/// scheduler_runs_unplaceable counts), their task is paused, or their task or
/// pool is at its limit.
struct waiting_reason {
  std::string text;  // "": they only wait for a free slot
  bool unplaceable = false;
};

/// What a pending run of a paused task says: it starts after a resume.
constexpr const char* paused_reason = "task paused: the run waits for its resume";

waiting_reason reason_of(const router_state& st, const task_terms& t,
                         const std::vector<candidate>& cands) {
  if (t.paused) return {paused_reason, false};
  auto why = why_waiting(t.tenant, t.labels, cands);
  if (!why.empty()) return {std::move(why), true};
  return {st.term.limits.blocked(t), false};
}

}  // namespace

void explain_waiting(self_ptr self, size_t scan_limit) {
  auto& st = self->state;
  if (!st.lead.leading || !st.lead.ready) return;
  std::vector<candidate> cands;
  for (auto& w : st.workers.entries()) cands.push_back(w.c);
  std::unordered_map<uint64_t, waiting_reason> by_task;
  note_waiting cmd{st.lead.term, {}};
  size_t looked_at = 0, waiting = 0;
  for (auto& queued : st.term.queue.items()) {
    auto& x = queued.run;
    if (looked_at++ >= scan_limit) break;
    auto* t = st.term.tasks.terms(x.task_id);
    if (!t) continue;
    auto r = by_task.find(x.task_id);
    if (r == by_task.end()) r = by_task.emplace(x.task_id, reason_of(st, *t, cands)).first;
    if (r->second.unplaceable) ++waiting;
    auto n = st.term.noted.find(x.id);
    auto before = n == st.term.noted.end() ? x.error : n->second;
    if (before == r->second.text) continue;
    st.term.noted[x.id] = r->second.text;
    cmd.notes.emplace_back(x.id, r->second.text);
  }
  obs::get().runs_unplaceable.set(static_cast<double>(waiting));
  if (cmd.notes.empty()) return;
  auto epoch = st.lead.epoch;
  auto notes = cmd.notes;
  self->request(st.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
      .then([](applied&) {},
            [=](caf::error&) {
              // Not committed: say it again at the next tick.
              if (!self->state.lead.current(epoch)) return;
              for (auto& [id, _] : notes) self->state.term.noted.erase(id);
            });
}

}  // namespace aisched::router
