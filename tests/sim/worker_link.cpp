// The simulation's link to a worker; see worker_link.hpp.
#include "tests/sim/worker_link.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/message_view.hpp>

namespace aisched::sim {

namespace {

using idle_atom = caf::atom_constant<caf::atom("linkidle")>;

caf::behavior link_impl(caf::event_based_actor* self, caf::actor worker, std::function<bool()> cut,
                        std::shared_ptr<caf::actor_addr> local) {
  self->link_to(worker);
  self->set_default_handler(
      [=](caf::scheduled_actor* s, caf::message_view& x) -> caf::result<caf::message> {
        auto m = x.move_content_to_message();
        auto& from = s->current_sender();
        bool own_node = from && from->address() == *local;
        // Lost: a request among them is never answered (its sender times out).
        if (!own_node && cut()) return caf::delegated<caf::message>{};
        auto rp = static_cast<caf::local_actor*>(s)->make_response_promise();
        rp.delegate(worker, std::move(m));
        return caf::delegated<caf::message>{};
      });
  // Some behavior keeps it alive; everything else goes to the default handler.
  return {[](idle_atom) {}};
}

}  // namespace

proto::worker_actor spawn_worker_link(caf::actor_system& sys, const proto::worker_actor& worker,
                                      std::function<bool()> cut,
                                      std::shared_ptr<caf::actor_addr> local) {
  auto a = sys.spawn(link_impl, caf::actor_cast<caf::actor>(worker), std::move(cut),
                     std::move(local));
  return caf::actor_cast<proto::worker_actor>(a);
}

}  // namespace aisched::sim
