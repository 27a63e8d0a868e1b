// Liveness and readiness routes; see health_route.hpp.
#include "gateway/health_route.hpp"

#include <chrono>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "proto/errors.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

/// A raft actor that does not answer this fast is as good as absent for a
/// load balancer's probe.
constexpr auto raft_timeout = std::chrono::seconds(1);

json::value readiness(const std::string& node_id, const raft_status* s, const std::string& raft_err,
                      const std::string& storage_problem, const std::string& backup_problem,
                      json::array& reasons) {
  if (!storage_problem.empty()) reasons.push_back(json::string("storage: " + storage_problem));
  if (!s)
    reasons.push_back(json::string("raft: " + raft_err));
  else if (s->leader_id.empty())
    reasons.push_back(json::string("raft: no leader is known (an election may be running, or "
                                   "this member cannot reach a majority)"));
  if (!backup_problem.empty()) reasons.push_back(json::string("backup: " + backup_problem));
  json::object o;
  if (!reasons.empty()) {  // the error envelope every 4xx/5xx answer carries
    std::string why;
    for (auto& r : reasons) why += (why.empty() ? "" : "; ") + std::string(r.as_string());
    o["error"] = json::object{{"code", "unavailable"}, {"message", "not ready: " + why}, {"field", ""}};
  }
  o["ready"] = reasons.empty();
  o["reasons"] = reasons;
  o["node_id"] = node_id;
  o["storage"] = storage_problem.empty() ? "ok" : "failing";
  o["leader"] = s ? s->leader_id : "";
  o["leading"] = s && !s->leader_id.empty() && s->leader_id == s->node_id;
  o["role"] = s ? s->role : "";
  return o;
}

}  // namespace

void healthz(reply_fn reply) { reply(json_response(200, json::object{{"status", "ok"}})); }

void readyz(const api_context& ctx, reply_fn reply) {
  auto storage_problem = [ctx] { return ctx.storage_problem ? ctx.storage_problem() : ""; };
  auto backup_problem = [ctx] { return ctx.backup_problem ? ctx.backup_problem() : ""; };
  ctx.sys->spawn([ctx, reply, storage_problem, backup_problem](caf::event_based_actor* self) {
    self->request(ctx.raft, raft_timeout, raft_status_atom::value)
        .then(
            [=](raft_status& s) {
              json::array reasons;
              auto body =
                  readiness(ctx.node_id, &s, "", storage_problem(), backup_problem(), reasons);
              reply(json_response(reasons.empty() ? 200 : 503, body));
            },
            [=](caf::error& e) {
              json::array reasons;
              auto body = readiness(ctx.node_id, nullptr, "no answer (" + view(e).message + ")",
                                    storage_problem(), backup_problem(), reasons);
              reply(json_response(503, body));
            });
  });
}

}  // namespace aisched::gateway
