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

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

void report_route(const api_context& ctx, const std::string& id, http_request& req,
                  reply_fn& reply) {
  auto body = parse_json(req.body);
  if (!body) return reply(error_response(body.error()));
  if (!body->is_object())
    return reply(error_response(make_error(errc::invalid_argument, "body", "expected an object")));
  run_result r;
  r.instance_id = id;
  for (auto& kv : body->as_object()) {
    std::string k(kv.key());
    auto& v = kv.value();
    auto bad = [&](const char* what) {
      return make_error(errc::invalid_argument, k, k + ": " + what);
    };
    if (k == "worker_id" && v.is_string()) r.worker_id = std::string(v.as_string());
    else if (k == "state" && v.is_string()) {
      auto st = parse_enum<instance_state>(v.as_string());
      if (!st || (*st != instance_state::running && *st != instance_state::success &&
                  *st != instance_state::failed && *st != instance_state::timed_out))
        return reply(error_response(bad("one of running, success, failed, timed_out")));
      r.state = *st;
    } else if (k == "exit_code" && v.is_int64()) r.exit_code = static_cast<int32_t>(v.as_int64());
    else if (k == "attempt" && v.is_int64() && v.as_int64() >= 0 && v.as_int64() < 1'000'000)
      r.attempt = static_cast<uint32_t>(v.as_int64());
    else if (k == "output" && v.is_string()) r.output = std::string(v.as_string()).substr(0, 64 * 1024);
    else if (k == "error" && v.is_string()) r.error = std::string(v.as_string());
    else if ((k == "started_at" || k == "finished_at") && (v.is_string() || v.is_null())) {
      unix_ms t = 0;
      if (v.is_string()) {
        auto p = parse_rfc3339(v.as_string());
        if (!p) return reply(error_response(bad("an RFC 3339 time")));
        t = *p;
      }
      (k == "started_at" ? r.started_at : r.finished_at) = t;
    } else if (k == "worker_id" || k == "state" || k == "exit_code" || k == "output" ||
               k == "error" || k == "attempt") {
      return reply(error_response(bad("wrong type")));
    } else {
      return reply(error_response(bad("unknown field")));
    }
  }
  for (auto field : {"state", "worker_id", "attempt"})
    if (!body->as_object().contains(field))
      return reply(error_response(
          make_error(errc::invalid_argument, field, std::string(field) + ": required")));
  auto cred = req.headers.find("x-worker-credential");
  if (cred == req.headers.end() || cred->second.empty())
    return reply(error_response(make_error(errc::forbidden, "X-Worker-Credential",
                                           "a report needs the worker's credential (header "
                                           "X-Worker-Credential, issued at registration)")));
  auto credential = cred->second;
  auto tenant = req.who.tenant;
  ctx.sys->spawn([=](caf::event_based_actor* self) {
    auto commit = [=] {
      self->request(ctx.router, ctx.timeout, report_atom::value, r, credential)
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
        .then([=](instance&) { commit(); }, [=](caf::error& e) { reply(error_response(e)); });
  });
}

void report_instance(route_call& c) { report_route(c.ctx, c.param(), c.req, c.reply); }

}  // namespace aisched::gateway
