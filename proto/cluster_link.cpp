// Plain or TLS cluster connections; see cluster_link.hpp.
#include "proto/cluster_link.hpp"

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>

namespace aisched::proto {

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
  // reuse_addr: a restarted member rebinds its port while old sockets linger.
  if (sys.has_openssl_manager()) return caf::openssl::publish(endpoint, port, host.c_str(), true);
  return sys.middleman().publish(endpoint, port, host.c_str(), true);
}

}  // namespace aisched::proto
