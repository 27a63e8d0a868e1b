// Secret records in RocksDB; see secret_store.hpp.
#include "storage/secret_store.hpp"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

using namespace proto;

namespace {

// Prefixes of the auth column no other record uses (storage/keys.hpp).
std::string data_key_key(const std::string& tenant) {
  return std::string(keys::data_key_prefix) + tenant;
}
std::string secrets_of(const std::string& tenant) {
  return std::string(keys::secret_prefix) + tenant + "/";
}
std::string secret_key(const std::string& tenant, const std::string& name) {
  return secrets_of(tenant) + name;
}

caf::error missing_secret(const std::string& name) {
  return make_error(errc::not_found, "name", "secret " + name + " does not exist");
}

template <class T>
caf::expected<std::vector<T>> scan(rocks& db, const std::string& prefix) {
  std::vector<T> out;
  auto it = db.iterate(column::auth);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto x = decode<T>(std::string_view(it->value().data(), it->value().size()));
    if (!x) return x.error();
    out.push_back(std::move(*x));
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  return out;
}

}  // namespace

// -- apply ---------------------------------------------------------------------

caf::expected<std::optional<std::string>> secret_applier::read(const std::string& key) {
  if (auto i = overlay_.find(key); i != overlay_.end()) return i->second;
  return db_.get(column::auth, key);
}

void secret_applier::put(const std::string& key, std::string value) {
  batch_.Put(db_.cf(column::auth), key, value);
  overlay_[key] = std::move(value);
}

void secret_applier::erase(const std::string& key) {
  batch_.Delete(db_.cf(column::auth), key);
  overlay_[key] = std::nullopt;
}

caf::expected<applied> secret_applier::apply(const put_data_keys& c) {
  // Check every key first: the command applies whole or not at all.
  for (auto& k : c.keys) {
    auto cur = read(data_key_key(k.tenant));
    if (!cur) return cur.error();
    if (!c.rotate && *cur)
      return make_error(errc::already_exists, "tenant",
                        "tenant " + k.tenant + " already has a data key");
    if (c.rotate) {
      if (!*cur)
        return make_error(errc::not_found, "tenant", "tenant " + k.tenant + " has no data key");
      auto old = decode<data_key>(**cur);
      if (!old) return old.error();
      if (old->id != k.id)
        return make_error(errc::version_conflict, "tenant",
                          "the data key of tenant " + k.tenant + " changed; rotate again");
    }
  }
  for (auto& k : c.keys) put(data_key_key(k.tenant), encode(k));
  return applied{};
}

caf::expected<applied> secret_applier::apply(const put_secret& c) {
  auto dk = read(data_key_key(c.s.tenant));
  if (!dk) return dk.error();
  std::optional<data_key> key;
  if (*dk) {
    auto k = decode<data_key>(**dk);
    if (!k) return k.error();
    key = std::move(*k);
  }
  if (!key || key->id != c.s.key_id)
    return make_error(errc::version_conflict, "value",
                      "the value was sealed under another data key of tenant " + c.s.tenant +
                          "; set it again");
  auto cur = read(secret_key(c.s.tenant, c.s.name));
  if (!cur) return cur.error();
  auto s = c.s;
  s.version = 1;
  s.created_at = c.s.set_at;
  if (*cur) {
    auto old = decode<secret_record>(**cur);
    if (!old) return old.error();
    s.version = old->version + 1;
    s.created_at = old->created_at;
  }
  put(secret_key(s.tenant, s.name), encode(s));
  return applied{};
}

caf::expected<applied> secret_applier::apply(const delete_secret& c) {
  auto key = secret_key(c.tenant, c.name);
  auto cur = read(key);
  if (!cur) return cur.error();
  if (!*cur) return missing_secret(c.name);
  erase(key);
  return applied{};
}

// -- reads ---------------------------------------------------------------------

caf::expected<std::optional<data_key>> read_data_key(rocks& db, const std::string& tenant) {
  auto raw = db.get(column::auth, data_key_key(tenant));
  if (!raw) return raw.error();
  if (!*raw) return std::optional<data_key>{};
  auto k = decode<data_key>(**raw);
  if (!k) return k.error();
  return std::optional<data_key>{std::move(*k)};
}

caf::expected<std::vector<data_key>> read_data_keys(rocks& db) {
  return scan<data_key>(db, std::string(keys::data_key_prefix));
}

caf::expected<secret_record> read_secret(rocks& db, const std::string& tenant,
                                         const std::string& name) {
  auto raw = db.get(column::auth, secret_key(tenant, name));
  if (!raw) return raw.error();
  if (!*raw) return missing_secret(name);
  return decode<secret_record>(**raw);
}

caf::expected<std::vector<secret_record>> read_secrets(rocks& db, const std::string& tenant) {
  auto xs = scan<secret_record>(db, secrets_of(tenant));
  if (!xs) return xs.error();
  for (auto& x : *xs) x.sealed.clear();
  return xs;
}

}  // namespace aisched::storage
