// Sealing, opening and re-wrapping secrets; see secret_keeper.hpp.
#include "storage/secret_keeper.hpp"

#include "proto/errors.hpp"
#include "proto/random.hpp"
#include "proto/time.hpp"
#include "storage/secret_store.hpp"

namespace aisched::storage {

using namespace proto;

namespace {

/// A value is bound to its tenant and name: a sealed value copied to another
/// record does not open.
std::string value_aad(const std::string& tenant, const std::string& name) {
  return "aisched secret v1:" + std::to_string(tenant.size()) + ":" + tenant + ":" + name;
}

caf::error disabled() {
  return make_error(errc::unavailable, "secrets",
                    "secrets are disabled on this node: start every member with "
                    "--secrets-key-file");
}

}  // namespace

secret_keeper::secret_keeper(rocks& db, std::optional<secret_crypto::key> current,
                             std::optional<secret_crypto::key> previous)
    : db_(db), current_(current), previous_(previous) {
  if (current_) current_check_ = secret_crypto::key_check(*current_);
  if (previous_) previous_check_ = secret_crypto::key_check(*previous_);
}

caf::expected<secret_crypto::key> secret_keeper::unwrap(const data_key& k) const {
  if (!current_) return disabled();
  const secret_crypto::key* kek = nullptr;
  if (k.kek_check == current_check_) kek = &*current_;
  else if (previous_ && k.kek_check == previous_check_) kek = &*previous_;
  if (!kek) {
    std::string have = current_check_ + (previous_ ? " and " + previous_check_ : "");
    return make_error(
        errc::invalid_argument, "secrets-key-file",
        "--secrets-key-file: the secrets of tenant " + k.tenant +
            " are wrapped by the cluster key with check value " + k.kek_check +
            ", not by this node's key (check value " + have +
            "); start it with the cluster's key file (during a rotation, give the old one as "
            "--secrets-previous-key-file)");
  }
  auto dk = secret_crypto::unwrap(*kek, k.wrapped, k.tenant, k.id);
  if (!dk)
    return make_error(errc::corrupted, "secrets-key-file",
                      "the data key of tenant " + k.tenant +
                          " does not open under the key with its check value: altered bytes");
  return dk;
}

caf::error secret_keeper::check() const {
  if (!current_) return {};
  auto keys = read_data_keys(db_);
  if (!keys) return keys.error();
  for (auto& k : *keys)
    if (auto dk = unwrap(k); !dk) return dk.error();
  return {};
}

caf::expected<secret_crypto::key> secret_keeper::data_key_of(const data_key& k) {
  auto id = k.tenant + '\0' + k.id;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (auto i = opened_.find(id); i != opened_.end()) return i->second;
  }
  auto dk = unwrap(k);
  if (!dk) return dk.error();
  std::lock_guard<std::mutex> guard(mutex_);
  opened_.emplace(id, *dk);
  return dk;
}

caf::expected<secret_keeper::sealed_secret> secret_keeper::seal(const std::string& tenant,
                                                                const std::string& name,
                                                                std::string_view value,
                                                                unix_ms now) {
  if (!current_) return disabled();
  sealed_secret out;
  auto stored = read_data_key(db_, tenant);
  if (!stored) return stored.error();
  data_key k;
  secret_crypto::key dk;
  if (*stored) {
    k = **stored;
    auto opened = data_key_of(k);
    if (!opened) return opened.error();
    dk = *opened;
  } else {
    // The tenant's first secret: a fresh data key, proposed before the value.
    dk = secret_crypto::random_key();
    k.tenant = tenant;
    k.id = random_hex(8);
    k.kek_check = current_check_;
    k.wrapped = secret_crypto::wrap(*current_, dk, tenant, k.id);
    out.first_key = put_data_keys{{k}, false};
    std::lock_guard<std::mutex> guard(mutex_);
    opened_.emplace(tenant + '\0' + k.id, dk);
  }
  out.record.tenant = tenant;
  out.record.name = name;
  out.record.key_id = k.id;
  out.record.sealed = secret_crypto::seal(dk, value, value_aad(tenant, name));
  out.record.set_at = now;
  return out;
}

caf::expected<std::map<std::string, std::string>> secret_keeper::reveal(
    const std::string& tenant, const std::set<std::string>& names) {
  std::map<std::string, std::string> out;
  if (names.empty()) return out;
  if (!current_) return disabled();
  auto stored = read_data_key(db_, tenant);
  if (!stored) return stored.error();
  for (auto& name : names) {
    auto s = read_secret(db_, tenant, name);
    if (!s) return s.error();
    if (!*stored || (*stored)->id != s->key_id)
      return make_error(errc::corrupted, "secrets",
                        "secret " + name + " is sealed under a data key tenant " + tenant +
                            " does not have");
    auto dk = data_key_of(**stored);
    if (!dk) return dk.error();
    auto v = secret_crypto::open(*dk, s->sealed, value_aad(tenant, name));
    if (!v)
      return make_error(errc::corrupted, "secrets", "secret " + name + " does not decrypt");
    out.emplace(name, std::move(*v));
  }
  return out;
}

caf::expected<put_data_keys> secret_keeper::rewrap_all() {
  if (!current_) return disabled();
  auto keys = read_data_keys(db_);
  if (!keys) return keys.error();
  put_data_keys cmd;
  cmd.rotate = true;
  for (auto& k : *keys) {
    auto dk = data_key_of(k);
    if (!dk) return dk.error();
    auto w = k;
    w.kek_check = current_check_;
    w.wrapped = secret_crypto::wrap(*current_, *dk, k.tenant, k.id);
    cmd.keys.push_back(std::move(w));
  }
  return cmd;
}

caf::expected<bool> secret_keeper::exists(const std::string& tenant, const std::string& name) {
  auto s = read_secret(db_, tenant, name);
  if (s) return true;
  if (view(s.error()).code == errc::not_found) return false;
  return s.error();
}

caf::expected<std::vector<secret_record>> secret_keeper::list(const std::string& tenant) {
  return read_secrets(db_, tenant);
}

}  // namespace aisched::storage
