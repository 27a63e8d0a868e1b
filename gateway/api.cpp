// The REST entry, node, run and worker handlers; see api.hpp.
#include "gateway/api.hpp"

#include <boost/json.hpp>

#include "actors/trigger/exclusion.hpp"
#include "actors/trigger/schedule.hpp"
#include "common/clock.hpp"
#include "gateway/access.hpp"
#include "gateway/ask.hpp"
#include "gateway/health_route.hpp"
#include "gateway/openapi.hpp"
#include "gateway/output_stream.hpp"
#include "proto/json.hpp"
#include "proto/json_wire.hpp"
#include "proto/validate.hpp"
#include "proto/worker_id.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

/// Reads the optional RFC 3339 query parameter `name` into `out`.
caf::error read_time(const http_request& req, const char* name, unix_ms& out) {
  auto i = req.query.find(name);
  if (i == req.query.end()) return {};
  auto t = parse_rfc3339(i->second);
  if (!t || *t <= 0)
    return make_error(errc::invalid_argument, name,
                      std::string(name) + " must be an RFC 3339 time, e.g. 2026-01-31T03:00:00Z");
  out = *t;
  return {};
}

json::value page_json(const instance_page& p) {
  json::array items;
  for (auto& x : p.items) items.push_back(to_json(x));
  json::object o;
  o["items"] = std::move(items);
  o["next_cursor"] = p.next_cursor;
  return o;
}

/// Asks the router `atom` about worker {id} of the caller's tenant (404
/// otherwise), naming it by its scoped id, then the rest of `xs`.
template <class Result, class OnOk, class Atom, class... Ts>
void ask_own_worker(route_call& c, OnOk on_ok, Atom atom, Ts... xs) {
  auto ctx = c.ctx;
  auto reply = c.reply;
  with_own_worker(ctx, c.req.who.tenant, c.param(), reply,
                  [ctx, reply, on_ok, atom, xs...](const std::string& id) {
                    ask<Result>(ctx, ctx.router, reply, on_ok, atom, id, xs...);
                  });
}

void set_drained(route_call& c, bool drained) {
  ask_own_worker<worker>(
      c, [](worker& w) { return json_response(200, to_json(w)); }, drain_atom::value, drained);
}

/// Answers every request: the matched row's handler behind the gate, or 404 / 405.
class api {
 public:
  explicit api(api_context ctx) : gate_(std::make_shared<access>(std::move(ctx))) {}

  void operator()(http_request req, reply_fn reply) {
    auto m = match_route(req.method, req.path);
    if (m.r) return gate_->admit(*m.r, std::move(m.params), std::move(req), std::move(reply));
    if (!m.allow.empty()) return reply(method_not_allowed(m.allow));
    reply(error_response(
        make_error(errc::not_found, "", "no route for " + req.method + " " + req.path)));
  }

 private:
  std::shared_ptr<access> gate_;
};

}  // namespace

/// Checks a task beyond structure: its schedule and time zone parse, and it can fire
/// (a task that would never fire is refused rather than accepted as a silent no-op).
caf::error validate_full(const task& t, unix_ms now, const task* stored) {
  if (auto err = validate_task(t)) return err;
  auto s = trigger::schedule::parse(t.schedule.empty() ? "@every 1h" : t.schedule, t.timezone);
  if (!s) return s.error();  // the placeholder checks the zone alone
  // What the request changes is checked against the clock; what it keeps is not, so an
  // edit of a task whose one-shot or window has passed is still accepted.
  const auto changed = [&](auto member) { return stored == nullptr || t.*member != stored->*member; };
  if (t.at != 0 && t.at <= now && changed(&task::at))
    return make_error(errc::invalid_argument, "at",
                      "at: " + format_rfc3339(t.at) + " is in the past; the task would never fire");
  if (t.schedule.empty()) return {};
  // The cron search spans 41 years: no instant at all means no date ever matches.
  if (!s->next_after(now))
    return make_error(errc::invalid_argument, "schedule",
                      "schedule: '" + t.schedule + "' never fires (no date matches it)");
  const bool window_changed = changed(&task::schedule) || changed(&task::timezone) ||
                              changed(&task::start_at) || changed(&task::end_at);
  if (t.end_at != 0 && window_changed && s->next_n(now, 1, t.start_at, t.end_at).empty())
    return make_error(errc::invalid_argument, "end_at",
                      "end_at: the schedule has no fire time before " + format_rfc3339(t.end_at));
  return {};
}

json::value task_view(const task& t, const calendar* excluded) {
  auto v = to_json(t);
  json::array next;
  if (!t.paused) {
    auto now = system_now_ms();
    auto skip = excluded ? trigger::exclusion{*excluded, t.timezone} : trigger::exclusion{};
    std::vector<unix_ms> times;
    if (!t.schedule.empty()) {
      if (auto s = trigger::schedule::parse(t.schedule, t.timezone))
        times = skip.next_n(*s, now, 5, t.start_at, t.end_at);
    } else if (t.at != 0 && t.at > now && !skip.excludes(t.at)) {
      times.push_back(t.at);
    }
    for (auto x : times) next.push_back(json::string(format_rfc3339(x)));
  }
  v.as_object()["next_fire_times"] = std::move(next);
  return v;
}

// -- the node ----------------------------------------------------------------------

void get_health(route_call& c) { healthz(c.reply); }

void get_ready(route_call& c) { readyz(c.ctx, c.reply); }

void get_version(route_call& c) {
  c.reply(json_response(
      200, json::object{{"version", AISCHED_VERSION}, {"node_id", c.ctx.node_id}}));
}

void get_openapi(route_call& c) {
  c.reply(http_response{200, std::string(openapi_document()), "application/json"});
}

void get_backpressure(route_call& c) {
  ask<pressure_status>(
      c.ctx, c.ctx.backpressure, c.reply,
      [](pressure_status& p) {
        static const char* levels[] = {"green", "yellow", "red"};
        return json_response(200,
                             json::object{{"state", levels[static_cast<int>(p.current.level)]},
                                          {"delay", format_duration(p.current.delay)},
                                          {"backlog", p.backlog},
                                          {"max_backlog", p.max_backlog},
                                          {"worker_load", p.worker_load},
                                          {"leading", p.leading}});
      },
      pressure_status_atom::value);
}

void next_fire_times(route_call& c) {
  auto& req = c.req;
  auto& reply = c.reply;
  auto expr = req.query.count("cron") ? req.query["cron"] : req.query["schedule"];
  if (expr.empty())
    return reply(error_response(
        make_error(errc::invalid_argument, "cron", "query parameter 'cron' is required")));
  auto tz = req.query.count("tz") ? req.query["tz"] : "UTC";
  unix_ms after = system_now_ms();
  if (auto i = req.query.find("after"); i != req.query.end()) {
    auto t = parse_rfc3339(i->second);
    if (!t)
      return reply(error_response(
          make_error(errc::invalid_argument, "after", "after must be an RFC 3339 time")));
    after = *t;
  }
  uint32_t n = 10;
  if (auto i = req.query.find("n"); i != req.query.end()) {
    auto v = parse_u64(i->second);
    if (!v || *v < 1 || *v > 1000)
      return reply(error_response(
          make_error(errc::invalid_argument, "n", "n must be between 1 and 1000")));
    n = static_cast<uint32_t>(*v);
  }
  unix_ms end_at = 0;  // a task's end_at: the preview stops where the task would
  if (auto i = req.query.find("end_at"); i != req.query.end()) {
    auto t = parse_rfc3339(i->second);
    if (!t || *t <= 0)
      return reply(error_response(
          make_error(errc::invalid_argument, "end_at", "end_at must be an RFC 3339 time")));
    end_at = *t;
  }
  auto s = trigger::schedule::parse(expr, tz);
  if (!s) return reply(error_response(s.error()));
  auto answer = [s = *s, tz, after, n, end_at](const calendar* cal) {
    auto skip = cal ? trigger::exclusion{*cal, tz} : trigger::exclusion{};
    json::array times;
    for (auto t : skip.next_n(s, after, n, 0, end_at))
      times.push_back(json::string(format_rfc3339(t)));
    return json_response(200, json::object{{"times", std::move(times)}});
  };
  auto cal = req.query.find("calendar");
  if (cal == req.query.end() || cal->second.empty()) return reply(answer(nullptr));
  // A task's exclude_calendar: the preview skips its dates, as the task would.
  if (auto err = validate_control_name(cal->second, "calendar")) return reply(error_response(err));
  auto name = cal->second;
  ask<controls>(
      c.ctx, c.ctx.store, reply,
      [answer, name](controls& x) {
        for (auto& cal : x.calendars)
          if (cal.name == name) return answer(&cal);
        return error_response(make_error(errc::invalid_argument, "calendar",
                                         "calendar: '" + name + "' does not exist"));
      },
      controls_atom::value, req.who.tenant);
}

// -- runs --------------------------------------------------------------------------

void list_instances(route_call& c) {
  auto& req = c.req;
  auto& reply = c.reply;
  instance_query q;
  q.tenant = req.who.tenant;
  if (auto i = req.query.find("task_id"); i != req.query.end()) {
    auto id = parse_u64(i->second);
    if (!id)
      return reply(error_response(
          make_error(errc::invalid_argument, "task_id", "task_id must be an integer")));
    q.task_id = *id;
  }
  if (auto i = req.query.find("state"); i != req.query.end()) {
    auto s = parse_enum<instance_state>(i->second);
    if (!s)
      return reply(error_response(make_error(errc::invalid_argument, "state",
                                             "unknown state '" + i->second + "'")));
    q.by_state = true;
    q.state = *s;
  }
  if (auto err = read_time(req, "since", q.since)) return reply(error_response(err));
  if (auto err = read_time(req, "until", q.until)) return reply(error_response(err));
  if (q.since != 0 && q.until != 0 && q.until <= q.since)
    return reply(error_response(
        make_error(errc::invalid_argument, "until", "until must be after since")));
  if (auto err = read_limit(req, q.limit)) return reply(error_response(err));
  if (auto i = req.query.find("cursor"); i != req.query.end()) q.cursor = i->second;
  ask<instance_page>(c.ctx, c.ctx.store, reply,
                     [](instance_page& p) { return json_response(200, page_json(p)); },
                     list_instances_atom::value, q);
}

void get_instance(route_call& c) {
  ask<instance>(c.ctx, c.ctx.store, c.reply,
                [](instance& x) { return json_response(200, to_json(x)); },
                get_instance_atom::value, c.req.who.tenant, c.param());
}

void cancel_instance(route_call& c) {
  cancel cmd{c.req.who.tenant, c.param(), system_now_ms(), "cancelled by request"};
  propose(c.ctx, command{std::move(cmd)}, c.reply,
          [](applied& a) { return json_response(200, to_json(a.instances.at(0))); });
}

void retry_instance_route(route_call& c) {
  proto::retry_instance cmd{c.req.who.tenant, c.param(), system_now_ms()};
  propose(c.ctx, command{std::move(cmd)}, c.reply,
          [](applied& a) { return json_response(200, to_json(a.instances.at(0))); });
}

void get_instance_attempts(route_call& c) {
  ask<attempt_list>(c.ctx, c.ctx.store, c.reply,
                    [](attempt_list& a) { return json_response(200, to_json(a)); },
                    attempts_atom::value, c.req.who.tenant, c.param());
}

void get_instance_output(route_call& c) {
  auto f = c.req.query.find("follow");
  if (f != c.req.query.end() && (f->second == "true" || f->second == "1"))
    return follow_output(c.ctx, c.req.who.tenant, c.param(), c.reply);
  ask<instance>(c.ctx, c.ctx.store, c.reply,
                [](instance& x) {
                  return json_response(200, json::object{{"instance_id", x.id},
                                                         {"state", std::string(name_of(x.state))},
                                                         {"output", x.output}});
                },
                get_instance_atom::value, c.req.who.tenant, c.param());
}

// -- workers -----------------------------------------------------------------------

void list_workers(route_call& c) {
  ask<worker_list>(c.ctx, c.ctx.router, c.reply,
                   [tenant = c.req.who.tenant](worker_list& l) {
                     json::array items;
                     for (auto& w : l.items)
                       if (w.tenant == tenant) items.push_back(to_json(w));
                     return json_response(200, json::object{{"items", std::move(items)}});
                   },
                   list_workers_atom::value);
}

void register_worker(route_call& c) {
  auto body = parse_json(c.req.body);
  if (!body) return c.reply(error_response(body.error()));
  worker base;
  base.protocol = worker_protocol::http;
  auto w = worker_from_json(*body, base);
  if (!w) return c.reply(error_response(w.error()));
  w->tenant = c.req.who.tenant;
  if (auto err = validate_worker(*w)) return c.reply(error_response(err));
  auto ctx = c.ctx;
  auto reply = c.reply;
  with_own_worker(ctx, c.req.who.tenant, w->id, reply, [ctx, reply, w = *w](auto& scoped) mutable {
    // Shared with every tenant only if the cluster admin marked this id of this tenant.
    ctx.sys->spawn([ctx, reply, w, scoped](caf::event_based_actor* self) mutable {
      self->request(ctx.store, ctx.timeout, share_atom::value, w.id)
          .then(
              [=](std::string& from) mutable {
                w.shared = !from.empty() && from == w.tenant;
                w.id = scoped;  // the mark names the id as the tenant does
                ask<worker>(ctx, ctx.router, reply,
                            [](worker& x) { return json_response(201, registration_json(x)); },
                            register_atom::value, std::move(w));
              },
              [=](caf::error& e) { reply(error_response(e)); });
    });
  }, true);
}

void share_worker_route(route_call& c) {
  auto body = parse_json(c.req.body);
  if (!body) return c.reply(error_response(body.error()));
  auto* o = body->if_object();
  auto* tenant = o ? o->if_contains("tenant") : nullptr;
  if (!tenant || !tenant->is_string() || tenant->as_string().empty())
    return c.reply(error_response(make_error(
        errc::invalid_argument, "tenant", "tenant: the tenant whose worker this is (a string)")));
  auto* shared = o->if_contains("shared");
  if (!shared || !shared->is_bool())
    return c.reply(error_response(
        make_error(errc::invalid_argument, "shared", "shared: true or false required")));
  share_worker cmd{std::string(tenant->as_string()), c.param(), shared->as_bool()};
  auto ctx = c.ctx;
  auto reply = c.reply;
  ctx.sys->spawn([ctx, reply, cmd](caf::event_based_actor* self) {
    self->request(ctx.raft, ctx.timeout, propose_atom::value, command{cmd})
        .then(
            [=](applied&) {
              // The mark is committed; apply it to the worker registered now (if any).
              self->request(ctx.router, ctx.timeout, share_atom::value,
                            scoped_worker_id(cmd.tenant, cmd.worker_id), cmd.tenant, cmd.shared)
                  .then(
                      [=](bool now) {
                        reply(json_response(200, json::object{{"worker_id", cmd.worker_id},
                                                              {"tenant", cmd.tenant},
                                                              {"shared", cmd.shared},
                                                              {"registered", now}}));
                      },
                      [=](caf::error& e) { reply(error_response(e)); });
            },
            [=](caf::error& e) { reply(error_response(e)); });
  });
}

void heartbeat_worker(route_call& c) {
  worker_heartbeat hb;
  hb.id = c.param();
  if (!c.req.body.empty()) {
    auto body = parse_json(c.req.body);
    if (!body) return c.reply(error_response(body.error()));
    auto parsed = heartbeat_from_json(*body, hb);
    if (!parsed) return c.reply(error_response(parsed.error()));
    hb = std::move(*parsed);
  }
  if (auto cred = c.req.headers.find("x-worker-credential"); cred != c.req.headers.end())
    hb.credential = cred->second;
  auto id = c.param();
  auto ctx = c.ctx;
  auto reply = c.reply;
  with_own_worker(ctx, c.req.who.tenant, id, reply, [ctx, reply, id, hb](auto& scoped) mutable {
    hb.id = scoped;
    ask<bool>(
        ctx, ctx.router, reply,
        [id](bool known) {
          if (known) return json_response(200, json::object{{"status", "ok"}});
          return error_response(make_error(
              errc::not_found, "id", "worker " + id + " is not registered; register it again"));
        },
        heartbeat_atom::value, hb);
  });
}

void drain_worker(route_call& c) { set_drained(c, true); }
void undrain_worker(route_call& c) { set_drained(c, false); }

void remove_worker(route_call& c) {
  ask_own_worker<bool>(
      c, [](bool) { return http_response{204, "", "application/json"}; }, remove_atom::value);
}

// -- answers -----------------------------------------------------------------------

http_response json_response(unsigned status, const json::value& v) {
  return http_response{status, to_text(v), "application/json"};  // `2`, not `2E0`
}

namespace {

/// `body` (an error_to_json document) answered with `status`, its code kept
/// in error_code so that nobody parses the body back to find it.
http_response error_answer(unsigned status, const json::value& body) {
  auto res = json_response(status, body);
  res.error_code = std::string(body.at("error").at("code").as_string());
  return res;
}

}  // namespace

http_response error_response(const caf::error& err) {
  return error_answer(http_status(err), error_to_json(err));
}

http_response error_response(unsigned status, const std::string& code, const std::string& message,
                             const std::string& field) {
  return error_answer(status, error_to_json(code, message, field));
}

http_response method_not_allowed(const std::string& allow) {
  auto res = error_response(405, "method_not_allowed", "method not allowed");
  res.headers.emplace_back("Allow", allow);
  return res;
}

unsigned http_status(const caf::error& err) {
  switch (view(err).code) {
    case errc::invalid_argument: return 400;
    case errc::not_found:
    case errc::gone: return 404;
    case errc::already_exists:
      if (is_idempotency_key_reused(err)) return 422;
      return 409;
    case errc::version_conflict:
    case errc::has_dependents:
    case errc::illegal_transition: return 409;
    case errc::payload_too_large: return 413;
    case errc::unauthenticated: return 401;
    case errc::forbidden: return 403;
    case errc::not_leader:
    case errc::unavailable:
    case errc::outcome_unknown:
    case errc::storage_unavailable: return 503;
    case errc::storage_full: return 507;  // Insufficient Storage
    default: return 500;
  }
}

handler_fn make_api(api_context ctx) {
  auto a = std::make_shared<api>(std::move(ctx));
  return [a](http_request req, reply_fn reply) { (*a)(std::move(req), std::move(reply)); };
}

}  // namespace aisched::gateway
