// Behaviour of the retry actor; see retry_actor.hpp.
#include "actors/retry/retry_actor.hpp"

#include <chrono>
#include <functional>
#include <vector>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/counted.hpp"
#include "common/store_scan.hpp"

namespace aisched::retry {

using namespace proto;

namespace {

using self_ptr = retry_actor::stateful_pointer<retry_state>;

constexpr auto request_timeout = std::chrono::seconds(10);

void rearm(self_ptr self) {
  auto& st = self->state;
  if (!st.lead.leading || !st.lead.ready) return;
  // Drop stale heap tops so the timer aims at a live deadline.
  while (!st.term.heap.empty()) {
    auto& [at, id] = st.term.heap.top();
    auto w = st.term.watching.find(id);
    if (w != st.term.watching.end() && w->second.at == at) break;
    st.term.heap.pop();
  }
  if (st.term.heap.empty()) return;
  auto due = st.term.heap.top().first;
  if (st.term.armed_for != 0 && st.term.armed_for <= due) return;
  st.term.armed_for = due;
  auto now = now_of(self);
  auto gen = ++st.timer_gen;
  if (due <= now) self->send(self, wake_atom::value, gen);
  else self->delayed_send(self, std::chrono::milliseconds(due - now), wake_atom::value, gen);
}

/// Rebuilds the heap from the live entries once the stale ones (runs that
/// finished, or were rescheduled, while an earlier deadline sat on top)
/// outnumber them: a run that keeps running for its hour-long deadline would
/// otherwise hold one stale item behind it for every run finished meanwhile.
/// Linear in the heap, at most once per as many pushes: amortized constant.
void compact(term_state& t) {
  if (t.heap.size() <= 2 * t.watching.size() + term_state::heap_slack) return;
  std::vector<term_state::item> live;
  live.reserve(t.watching.size());
  for (auto& [id, w] : t.watching) live.emplace_back(w.at, id);
  t.heap = decltype(t.heap)(std::greater<term_state::item>{}, std::move(live));
}

void observe(term_state& t, const instance& x) {
  if (x.state == instance_state::retry_waiting && x.next_attempt_at != 0) {
    t.watching[x.id] = {term_state::kind::retry, x.next_attempt_at, x.attempt};
    t.heap.emplace(x.next_attempt_at, x.id);
  } else if ((x.state == instance_state::dispatched || x.state == instance_state::running) &&
             x.deadline != 0) {
    t.watching[x.id] = {term_state::kind::deadline, x.deadline, x.attempt};
    t.heap.emplace(x.deadline, x.id);
  } else {
    t.watching.erase(x.id);
  }
}

void wake(self_ptr self) {
  auto& st = self->state;
  if (!st.lead.leading || !st.lead.ready) return;
  auto now = now_of(self);
  proto::retry retry_cmd{st.lead.term, now, {}};
  report_results expired{st.lead.term, now, {}};
  while (!st.term.heap.empty() && st.term.heap.top().first <= now) {
    auto [at, id] = st.term.heap.top();
    st.term.heap.pop();
    auto w = st.term.watching.find(id);
    if (w == st.term.watching.end() || w->second.at != at) continue;  // stale
    if (w->second.what == term_state::kind::retry) {
      retry_cmd.instance_ids.push_back(id);
    } else {
      run_result r;
      r.instance_id = id;
      r.attempt = w->second.attempt;  // ends that attempt only (its history record)
      r.state = instance_state::timed_out;
      r.exit_code = -1;
      r.error = "no report from the worker before the run's deadline";
      expired.results.push_back(std::move(r));
    }
    st.term.watching.erase(w);
  }
  auto epoch = st.lead.epoch;
  auto on_error = [=](caf::error&) {
    // Not committed: look again shortly; the committed state is the truth.
    if (self->state.lead.current(epoch))
      self->delayed_send(self, std::chrono::milliseconds(500), wake_atom::value, uint64_t{0});
  };
  if (!retry_cmd.instance_ids.empty()) {
    auto ids = retry_cmd.instance_ids;
    self->request(st.raft, request_timeout, propose_atom::value, command{std::move(retry_cmd)})
        .then([](applied&) {},
              [=](caf::error& e) {
                auto& st = self->state;
                if (!st.lead.current(epoch)) return;
                for (auto& id : ids) {
                  st.term.watching[id] = {term_state::kind::retry, now + 500, 0};
                  st.term.heap.emplace(now + 500, id);
                }
                on_error(e);
              });
  }
  if (!expired.results.empty())
    self->request(st.raft, request_timeout, propose_atom::value, command{std::move(expired)})
        .then([](applied&) {}, on_error);
  rearm(self);
}

/// Rebuilds the deadlines from the runs still active after winning leadership.
void rebuild(self_ptr self, uint64_t epoch) {
  storage::scan_active(
      self, self->state.store, "", [=] { return self->state.lead.current(epoch); },
      [=](schedule_page& page) {
        for (auto& x : page.active) observe(self->state.term, x);
      },
      [=] {
        if (self->state.lead.rebuilt(epoch)) wake(self);
      });
}

/// The retry actor's part of aisched-inspect: runs watched (retry waits and
/// deadlines), the next due instant and the one CAF timer armed for it.
std::map<std::string, std::string> details_of(self_ptr self) {
  auto& st = self->state;
  size_t waiting = 0;
  for (auto& [id, w] : st.term.watching) waiting += w.what == term_state::kind::retry ? 1 : 0;
  return {{"leading", inspector::text(st.lead.leading)},
          {"ready", inspector::text(st.lead.ready)},
          {"term", std::to_string(st.lead.term)},
          {"retry_waiting", std::to_string(waiting)},
          {"deadlines", std::to_string(st.term.watching.size() - waiting)},
          {"heap_items", std::to_string(st.term.heap.size())},
          {"next_due", st.term.heap.empty() ? "-" : inspector::instant(st.term.heap.top().first)},
          {"timer_at", inspector::instant(st.term.armed_for)}};
}

}  // namespace

retry_actor::behavior_type retry_actor_impl(self_ptr self, raft_actor raft, store_actor store,
                                            wall_clock clock) {
  auto& st = self->state;
  st.raft = std::move(raft);
  st.store = std::move(store);
  st.clock = clock;
  return inspector::counted(self, {
      [=](inspect_atom) { return inspector::summary_of(self, details_of(self)); },
      [=](leader_atom, const leadership& l) {
        auto& st = self->state;
        ++st.timer_gen;          // a timer the last term armed wakes stale
        st.term = term_state{};  // the last term's watched runs and timer go whole
        if (st.lead.change(l.leading, l.term)) rebuild(self, st.lead.epoch);
      },
      [=](committed_atom, const applied& a) {
        auto& st = self->state;
        if (!st.lead.leading) return;
        for (auto& x : a.instances) observe(st.term, x);
        compact(st.term);
        rearm(self);
      },
      [=](wake_atom, uint64_t gen) {
        auto& st = self->state;
        if (gen != 0 && gen != st.timer_gen) return;
        if (gen != 0) st.term.armed_for = 0;
        wake(self);
      },
  });
}

}  // namespace aisched::retry
