// The node's inspector; see node.hpp (spawn_inspector).
#include <algorithm>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/clock.hpp"
#include "runtime/node.hpp"

namespace aisched::runtime {

proto::inspector_actor spawn_inspector(caf::actor_system& sys, const config& cfg,
                                       std::vector<inspector::target> targets) {
  targets.erase(std::remove_if(targets.begin(), targets.end(), [](const inspector::target& t) {
                  return !t.handle;
                }),
                targets.end());
  inspector::inspector_options opts;
  opts.node_id = cfg.node_id;
  opts.roles.assign(cfg.roles.begin(), cfg.roles.end());
  opts.started_at = system_now_ms();
  return sys.spawn(inspector::inspector_actor_impl, std::move(opts), std::move(targets));
}

}  // namespace aisched::runtime
