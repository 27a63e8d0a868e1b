// The worker registry; see registry.hpp.
#include "actors/router/registry.hpp"

#include <algorithm>

#include "proto/random.hpp"

namespace aisched::router {

using namespace proto;

worker_entry* worker_registry::find(const std::string& id) {
  for (auto& w : entries_)
    if (w.info.id == id) return &w;
  return nullptr;
}

worker_entry& worker_registry::upsert(proto::worker info, unix_ms now) {
  info.last_heartbeat = now;
  info.credential.clear();
  auto* w = find(info.id);
  if (!w) {
    entries_.push_back({});
    w = &entries_.back();
    w->c.order = next_order_++;
  }
  w->info = std::move(info);
  w->c.id = w->info.id;
  w->c.tenant = w->info.tenant;
  w->c.shared = w->info.shared;
  w->c.labels = w->info.labels;
  w->c.max_load = w->info.max_load;  // 0: a native worker that takes no runs (outbox failed)
  w->c.free_noops = w->info.protocol == worker_protocol::native;
  w->c.status = worker_status::online;
  w->unanswered = w->probing = false;  // a new registration: a new link
  w->draining_itself = w->info.status == worker_status::draining;
  if (w->drained || w->draining_itself) w->c.status = w->info.status = worker_status::draining;
  return *w;
}

bool worker_registry::remove(const std::string& id) {
  auto i = std::find_if(entries_.begin(), entries_.end(),
                        [&](const worker_entry& w) { return w.info.id == id; });
  if (i == entries_.end()) return false;
  entries_.erase(i);
  return true;
}

bool worker_registry::verify(const std::string& id, const std::string& credential) const {
  for (auto& w : entries_) {
    if (w.info.id != id) continue;
    if (w.credential.empty() || credential.size() != w.credential.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < credential.size(); ++i)
      diff |= static_cast<unsigned char>(credential[i] ^ w.credential[i]);
    return diff == 0;
  }
  return false;
}

worker_list worker_registry::list(const std::string& tenant) const {
  worker_list out;
  for (auto& w : entries_) {
    if (!tenant.empty() && !w.c.serves(tenant)) continue;
    auto info = w.info;
    info.load = w.c.load();
    out.items.push_back(std::move(info));
  }
  return out;
}

std::string make_credential() { return proto::random_hex(32); }

}  // namespace aisched::router
