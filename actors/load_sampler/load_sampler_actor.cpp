// Behaviour of the load sampler actor; see load_sampler_actor.hpp.
#include "actors/load_sampler/load_sampler_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <chrono>

#include "common/counted.hpp"

namespace aisched::load_sampler {

using namespace proto;

namespace {

using self_ptr = load_sampler_actor::stateful_pointer<sampler_state>;

constexpr auto request_timeout = std::chrono::seconds(10);

/// One round: the router's view of every worker, committed as one command.
void sample(self_ptr self) {
  auto term = self->state.term;
  self->request(self->state.router, request_timeout, list_workers_atom::value)
      .then(
          [=](worker_list& l) {
            auto& st = self->state;
            if (!st.leading || st.term != term) return;
            auto now = now_of(self);
            record_load cmd{term, now, now - st.opts.retention, {}};
            for (auto& w : l.items)
              cmd.samples.push_back(
                  {w.id, now, w.load, w.max_load, w.cpu_percent, w.memory_percent});
            // No workers (e.g. a new leader before they re-register): nothing to
            // record, and pruning can wait for the next round that has some.
            if (cmd.samples.empty()) return;
            self->request(st.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
                .then(
                    [=](applied&) {
                      self->state.rounds += 1;
                      self->state.last_round = now;
                    },
                    [=](caf::error&) { self->state.failures += 1; });
          },
          [=](caf::error&) { self->state.failures += 1; });
}

}  // namespace

load_sampler_actor::behavior_type load_sampler_actor_impl(self_ptr self, raft_actor raft,
                                                          router_actor router,
                                                          sampler_options opts) {
  self->state.raft = std::move(raft);
  self->state.router = std::move(router);
  self->state.opts = opts;
  self->state.clock = opts.clock;
  self->delayed_send(self, std::chrono::milliseconds(opts.interval), caf::tick_atom::value);
  return inspector::counted(self, {
      [=](inspect_atom) {
        auto& st = self->state;
        return inspector::summary_of(
            self, {{"leading", inspector::text(st.leading)},
                   {"interval_ms", std::to_string(st.opts.interval)},
                   {"rounds", std::to_string(st.rounds)},
                   {"failures", std::to_string(st.failures)},
                   {"last_round", st.last_round ? format_rfc3339(st.last_round) : "-"}});
      },
      // Part of the commit-listener interface; the sampler is not subscribed
      // (see tick), so these matter only if someone subscribes it.
      [=](leader_atom, const leadership& l) {
        self->state.leading = l.leading;
        self->state.term = l.term;
      },
      [=](committed_atom, const applied&) {},
      [=](caf::tick_atom) {
        // Asks raft who leads instead of subscribing to commits: the sampler
        // needs no copy of every applied command, only the current term.
        self->request(self->state.raft, request_timeout, raft_status_atom::value)
            .then(
                [=](raft_status& s) {
                  self->state.leading = s.role == "leader";
                  self->state.term = s.term;
                  if (self->state.leading) sample(self);
                },
                [=](caf::error&) { self->state.failures += 1; });
        self->delayed_send(self, std::chrono::milliseconds(self->state.opts.interval),
                           caf::tick_atom::value);
      },
  });
}

}  // namespace aisched::load_sampler
