// Behaviour of the inspector actor; see inspector_actor.hpp.
#include "actors/inspector/inspector_actor.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/counted.hpp"

namespace aisched::inspector {

using namespace proto;

namespace {

using self_ptr = inspector_actor::stateful_pointer<inspector_state>;

/// One `inspnode` in flight: the answer being filled in and its promise,
/// shared by the reply handlers (exactly one of them delivers: the last).
struct collection {
  node_summary out;
  size_t pending = 0;
  caf::typed_response_promise<node_summary> promise;

  /// One answer is in (`self`: the inspector, in its own handler).
  void settle(self_ptr self) {
    if (--pending == 0) {
      out.collected_at_ms = now_of(self);
      promise.deliver(std::move(out));
    }
  }
};

actor_summary unresponsive(const std::string& name, const std::string& why) {
  actor_summary s;
  s.name = name;
  s.responsive = false;
  s.error = why;
  return s;
}

std::map<std::string, std::string> own_details(const inspector_state& st) {
  return {{"actors", std::to_string(st.targets.size())}};
}

}  // namespace

inspector_actor::behavior_type inspector_actor_impl(self_ptr self, inspector_options opts,
                                                    std::vector<target> targets) {
  self->state.opts = std::move(opts);
  self->state.clock = self->state.opts.clock;
  self->state.targets = std::move(targets);
  return counted(self, {
      [=](inspect_atom) { return summary_of(self, own_details(self->state)); },
      [=](inspect_node_atom, duration_ms wait) -> caf::result<node_summary> {
        auto& st = self->state;
        auto c = std::make_shared<collection>();
        c->out.node_id = st.opts.node_id;
        c->out.roles = st.opts.roles;
        c->out.started_at_ms = st.opts.started_at;
        c->out.actors.push_back(summary_of(self, own_details(st)));
        c->out.actors.resize(st.targets.size() + 1);
        c->pending = st.targets.size() + 1;  // + 1: released below, after the fan-out
        c->promise = self->make_response_promise<node_summary>();
        auto timeout = std::chrono::milliseconds(std::clamp(wait, min_wait, max_wait));
        for (size_t i = 0; i < st.targets.size(); ++i) {
          auto& t = st.targets[i];
          auto name = t.name;
          if (!t.handle) {
            c->out.actors[i + 1] = unresponsive(name, "not running");
            c->settle(self);
            continue;
          }
          self->request(t.handle, timeout, inspect_atom::value)
              .then(
                  [=](actor_summary& s) {
                    s.name = name;
                    c->out.actors[i + 1] = std::move(s);
                    c->settle(self);
                  },
                  [=](caf::error& err) {
                    c->out.actors[i + 1] = unresponsive(name, self->system().render(err));
                    c->settle(self);
                  });
        }
        auto rp = c->promise;
        c->settle(self);
        return rp;
      },
      [=](enroll_atom, std::string& name, inspectable_actor& handle) {
        self->state.targets.push_back(target{std::move(name), std::move(handle)});
      },
  });
}

}  // namespace aisched::inspector
