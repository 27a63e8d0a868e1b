// Plain or TLS cluster connections; see cluster_link.hpp.
#include "proto/cluster_link.hpp"

#include <map>
#include <mutex>
#include <set>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>

#include "proto/errors.hpp"

namespace aisched::proto {

namespace {

// Per actor system (keyed by its node id): tests may run several in a process.
struct links {
  std::mutex mtx;
  std::map<caf::node_id, endpoint_actor> local;
  std::map<std::pair<caf::node_id, std::string>, endpoint_actor> members;
};

links& shared_links() {
  static links instance;
  return instance;
}

}  // namespace

caf::io::middleman_actor cluster_connector(caf::actor_system& sys) {
  // The openssl manager's actor implements the same interface as the plain
  // middleman actor (connect, publish, ...) on SSL sockets, feeding the same
  // BASP broker; the module is loaded only when TLS is configured.
  if (sys.has_openssl_manager()) return sys.openssl_manager().actor_handle();
  return sys.middleman().actor_handle();
}

caf::expected<uint16_t> publish_cluster_endpoint(const endpoint_actor& endpoint, uint16_t port,
                                                 const std::string& host) {
  auto& sys = endpoint.home_system();
  {
    auto& l = shared_links();
    std::lock_guard<std::mutex> guard(l.mtx);
    l.local[sys.node()] = endpoint;
  }
  // reuse_addr: a restarted member rebinds its port while old sockets linger.
  if (sys.has_openssl_manager()) return caf::openssl::publish(endpoint, port, host.c_str(), true);
  return sys.middleman().publish(endpoint, port, host.c_str(), true);
}

endpoint_actor local_endpoint(caf::actor_system& sys) {
  auto& l = shared_links();
  std::lock_guard<std::mutex> guard(l.mtx);
  auto it = l.local.find(sys.node());
  return it == l.local.end() ? endpoint_actor{} : it->second;
}

void remember_member(caf::actor_system& sys, const std::string& address, endpoint_actor ep) {
  auto& l = shared_links();
  std::lock_guard<std::mutex> guard(l.mtx);
  l.members[{sys.node(), address}] = std::move(ep);
}

void forget_member(caf::actor_system& sys, const std::string& address) {
  auto& l = shared_links();
  std::lock_guard<std::mutex> guard(l.mtx);
  l.members.erase({sys.node(), address});
}

endpoint_actor known_member(caf::actor_system& sys, const std::string& address) {
  auto& l = shared_links();
  std::lock_guard<std::mutex> guard(l.mtx);
  auto it = l.members.find({sys.node(), address});
  return it == l.members.end() ? endpoint_actor{} : it->second;
}

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
  if (auto known = known_member(self->system(), address)) return then(known);
  auto mm = cluster_connector(self->system());  // TLS when configured
  self->request(mm, timeout, caf::connect_atom::value, address.substr(0, colon), port)
      .then(
          [=](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>& ifs) {
            if (!ptr || !self->system().assignable<endpoint_actor>(ifs))
              return then(unreachable("no endpoint published there"));
            then(caf::actor_cast<endpoint_actor>(std::move(ptr)));
          },
          [=](caf::error& e) { then(unreachable(self->system().render(e))); });
}

}  // namespace aisched::proto
