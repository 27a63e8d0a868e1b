// Cluster TLS; see tls.hpp.
#include "runtime/tls.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include <caf/actor_system_config.hpp>
#include <caf/openssl/manager.hpp>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "runtime/config.hpp"

namespace aisched::runtime {

namespace {

/// OpenSSL's queued error reasons, most recent last ("" if none).
std::string ssl_errors() {
  std::string out;
  char buf[256];
  while (auto e = ERR_get_error()) {
    ERR_error_string_n(e, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out;
}

std::string with_reason(std::string msg) {
  auto why = ssl_errors();
  return why.empty() ? msg : msg + " (" + why + ")";
}

/// Hands OpenSSL the key password; without one an encrypted key must fail
/// here instead of OpenSSL prompting on a terminal the node may not have.
int password_cb(char* buf, int size, int, void* userdata) {
  auto* pw = static_cast<const std::string*>(userdata);
  if (pw->empty() || size <= 0) return 0;
  auto n = std::min(pw->size(), static_cast<size_t>(size));
  std::memcpy(buf, pw->data(), n);
  return static_cast<int>(n);
}

}  // namespace

std::string check_tls_files(const config& cfg) {
  if (cfg.tls_cert.empty() && cfg.tls_key.empty() && cfg.tls_ca.empty()) {
    if (!cfg.tls_key_password.empty()) return "--tls-key-password needs --tls-cert, --tls-key and --tls-ca";
    return "";
  }
  if (cfg.tls_cert.empty() || cfg.tls_key.empty() || cfg.tls_ca.empty())
    return "cluster TLS needs all of --tls-cert, --tls-key and --tls-ca (or none of them)";
  for (auto [opt, path] : {std::pair{"--tls-cert", &cfg.tls_cert}, {"--tls-key", &cfg.tls_key},
                           {"--tls-ca", &cfg.tls_ca}}) {
    std::ifstream in(*path);
    if (!in) return std::string(opt) + ": cannot read '" + *path + "': " + std::strerror(errno);
  }
  ERR_clear_error();
  // The same calls CAF's openssl session makes per connection
  // (libcaf_openssl/src/openssl/session.cpp), so what passes here loads there.
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  if (!ctx) return with_reason("cannot create an OpenSSL context");
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), cfg.tls_cert.c_str()) != 1)
    return with_reason("--tls-cert: no usable PEM certificate in '" + cfg.tls_cert + "'");
  // Parsing and matching apart, so the message says which of the two failed.
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_file(cfg.tls_key.c_str(), "r"), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, password_cb,
                                    const_cast<std::string*>(&cfg.tls_key_password))
          : nullptr,
      EVP_PKEY_free);
  if (!key)
    return with_reason("--tls-key: no usable PEM private key in '" + cfg.tls_key + "'" +
                       (cfg.tls_key_password.empty() ? " (encrypted? set --tls-key-password)"
                                                     : " (wrong --tls-key-password?)"));
  ERR_clear_error();
  if (SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1 || SSL_CTX_check_private_key(ctx.get()) != 1)
    return "--tls-key: '" + cfg.tls_key + "' is not the key of the certificate in '" +
           cfg.tls_cert + "'";
  if (SSL_CTX_load_verify_locations(ctx.get(), cfg.tls_ca.c_str(), nullptr) != 1)
    return with_reason("--tls-ca: no usable PEM CA certificate in '" + cfg.tls_ca + "'");
  // Our own certificate must chain to the cluster CA, or every peer rejects us
  // at the handshake with nothing in our log but failed connections.
  STACK_OF(X509)* chain = nullptr;
  SSL_CTX_get0_chain_certs(ctx.get(), &chain);
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> vctx(X509_STORE_CTX_new(),
                                                                        X509_STORE_CTX_free);
  if (!vctx || X509_STORE_CTX_init(vctx.get(), SSL_CTX_get_cert_store(ctx.get()),
                                   SSL_CTX_get0_certificate(ctx.get()), chain) != 1)
    return with_reason("cannot verify --tls-cert");
  if (X509_verify_cert(vctx.get()) != 1)
    return "--tls-cert: '" + cfg.tls_cert + "' is not valid for the CA in '" + cfg.tls_ca +
           "': " + X509_verify_cert_error_string(X509_STORE_CTX_get_error(vctx.get()));
  return "";
}

void enable_cluster_tls(caf::actor_system_config& caf_cfg, const config& cfg) {
  if (cfg.tls_cert.empty()) return;
  caf_cfg.set("openssl.certificate", cfg.tls_cert);
  caf_cfg.set("openssl.key", cfg.tls_key);
  caf_cfg.set("openssl.cafile", cfg.tls_ca);
  if (!cfg.tls_key_password.empty()) caf_cfg.set("openssl.passphrase", cfg.tls_key_password);
  // With a certificate set, the module requires and verifies the peer's
  // certificate on both sides (SSL_VERIFY_PEER | FAIL_IF_NO_PEER_CERT).
  caf_cfg.load<caf::openssl::manager>();
}

}  // namespace aisched::runtime
