// The gate every REST request passes before its route: resolves the caller
// from the `Authorization: Bearer` header only (JWTs checked locally, API
// tokens looked up in the store actor behind a 2 s cache), checks the matched
// row of the route table (gateway/route_table.hpp), calls its handler, and
// records each mutation's outcome in the audit log. Audit entries go to a recorder actor that batches them into
// `record_audit` proposals to the raft actor (a few ms apart), so a burst of
// writes costs a few extra log entries, not one synced write per request.
#pragma once

#include <memory>

#include <caf/actor.hpp>

#include "gateway/api.hpp"
#include "gateway/auth.hpp"
#include "gateway/route_table.hpp"

namespace aisched::gateway {

class access {
 public:
  /// Spawns the audit recorder in `ctx.sys`.
  explicit access(api_context ctx);
  ~access();

  /// Resolves and checks the caller of `req` against row `r` (matched with
  /// `params`), then calls `r.handler` with `req.who` set and, for a mutation,
  /// a reply that records its audit entry. Answers 401 / 403 (or 503 when the
  /// store does not answer) itself. `r` must outlive the call (table rows do).
  /// Thread-safe.
  void admit(const route& r, path_params params, http_request req, reply_fn reply);

  /// Queues one audit entry (stamped with this node). Thread-safe.
  void record(proto::audit_entry e);

  const api_context& ctx() const { return ctx_; }

  /// Forgets cached API tokens (after a revocation on this node).
  void forget_tokens();

 private:
  struct token_cache;
  void resolve_token(const std::string& secret,
                     std::function<void(caf::expected<principal>)> done);
  void proceed(const route& r, const path_params& params, http_request req, reply_fn reply,
               principal who);

  api_context ctx_;
  caf::actor recorder_;
  std::shared_ptr<token_cache> cache_;
};

/// Calls `then` with the id the cluster knows worker `id` of `tenant` by
/// (proto::scoped_worker_id; a cluster member's worker keeps its own) if it is
/// registered in `tenant`, or, with `allow_missing`, if it is not; otherwise
/// answers 404. Worker ids are scoped by tenant: another tenant's worker of
/// the same id is as invisible as a missing one and never stops `tenant` from
/// registering its own. With auth off (one tenant) it calls `then` at once.
void with_own_worker(const api_context& ctx, const std::string& tenant, const std::string& id,
                     reply_fn reply, std::function<void(const std::string&)> then,
                     bool allow_missing = false);

}  // namespace aisched::gateway
