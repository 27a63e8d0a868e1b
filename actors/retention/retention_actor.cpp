// Behaviour of the retention actor; see retention_actor.hpp.
#include "actors/retention/retention_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <chrono>

#include "common/counted.hpp"

namespace aisched::retention {

using namespace proto;

namespace {

using self_ptr = retention_actor::stateful_pointer<retention_state>;

constexpr auto request_timeout = std::chrono::seconds(10);

void end_sweep(self_ptr self, bool ok) {
  auto& st = self->state;
  st.sweeping = false;
  if (ok) {
    st.sweeps += 1;
    st.last_sweep = st.sweep_now;
  } else {
    st.failures += 1;
  }
}

/// The sweep's next page: read it, commit its removals, then go on.
void step(self_ptr self) {
  auto& st = self->state;
  prune_query q{st.cursor, st.sweep_now, st.opts.defaults, st.opts.page_runs, st.opts.page_tasks};
  self->request(st.store, request_timeout, prune_scan_atom::value, q)
      .then(
          [=](prune_page& page) {
            auto go_on = [=, next = page.next, done = page.done] {
              self->state.cursor = next;
              if (done) end_sweep(self, true);
              else step(self);
            };
            if (page.instance_ids.empty() && page.spans.empty()) return go_on();
            prune_history cmd{self->state.term, std::move(page.spans),
                              std::move(page.instance_ids)};
            self->request(self->state.raft, request_timeout, propose_atom::value,
                          command{std::move(cmd)})
                .then(
                    [=](applied& a) {
                      self->state.pruned += a.pruned;
                      go_on();
                    },
                    [=](caf::error&) { end_sweep(self, false); });
          },
          [=](caf::error&) { end_sweep(self, false); });
}

}  // namespace

retention_actor::behavior_type retention_actor_impl(self_ptr self, raft_actor raft,
                                                    store_actor store, retention_options opts) {
  self->state.raft = std::move(raft);
  self->state.store = std::move(store);
  self->state.opts = opts;
  self->state.clock = opts.clock;
  self->delayed_send(self, std::chrono::milliseconds(opts.interval), caf::tick_atom::value);
  return inspector::counted(self, {
      [=](inspect_atom) {
        auto& st = self->state;
        return inspector::summary_of(
            self, {{"sweeping", inspector::text(st.sweeping)},
                   {"interval_ms", std::to_string(st.opts.interval)},
                   {"keep_for_ms", std::to_string(st.opts.defaults.keep_for)},
                   {"keep_runs", std::to_string(st.opts.defaults.keep_runs)},
                   {"sweeps", std::to_string(st.sweeps)},
                   {"pruned", std::to_string(st.pruned)},
                   {"failures", std::to_string(st.failures)},
                   {"last_sweep", st.last_sweep ? format_rfc3339(st.last_sweep) : "-"}});
      },
      [=](caf::tick_atom) {
        self->delayed_send(self, std::chrono::milliseconds(self->state.opts.interval),
                           caf::tick_atom::value);
        if (self->state.sweeping) return;  // the last sweep is still going
        // Asks raft who leads instead of subscribing to commits: a sweep
        // needs the current term only, not a copy of every applied command.
        self->request(self->state.raft, request_timeout, raft_status_atom::value)
            .then(
                [=](raft_status& s) {
                  auto& st = self->state;
                  if (s.role != "leader" || st.sweeping) return;
                  st.sweeping = true;
                  st.term = s.term;
                  st.sweep_now = now_of(self);
                  st.cursor = prune_cursor{};
                  step(self);
                },
                [=](caf::error&) { self->state.failures += 1; });
      },
  });
}

}  // namespace aisched::retention
