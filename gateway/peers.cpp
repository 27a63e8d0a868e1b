// Reaching other members' endpoints; see peers.hpp.
#include "gateway/peers.hpp"

#include <set>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "proto/cluster_link.hpp"
#include "proto/errors.hpp"

namespace aisched::gateway {

void reach_endpoint(caf::event_based_actor* self, const std::string& address,
                    std::chrono::milliseconds timeout, endpoint_fn then) {
  auto colon = address.rfind(':');
  uint16_t port = 0;
  try {
    if (colon != std::string::npos) port = static_cast<uint16_t>(std::stoul(address.substr(colon + 1)));
  } catch (const std::exception&) {
    port = 0;
  }
  if (port == 0)
    return then(make_error(errc::unavailable, "leader",
                                  "member address '" + address + "' is not HOST:PORT"));
  auto unreachable = [address](const std::string& why) {
    return make_error(errc::unavailable, "leader",
                             "cannot reach member at " + address + ": " + why);
  };
  // A member this node's raft is connected to is reached over that connection:
  // dialing it a second time makes CAF 0.17 drop both (proto/cluster_link.hpp).
  if (auto known = proto::known_member(self->system(), address)) return then(known);
  auto mm = proto::cluster_connector(self->system());  // TLS when configured
  self->request(mm, timeout, caf::connect_atom::value, address.substr(0, colon), port)
      .then(
          [=](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>& ifs) {
            if (!ptr || !self->system().assignable<proto::endpoint_actor>(ifs))
              return then(unreachable("no endpoint published there"));
            then(caf::actor_cast<proto::endpoint_actor>(std::move(ptr)));
          },
          [=](caf::error& e) { then(unreachable(self->system().render(e))); });
}

}  // namespace aisched::gateway
