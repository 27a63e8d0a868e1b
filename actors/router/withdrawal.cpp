// Runs held for their instant follow their task; see withdrawal.hpp.
#include "actors/router/withdrawal.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <string>
#include <unordered_map>

#include "actors/router/dispatching.hpp"
#include "common/log.hpp"

namespace aisched::router {

using namespace proto;

namespace {

/// Proposes the cancel of run `x` (held for its instant) for `why`; the
/// committed cancel reaches its worker through observe(). Not committed:
/// the run goes ahead, sent (again) to its worker.
void withdraw(self_ptr self, const instance& x, const char* why) {
  log::info("run withdrawn before its instant",
            {{"actor", "router"}, {"instance_id", x.id}, {"reason", why}});
  cancel c{"", x.id, now_of(self), std::string("withdrawn before its instant: ") + why};
  auto epoch = self->state.lead.epoch;
  self->request(self->state.raft, request_timeout, propose_atom::value, command{std::move(c)})
      .then([](applied&) {},
            [=](caf::error&) {
              auto& st = self->state;
              if (!st.lead.current(epoch)) return;
              auto a = st.term.assigned.find(x.id);
              if (a != st.term.assigned.end() && a->second.worker == x.worker_id) deliver(self, x);
            });
}

/// Whether run `x` was fired ahead and is not due for long enough that a
/// cancel commits before its worker starts it.
bool not_due(const instance& x, unix_ms now) {
  return x.state == instance_state::dispatched && x.created_at < x.slot &&
         x.slot - now > withdraw_margin;
}

}  // namespace

void follow_task_changes(self_ptr self, const applied& a) {
  if (a.tasks.empty() && a.deleted_tasks.empty()) return;
  std::unordered_map<uint64_t, const task*> changed;  // nullptr: deleted
  for (auto& t : a.tasks) changed[t.id] = &t;
  for (auto id : a.deleted_tasks) changed[id] = nullptr;
  auto now = now_of(self);
  for (auto& [id, x] : self->state.term.in_flight) {
    if (!not_due(x, now)) continue;
    auto c = changed.find(x.task_id);
    if (c == changed.end()) continue;
    if (!c->second)
      withdraw(self, x, "its task was deleted");
    else if (c->second->paused)
      withdraw(self, x, "its task was paused");
    else
      deliver(self, x);  // the worker's held run takes the new definition
  }
}

bool withdraw_if_paused(self_ptr self, const instance& x) {
  if (!not_due(x, now_of(self))) return false;
  auto* t = self->state.term.tasks.terms(x.task_id);
  if (!t || !t->paused) return false;  // a deleted task's run fails when it is sent
  withdraw(self, x, "its task was paused");
  return true;
}

}  // namespace aisched::router
