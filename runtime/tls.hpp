// Cluster TLS: checking a node's credentials at startup, and turning on CAF's
// openssl module so that all node-to-node traffic uses TLS with mutual
// authentication. The "cluster secret" is the private CA: CAF's openssl module
// requires every peer to present a certificate signed by the CA in --tls-ca
// (it checks the chain only, no host names), so a process without such a
// certificate and its key can neither join nor send commands.
#pragma once

#include <string>

namespace caf {
class actor_system_config;
}

namespace aisched::runtime {

struct config;

/// With TLS configured: "" if the certificate, key and CA files of `cfg` exist,
/// parse, belong together and the certificate is signed by the CA; otherwise a
/// message naming the option and the file. Without TLS: "".
/// CAF itself reads these files only at the first handshake and aborts the
/// process there if one is bad, so this runs before the node starts.
std::string check_tls_files(const config& cfg);

/// With TLS configured: loads CAF's openssl module into `caf_cfg` (after the
/// middleman) with the files of `cfg`. Without TLS: does nothing.
void enable_cluster_tls(caf::actor_system_config& caf_cfg, const config& cfg);

}  // namespace aisched::runtime
