// Plain or TLS cluster connections; see cluster_link.hpp.
#include "proto/cluster_link.hpp"

#include <map>
#include <mutex>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>

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

}  // namespace aisched::proto
