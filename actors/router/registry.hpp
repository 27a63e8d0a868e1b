// The leader's worker registry, pure: who the workers are (native cluster
// members and external HTTP workers), their tenant, labels, capacity and
// status, and the credential each external worker proves itself with. The
// router actor owns one and adds the CAF side (handles, proxies, monitors).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/router/routing.hpp"
#include "proto/interfaces.hpp"

namespace aisched::router {

struct worker_entry {
  proto::worker info;              // as registered; `info.credential` is never set here
  proto::worker_actor handle;      // native workers: the worker actor (monitored)
  proto::worker_proxy_actor proxy;  // only while leading
  candidate c;
  bool drained = false;           // by an operator (POST /workers/{id}/drain)
  bool draining_itself = false;   // the worker said so (it is shutting down)
  /// It left a dispatch unanswered: offline until it answers the leader
  /// (probe_worker), its heartbeats alone are not enough.
  bool unanswered = false;
  bool probing = false;           // that answer is being asked for
  std::string credential;         // external workers: the secret their requests carry
};

class worker_registry {
 public:
  /// The entry of worker `id`, or nullptr.
  worker_entry* find(const std::string& id);

  /// Adds worker `info` or replaces the registration of the same id (keeping
  /// its operator drain and its place in registration order). The caller
  /// retires an old proxy first. Stamps the heartbeat time `now`.
  worker_entry& upsert(proto::worker info, unix_ms now);

  /// Forgets worker `id`; false if unknown.
  bool remove(const std::string& id);

  void clear() { entries_.clear(); }

  /// Whether `credential` is the one issued to external worker `id` (constant
  /// time in the credential's length; an empty credential never matches).
  bool verify(const std::string& id, const std::string& credential) const;

  /// The workers as the API lists them, for `tenant` ("" = all): the workers it
  /// owns plus shared ones, with their current load; credentials left out.
  proto::worker_list list(const std::string& tenant) const;

  std::vector<worker_entry>& entries() { return entries_; }
  const std::vector<worker_entry>& entries() const { return entries_; }

 private:
  std::vector<worker_entry> entries_;
  uint64_t next_order_ = 0;
};

/// A fresh credential: 32 random bytes from the kernel's CSPRNG, as hex.
std::string make_credential();

}  // namespace aisched::router
