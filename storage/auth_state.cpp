// Users, tokens and audit entries in RocksDB; see auth_state.hpp.
#include "storage/auth_state.hpp"

#include <algorithm>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "proto/hex.hpp"
#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

using namespace proto;

namespace {

std::string user_key(const std::string& name) { return std::string(keys::user_prefix) + name; }
std::string token_key(const std::string& id) { return std::string(keys::token_prefix) + id; }
std::string hash_key(const std::string& hash) {
  return std::string(keys::token_hash_prefix) + hash;
}
std::string share_key(const std::string& worker_id) {
  return std::string(keys::share_prefix) + worker_id;
}

std::string audit_prefix(const std::string& tenant) {
  std::string out = tenant;
  out.push_back('\0');
  return out;
}

template <class T>
caf::expected<T> decode_slice(const rocksdb::Slice& s) {
  return decode<T>(std::string_view(s.data(), s.size()));
}

/// Every value under `prefix` in the auth column, decoded as T.
template <class T, class Keep>
caf::expected<std::vector<T>> scan_auth(rocks& db, const std::string& prefix, Keep keep) {
  std::vector<T> out;
  auto it = db.iterate(column::auth);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto x = decode_slice<T>(it->value());
    if (!x) return x.error();
    if (keep(*x)) out.push_back(std::move(*x));
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  return out;
}

}  // namespace

// -- apply ---------------------------------------------------------------------

caf::expected<std::optional<std::string>> auth_applier::read(const std::string& key) {
  if (auto i = overlay_.find(key); i != overlay_.end()) return i->second;
  return db_.get(column::auth, key);
}

void auth_applier::put(const std::string& key, std::string value) {
  batch_.Put(db_.cf(column::auth), key, value);
  overlay_[key] = std::move(value);
}

void auth_applier::erase(const std::string& key) {
  batch_.Delete(db_.cf(column::auth), key);
  overlay_[key] = std::nullopt;
}

caf::expected<bool> auth_applier::any_user() {
  for (auto& [k, v] : overlay_)
    if (k.rfind("u/", 0) == 0 && v) return true;
  auto it = db_.iterate(column::auth);
  for (it->Seek("u/"); it->Valid() && it->key().starts_with("u/"); it->Next()) {
    auto i = overlay_.find(it->key().ToString());
    if (i == overlay_.end() || i->second) return true;  // not deleted in this batch
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  return false;
}

caf::expected<applied> auth_applier::apply(const put_user& c) {
  if (c.bootstrap) {
    auto any = any_user();
    if (!any) return any.error();
    if (*any) return applied{};  // someone else bootstrapped first: nothing to do
  }
  auto cur = read(user_key(c.u.name));
  if (!cur) return cur.error();
  if (*cur)
    return make_error(errc::already_exists, "name", "user " + c.u.name + " already exists");
  put(user_key(c.u.name), encode(c.u));
  return applied{};
}

caf::expected<applied> auth_applier::apply(const delete_user& c) {
  auto cur = read(user_key(c.name));
  if (!cur) return cur.error();
  auto missing = make_error(errc::not_found, "name", "user " + c.name + " does not exist");
  if (!*cur) return missing;
  auto u = decode<user>(**cur);
  if (!u) return u.error();
  if (!c.tenant.empty() && u->tenant != c.tenant) return missing;  // ids don't leak
  erase(user_key(c.name));
  return applied{};
}

caf::expected<applied> auth_applier::apply(const put_token& c) {
  auto cur = read(token_key(c.t.id));
  if (!cur) return cur.error();
  if (*cur) return make_error(errc::already_exists, "id", "token " + c.t.id + " already exists");
  put(token_key(c.t.id), encode(c.t));
  put(hash_key(c.t.hash), c.t.id);
  return applied{};
}

caf::expected<applied> auth_applier::apply(const share_worker& c) {
  if (c.shared) put(share_key(c.worker_id), c.tenant);
  else erase(share_key(c.worker_id));
  return applied{};
}

caf::expected<applied> auth_applier::apply(const delete_token& c) {
  auto cur = read(token_key(c.id));
  if (!cur) return cur.error();
  auto missing = make_error(errc::not_found, "id", "token " + c.id + " does not exist");
  if (!*cur) return missing;
  auto t = decode<api_token>(**cur);
  if (!t) return t.error();
  if (!c.tenant.empty() && t->tenant != c.tenant) return missing;
  erase(token_key(c.id));
  erase(hash_key(t->hash));
  return applied{};
}

caf::expected<applied> auth_applier::apply(const record_audit& c, uint64_t index) {
  for (uint32_t i = 0; i < c.entries.size(); ++i) {
    const auto& e = c.entries[i];
    auto value = encode(e);
    for (auto log : {std::string_view(e.tenant), cluster_audit_log}) {
      auto key = audit_prefix(std::string(log));
      keys::put_u64(key, index);
      keys::put_u32(key, i);
      batch_.Put(db_.cf(column::audit), key, value);
      if (!is_cluster_action(e.action)) break;  // tenant actions: the tenant's log only
    }
  }
  return applied{};
}

// -- reads ---------------------------------------------------------------------

caf::expected<user> read_user(rocks& db, const std::string& name) {
  auto raw = db.get(column::auth, user_key(name));
  if (!raw) return raw.error();
  if (!*raw) return make_error(errc::not_found, "name", "user " + name + " does not exist");
  return decode<user>(**raw);
}

caf::expected<user_list> read_users(rocks& db, const std::string& tenant) {
  auto xs = scan_auth<user>(db, "u/", [&](const user& u) {
    return tenant.empty() || u.tenant == tenant;
  });
  if (!xs) return xs.error();
  return user_list{std::move(*xs)};
}

caf::expected<api_token> read_token_by_hash(rocks& db, const std::string& sha256_hex) {
  auto missing = make_error(errc::not_found, "token", "no such token");
  auto id = db.get(column::auth, hash_key(sha256_hex));
  if (!id) return id.error();
  if (!*id) return missing;
  auto raw = db.get(column::auth, token_key(**id));
  if (!raw) return raw.error();
  if (!*raw) return missing;
  return decode<api_token>(**raw);
}

caf::expected<token_list> read_tokens(rocks& db, const std::string& tenant) {
  auto xs = scan_auth<api_token>(db, "t/", [&](const api_token& t) {
    return tenant.empty() || t.tenant == tenant;
  });
  if (!xs) return xs.error();
  return token_list{std::move(*xs)};
}

caf::expected<std::string> read_worker_share(rocks& db, const std::string& id) {
  auto v = db.get(column::auth, share_key(id));
  if (!v) return v.error();
  return *v ? **v : std::string();
}

caf::expected<audit_page> read_audit(rocks& db, const audit_query& q) {
  audit_page page;
  auto prefix = audit_prefix(q.tenant);
  std::string start = prefix + std::string(12, '\xff');
  bool skip_cursor = false;
  if (!q.cursor.empty()) {
    auto c = proto::from_hex(q.cursor);
    if (!c || c->rfind(prefix, 0) != 0)
      return make_error(errc::invalid_argument, "cursor", "malformed cursor");
    start = *c;
    skip_cursor = true;
  }
  auto limit = std::max<uint32_t>(1, std::min<uint32_t>(q.limit, 1000));
  auto it = db.iterate(column::audit);
  std::string last_key;
  it->SeekForPrev(start);
  if (skip_cursor && it->Valid() && it->key().ToString() == start) it->Prev();
  for (; it->Valid() && it->key().starts_with(prefix); it->Prev()) {
    auto e = decode_slice<audit_entry>(it->value());
    if (!e) return e.error();
    if (q.since != 0 && e->at < q.since) return page;  // older entries follow: done
    if (page.items.size() == limit) {
      page.next_cursor = proto::to_hex(last_key);
      break;
    }
    page.items.push_back(std::move(*e));
    last_key = it->key().ToString();
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  return page;
}

}  // namespace aisched::storage
