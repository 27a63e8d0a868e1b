// Behaviour of the backpressure actor; see backpressure_actor.hpp.
#include "actors/backpressure/backpressure_actor.hpp"

#include <chrono>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/counted.hpp"
#include "obs/metrics.hpp"
#include "common/log.hpp"
#include "common/store_scan.hpp"

namespace aisched::backpressure {

using namespace proto;

namespace {

using self_ptr = backpressure_actor::stateful_pointer<backpressure_state>;

constexpr auto request_timeout = std::chrono::seconds(5);

bool in_backlog(instance_state s) {
  return s == instance_state::pending || s == instance_state::dispatched;
}

/// Recomputes the level and tells the trigger and router when it changed.
void reassess(self_ptr self) {
  auto& st = self->state;
  auto p = assess(st.limits, st.backlog.size(), st.worker_load);
  if (p.level == st.current.level && p.delay == st.current.delay) return;
  if (p.level != st.current.level)
    log::info("backpressure level changed",
              {{"actor", "backpressure"},
               {"pressure", inspector::text(p.level)},
               {"backlog", std::to_string(st.backlog.size())},
               {"max_backlog", std::to_string(st.limits.max_backlog)}});
  st.current = p;
  obs::get().backpressure_state.set(static_cast<double>(p.level));
  for (auto& t : st.triggers) self->send(t, pressure_atom::value, p);
  self->send(st.router, pressure_atom::value, p);
}

/// Recounts the backlog from the runs still active after winning leadership.
void rebuild(self_ptr self, uint64_t epoch) {
  storage::scan_active(
      self, self->state.store, "", [=] { return self->state.lead.current(epoch); },
      [=](schedule_page& page) {
        for (auto& x : page.active)
          if (in_backlog(x.state)) self->state.backlog.insert(x.id);
      },
      [=] { reassess(self); });
}

/// The backpressure part of aisched-inspect: the level and what it is made of
/// (the dispatch tokens are the router's: see its row).
std::map<std::string, std::string> details_of(self_ptr self) {
  auto& st = self->state;
  return {{"leading", inspector::text(st.lead.leading)},
          {"level", inspector::text(st.current.level)},
          {"delay_ms", std::to_string(st.current.delay)},
          {"backlog", std::to_string(st.backlog.size())},
          {"max_backlog", std::to_string(st.limits.max_backlog)},
          {"worker_load", inspector::fixed2(st.worker_load)}};
}

}  // namespace

backpressure_actor::behavior_type backpressure_actor_impl(self_ptr self, store_actor store,
                                                          router_actor router,
                                                          trigger_actor trigger,
                                                          thresholds limits) {
  auto& st = self->state;
  st.store = std::move(store);
  st.router = std::move(router);
  st.triggers.push_back(std::move(trigger));
  st.limits = limits;
  self->send(self, caf::tick_atom::value);
  return inspector::counted(self, {
      [=](inspect_atom) { return inspector::summary_of(self, details_of(self)); },
      [=](leader_atom, const leadership& l) {
        auto& st = self->state;
        st.backlog.clear();
        if (st.lead.change(l.leading, l.term)) rebuild(self, st.lead.epoch);
      },
      [=](committed_atom, const applied& a) {
        auto& st = self->state;
        if (!st.lead.leading) return;
        for (auto& x : a.instances) {
          if (in_backlog(x.state)) st.backlog.insert(x.id);
          else st.backlog.erase(x.id);
        }
        reassess(self);
      },
      [=](pressure_status_atom) {
        auto& st = self->state;
        return pressure_status{st.current, st.backlog.size(), st.limits.max_backlog,
                               st.worker_load, st.lead.leading};
      },
      [=](caf::tick_atom) {
        // Sample the workers' load once a second.
        self->request(self->state.router, request_timeout, list_workers_atom::value)
            .then(
                [=](worker_list& l) {
                  double sum = 0;
                  size_t n = 0;
                  for (auto& w : l.items)
                    if (w.status == worker_status::online && w.max_load > 0) {
                      sum += static_cast<double>(w.load) / w.max_load;
                      ++n;
                    }
                  self->state.worker_load = n ? sum / n : 0;
                  reassess(self);
                },
                [](caf::error&) {});
        self->delayed_send(self, std::chrono::seconds(1), caf::tick_atom::value);
      },
  });
}

}  // namespace aisched::backpressure
