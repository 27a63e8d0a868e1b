// Pools and calendars in RocksDB; see controls_state.hpp.
#include "storage/controls_state.hpp"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

using namespace proto;

namespace {

std::string key_of(char kind, const std::string& tenant, const std::string& name) {
  std::string k{kind, '/'};
  k += tenant;
  k.push_back('\0');
  k += name;
  return k;
}

std::string prefix_of(char kind, const std::string& tenant) {
  std::string k{kind, '/'};
  if (!tenant.empty()) {
    k += tenant;
    k.push_back('\0');
  }
  return k;
}

template <class T>
caf::error scan(rocks& db, const std::string& prefix, std::vector<T>& out) {
  auto it = db.iterate(column::controls);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto x = decode<T>(std::string_view(it->value().data(), it->value().size()));
    if (!x) return x.error();
    out.push_back(std::move(*x));
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  return {};
}

}  // namespace

caf::expected<std::optional<std::string>> controls_applier::read(const std::string& key) {
  if (auto i = overlay_.find(key); i != overlay_.end()) return i->second;
  return db_.get(column::controls, key);
}

void controls_applier::put(const std::string& key, std::string value) {
  batch_.Put(db_.cf(column::controls), key, value);
  overlay_[key] = std::move(value);
}

caf::expected<applied> controls_applier::apply(const put_pool& c) {
  if (auto err = validate_control_name(c.p.name)) return err;
  put(key_of(keys::pool_kind, c.p.tenant, c.p.name), encode(c.p));
  applied out;
  out.pools.push_back(c.p);
  return out;
}

caf::expected<applied> controls_applier::apply(const put_calendar& c) {
  if (auto err = validate_control_name(c.c.name)) return err;
  put(key_of(keys::calendar_kind, c.c.tenant, c.c.name), encode(c.c));
  applied out;
  out.calendars.push_back(c.c);
  return out;
}

caf::expected<applied> controls_applier::apply(const delete_calendar& c,
                                               const std::vector<task>& users) {
  auto key = key_of(keys::calendar_kind, c.tenant, c.name);
  auto cur = read(key);
  if (!cur) return cur.error();
  if (!*cur)
    return make_error(errc::not_found, "name", "calendar '" + c.name + "' does not exist");
  if (!users.empty()) {
    std::string ids;
    for (auto& t : users) ids += (ids.empty() ? "" : ", ") + std::to_string(t.id);
    return make_error(errc::has_dependents, "name",
                      "calendar '" + c.name + "' is excluded by tasks " + ids +
                          " (clear their exclude_calendar first)");
  }
  batch_.Delete(db_.cf(column::controls), key);
  overlay_[key] = std::nullopt;
  applied out;
  calendar gone;
  gone.tenant = c.tenant;
  gone.name = c.name;
  out.deleted_calendars.push_back(std::move(gone));
  return out;
}

caf::error controls_applier::check_refs(const task& t) {
  auto exists = [&](char kind, const std::string& name) -> caf::expected<bool> {
    auto v = read(key_of(kind, t.tenant, name));
    if (!v) return v.error();
    return v->has_value();
  };
  if (!t.pool.empty()) {
    auto ok = exists(keys::pool_kind, t.pool);
    if (!ok) return ok.error();
    if (!*ok)
      return make_error(errc::invalid_argument, "pool",
                        "pool: '" + t.pool + "' does not exist (create it with PUT /api/v1/pools/" +
                            t.pool + ")");
  }
  if (!t.exclude_calendar.empty()) {
    auto ok = exists(keys::calendar_kind, t.exclude_calendar);
    if (!ok) return ok.error();
    if (!*ok)
      return make_error(errc::invalid_argument, "exclude_calendar",
                        "exclude_calendar: '" + t.exclude_calendar +
                            "' does not exist (create it with PUT /api/v1/calendars/" +
                            t.exclude_calendar + ")");
  }
  return {};
}

caf::expected<controls> read_controls(rocks& db, const std::string& tenant) {
  controls out;
  if (auto err = scan(db, prefix_of(keys::pool_kind, tenant), out.pools)) return err;
  if (auto err = scan(db, prefix_of(keys::calendar_kind, tenant), out.calendars)) return err;
  return out;
}

}  // namespace aisched::storage
