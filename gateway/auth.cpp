// JWTs, password and token hashes; see auth.hpp.
#include "gateway/auth.hpp"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <memory>

#include <argon2.h>
#include <jwt.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "proto/errors.hpp"
#include "proto/hex.hpp"

namespace aisched::gateway {

namespace {

struct jwt_deleter {
  void operator()(jwt_t* j) const { jwt_free(j); }
};
using jwt_ptr = std::unique_ptr<jwt_t, jwt_deleter>;

caf::error unauthenticated(std::string why) {
  return make_error(errc::unauthenticated, "Authorization", std::move(why));
}

/// A claim's JSON text, "" when absent. jwt_get_grant_int cannot tell: it
/// reads 0 for a string or a fraction, -1 (ENOENT) only when absent.
std::string grant_json(jwt_t* j, const char* name) {
  char* s = jwt_get_grants_json(j, name);
  std::string out = s ? s : "";
  std::free(s);
  return out;
}

}  // namespace

caf::expected<std::string> issue_jwt(const auth_options& opts, const proto::user& u,
                                     int64_t now) {
  jwt_t* raw = nullptr;
  if (jwt_new(&raw) != 0) return make_error(errc::internal, "cannot create a JWT");
  jwt_ptr j{raw};
  auto role_name = std::string(proto::name_of(u.r));
  bool ok = jwt_add_grant(j.get(), "sub", u.name.c_str()) == 0 &&
            jwt_add_grant(j.get(), "tenant", u.tenant.c_str()) == 0 &&
            jwt_add_grant(j.get(), "role", role_name.c_str()) == 0 &&
            jwt_add_grant(j.get(), "iss", std::string(jwt_issuer).c_str()) == 0 &&
            jwt_add_grant_int(j.get(), "iat", now) == 0 &&
            jwt_add_grant_int(j.get(), "exp", now + opts.token_ttl.count()) == 0 &&
            jwt_set_alg(j.get(), JWT_ALG_HS256,
                        reinterpret_cast<const unsigned char*>(opts.secret.data()),
                        static_cast<int>(opts.secret.size())) == 0;
  if (!ok) return make_error(errc::internal, "cannot sign a JWT");
  char* s = jwt_encode_str(j.get());
  if (!s) return make_error(errc::internal, "cannot encode a JWT");
  std::string out(s);
  std::free(s);  // libjwt 1.10 allocates with malloc and has no jwt_free_str
  return out;
}

caf::expected<principal> verify_jwt(const auth_options& opts, const std::string& token,
                                    int64_t now) {
  jwt_t* raw = nullptr;
  // With a key, jwt_decode checks the signature; the algorithm is checked
  // below so a token signed another way (or "none") is never accepted.
  if (jwt_decode(&raw, token.c_str(), reinterpret_cast<const unsigned char*>(opts.secret.data()),
                 static_cast<int>(opts.secret.size())) != 0 || !raw)
    return unauthenticated("invalid token");
  jwt_ptr j{raw};
  if (jwt_get_alg(j.get()) != JWT_ALG_HS256) return unauthenticated("invalid token");
  errno = 0;
  long exp = jwt_get_grant_int(j.get(), "exp");
  if (errno != 0) return unauthenticated("token without expiry");
  if (exp <= now) return unauthenticated("token expired");
  // aisched issues no nbf; a token that has one (minted elsewhere with the
  // secret) is refused until then, and a malformed one always.
  if (auto nbf = grant_json(j.get(), "nbf"); !nbf.empty()) {
    if (nbf.size() > 18 || nbf.find_first_not_of("0123456789") != std::string::npos)
      return unauthenticated("invalid token");
    if (std::strtoll(nbf.c_str(), nullptr, 10) > now + jwt_leeway.count())
      return unauthenticated("token not yet valid");
  }
  auto grant = [&](const char* name) {
    auto v = jwt_get_grant(j.get(), name);
    return v ? std::string(v) : std::string();
  };
  // The secret may be shared with other services (it is a file the operator
  // provides): their tokens must not pass for ours.
  if (grant("iss") != jwt_issuer) return unauthenticated("token of another issuer");
  principal p;
  p.subject = grant("sub");
  p.tenant = grant("tenant");
  auto r = proto::parse_enum<role>(grant("role"));
  if (p.subject.empty() || p.tenant.empty() || !r) return unauthenticated("invalid token");
  p.r = *r;
  p.authenticated = true;
  return p;
}

caf::expected<std::string> hash_password(std::string_view password) {
  // OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane (~20 ms here).
  constexpr uint32_t t_cost = 2, m_cost = 19 * 1024, lanes = 1, salt_len = 16, hash_len = 32;
  std::array<unsigned char, salt_len> salt{};
  if (RAND_bytes(salt.data(), salt_len) != 1)
    return make_error(errc::internal, "no randomness for a salt");
  std::string encoded(argon2_encodedlen(t_cost, m_cost, lanes, salt_len, hash_len, Argon2_id), '\0');
  auto rc = argon2id_hash_encoded(t_cost, m_cost, lanes, password.data(), password.size(),
                                  salt.data(), salt_len, hash_len, encoded.data(), encoded.size());
  if (rc != ARGON2_OK)
    return make_error(errc::internal, std::string("argon2: ") + argon2_error_message(rc));
  encoded.resize(encoded.find('\0'));
  return encoded;
}

bool verify_password(const std::string& encoded, std::string_view password) {
  return argon2id_verify(encoded.c_str(), password.data(), password.size()) == ARGON2_OK;
}

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> md{};
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md.data());
  return proto::to_hex(md.data(), md.size());
}

std::string bearer_of(const std::map<std::string, std::string>& headers) {
  auto i = headers.find("authorization");
  if (i == headers.end()) return "";
  std::string_view v = i->second;
  constexpr std::string_view scheme = "Bearer ";
  if (v.size() <= scheme.size()) return "";
  for (size_t k = 0; k < scheme.size(); ++k)
    if (std::tolower(static_cast<unsigned char>(v[k])) !=
        std::tolower(static_cast<unsigned char>(scheme[k])))
      return "";
  v.remove_prefix(scheme.size());
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return std::string(v);
}

bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto ok = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (!first && (c == '_' || c == '.' || c == '-'));
  };
  for (size_t i = 0; i < s.size(); ++i)
    if (!ok(s[i], i == 0)) return false;
  return true;
}

}  // namespace aisched::gateway
