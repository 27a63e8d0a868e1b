// POST /api/v1/instances/{id}/report: an external worker's report on a run of
// the caller's tenant. The worker proves who it is with the credential it was
// issued at registration (header X-Worker-Credential); the leader's router
// checks it and commits a report_results command for the attempt it names.
#include "gateway/report_route.hpp"

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "proto/errors.hpp"
#include "proto/json.hpp"
#include "proto/json_wire.hpp"
#include "proto/worker_id.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

void report_route(const api_context& ctx, const std::string& id, http_request& req,
                  reply_fn& reply) {
  auto body = parse_json(req.body);
  if (!body) return reply(error_response(body.error()));
  run_result base;
  base.instance_id = id;
  auto parsed = run_result_from_json(*body, std::move(base));
  if (!parsed) return reply(error_response(parsed.error()));
  auto r = std::move(*parsed);
  auto cred = req.headers.find("x-worker-credential");
  if (cred == req.headers.end() || cred->second.empty())
    return reply(error_response(make_error(errc::forbidden, "X-Worker-Credential",
                                           "a report needs the worker's credential (header "
                                           "X-Worker-Credential, issued at registration)")));
  auto credential = cred->second;
  auto tenant = req.who.tenant;
  ctx.sys->spawn([=](caf::event_based_actor* self) {
    auto commit = [=](run_result report) {
      self->request(ctx.router, ctx.timeout, report_atom::value, std::move(report), credential)
          .then([=](applied&) { reply(json_response(200, json::object{{"status", "accepted"}})); },
                [=](caf::error& e) {
                  auto err = view(e);
                  // Another worker's or another attempt's report: refused, the
                  // run's record stands.
                  if (err.code == errc::illegal_transition && err.field == "worker_id")
                    return reply(error_response(
                        make_error(errc::version_conflict, "worker_id", err.message)));
                  // A report for a run that already ended is acknowledged, changing nothing.
                  if (err.code == errc::illegal_transition)
                    return reply(json_response(
                        200, json::object{{"status", "ignored"}, {"reason", err.message}}));
                  reply(error_response(e));
                });
    };
    // Only a run of the caller's tenant: 404 otherwise, like any other read.
    self->request(ctx.store, ctx.timeout, get_instance_atom::value, tenant, id)
        .then(
            [=](instance& x) {
              // The worker names itself as its tenant does; the registry knows
              // it scoped (proto::scoped_worker_id), and checks its credential
              // so: the run's worker (perhaps another tenant's, shared) or one
              // of the run's tenant.
              auto named = r;
              auto at = x.worker_id.rfind('@');
              if (at != std::string::npos && x.worker_id.compare(0, at, r.worker_id) == 0)
                named.worker_id = x.worker_id;
              else if (r.worker_id != x.worker_id)
                named.worker_id = scoped_worker_id(tenant, r.worker_id);
              commit(std::move(named));
            },
            [=](caf::error& e) { reply(error_response(e)); });
  });
}

void report_instance(route_call& c) { report_route(c.ctx, c.param(), c.req, c.reply); }

}  // namespace aisched::gateway
