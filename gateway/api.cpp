// REST route handlers; see api.hpp.
#include "gateway/api.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <functional>
#include <set>
#include <regex>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/trigger/schedule.hpp"
#include "gateway/access.hpp"
#include "gateway/auth_routes.hpp"
#include "gateway/admin_routes.hpp"
#include "gateway/load_history_route.hpp"
#include "gateway/ai_features.hpp"
#include "gateway/ai_routes.hpp"
#include "gateway/openapi.hpp"
#include "gateway/cluster_members.hpp"
#include "gateway/cluster_view.hpp"
#include "gateway/dag_route.hpp"
#include "gateway/health_route.hpp"
#include "gateway/console.hpp"
#include "gateway/output_stream.hpp"
#include "gateway/report_route.hpp"
#include "proto/cluster_link.hpp"
#include "proto/errors.hpp"
#include "proto/json.hpp"
#include "proto/validate.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

std::optional<uint64_t> parse_u64(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

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

/// Splits "/api/v1/tasks/12/pause" into {"api","v1","tasks","12","pause"}.
std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    auto j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

}  // namespace

/// Checks a task beyond structure: its schedule and time zone parse.
caf::error validate_full(const task& t) {
  if (auto err = validate_task(t)) return err;
  if (!t.schedule.empty()) {
    auto s = trigger::schedule::parse(t.schedule, t.timezone);
    if (!s) return s.error();
  } else {
    auto s = trigger::schedule::parse("@every 1h", t.timezone);  // checks the zone alone
    if (!s) return s.error();
  }
  return {};
}

json::value task_view(const task& t) {
  auto v = to_json(t);
  json::array next;
  if (!t.paused) {
    std::vector<unix_ms> times;
    if (!t.schedule.empty()) {
      if (auto s = trigger::schedule::parse(t.schedule, t.timezone))
        times = s->next_n(now_ms(), 5);
    } else if (t.at != 0 && t.at > now_ms()) {
      times.push_back(t.at);
    }
    for (auto x : times) next.push_back(json::string(format_rfc3339(x)));
  }
  v.as_object()["next_fire_times"] = std::move(next);
  return v;
}

namespace {

json::value page_json(const task_page& p) {
  json::array items;
  for (auto& t : p.items) items.push_back(task_view(t));
  json::object o;
  o["items"] = std::move(items);
  o["next_cursor"] = p.next_cursor;
  return o;
}

json::value page_json(const instance_page& p) {
  json::array items;
  for (auto& x : p.items) items.push_back(to_json(x));
  json::object o;
  o["items"] = std::move(items);
  o["next_cursor"] = p.next_cursor;
  return o;
}

class api {
 public:
  explicit api(api_context ctx) : ctx_(ctx), gate_(std::make_shared<access>(std::move(ctx))) {}

  /// Every request passes the auth gate first: it sets req.who (whose tenant
  /// scopes everything below), answers 401/403 and audits mutations.
  void operator()(http_request req, reply_fn reply) {
    gate_->admit(std::move(req), std::move(reply),
                 [this](http_request r, reply_fn rp) { route(r, rp); });
  }

 private:
  void route(http_request& req, reply_fn& reply) {
    auto seg = segments(req.path);
    auto& m = req.method;
    if (is_console_path(req.path)) return serve_console(req, reply);
    if (seg.size() == 1 && seg[0] == "healthz" && m == "GET") return healthz(reply);
    if (seg.size() == 1 && seg[0] == "readyz" && m == "GET") return readyz(ctx_, reply);
    if (seg.size() < 3 || seg[0] != "api" || seg[1] != "v1") return not_found(req, reply);
    const auto& res = seg[2];
    if (serve_ai_feature(ctx_, req, seg, reply)) return;  // gateway/ai_features.cpp
    if (res == "version" && seg.size() == 3 && m == "GET")
      return reply(json_response(
          200, json::object{{"version", AISCHED_VERSION}, {"node_id", ctx_.node_id}}));
    if (res == "cluster" && seg.size() == 3 && m == "GET") return cluster_view(ctx_, reply);
    if (cluster_member_routes(ctx_, req, seg, reply)) return;  // gateway/cluster_members.cpp
    if (res == "openapi.json" && seg.size() == 3 && m == "GET")
      return reply(http_response{200, std::string(openapi_document()), "application/json"});
    if (res == "schedules" && seg.size() == 4 && seg[3] == "next" && m == "GET")
      return next_times(req, reply);
    if (is_auth_resource(res)) return auth_routes(*gate_, req, seg, reply);
    if (res == "tasks") return tasks(req, seg, reply);
    if (res == "events" && seg.size() == 4 && m == "POST") return publish_event(req, seg[3], reply);
    if (res == "dag" && seg.size() == 3 && m == "GET") return dag_route(ctx_, req.who.tenant, reply);
    if (res == "instances") return instances(req, seg, reply);
    if (is_load_history(seg)) return load_history_route(ctx_, req, seg, reply);
    if (res == "workers") return workers(req, seg, reply);
    if (res == "admin") return admin_routes(req, seg, reply);
    if (res == "ai") return ai_routes(ctx_.ai, req, seg, reply);
    if (res == "backpressure" && seg.size() == 3 && m == "GET")
      return ask<pressure_status>(
          ctx_.backpressure, reply,
          [](pressure_status& p) {
            static const char* levels[] = {"green", "yellow", "red"};
            return json_response(
                200, json::object{{"state", levels[static_cast<int>(p.current.level)]},
                                  {"delay", format_duration(p.current.delay)},
                                  {"backlog", p.backlog},
                                  {"max_backlog", p.max_backlog},
                                  {"worker_load", p.worker_load},
                                  {"leading", p.leading}});
          },
          pressure_status_atom::value);
    not_found(req, reply);
  }

  // -- routing ---------------------------------------------------------------

  void tasks(http_request& req, const std::vector<std::string>& seg, reply_fn& reply) {
    auto& m = req.method;
    if (seg.size() == 3) {
      if (m == "POST") return create_task_route(req, reply);
      if (m == "GET") return list_tasks_route(req, reply);
      return method_not_allowed(reply);
    }
    auto id = parse_u64(seg[3]);
    if (!id || *id == 0)
      return reply(error_response(
          make_error(errc::invalid_argument, "id", "task id must be a positive integer")));
    if (seg.size() == 4) {
      if (m == "GET") return get_task_route(req.who.tenant, *id, reply);
      if (m == "PUT" || m == "PATCH") return update_task_route(*id, req, reply);
      if (m == "DELETE") return delete_task_route(*id, req, reply);
      return method_not_allowed(reply);
    }
    if (seg.size() == 5 && m == "POST" && seg[4] == "trigger")
      return ask_leader<applied>(reply,
                          [](applied& a) {
                            json::array items;
                            for (auto& x : a.instances) items.push_back(to_json(x));
                            return json_response(201, json::object{{"instances", std::move(items)}});
                          },
                          trigger_now_atom::value, req.who.tenant, *id);
    if (seg.size() == 5 && m == "POST" && seg[4] == "backfill") return backfill(*id, req, reply);
    if (seg.size() == 5 && m == "POST" && (seg[4] == "pause" || seg[4] == "resume")) {
      set_paused c{req.who.tenant, *id, seg[4] == "pause", now_ms()};
      return propose(command{c}, reply, [](applied& a) {
        return json_response(200, task_view(a.tasks.at(0)));
      });
    }
    not_found(req, reply);
  }

  void workers(http_request& req, const std::vector<std::string>& seg, reply_fn& reply) {
    auto& m = req.method;
    if (seg.size() == 3 && m == "GET")
      return ask<worker_list>(ctx_.router, reply,
                              [tenant = req.who.tenant](worker_list& l) {
                                json::array items;
                                for (auto& w : l.items)
                                  if (w.tenant == tenant) items.push_back(to_json(w));
                                return json_response(200, json::object{{"items", std::move(items)}});
                              },
                              list_workers_atom::value);
    if (seg.size() == 3 && m == "POST") {
      auto body = parse_json(req.body);
      if (!body) return reply(error_response(body.error()));
      worker base;
      base.protocol = worker_protocol::http;
      auto w = worker_from_json(*body, base);
      if (!w) return reply(error_response(w.error()));
      w->tenant = req.who.tenant;
      if (auto err = validate_worker(*w)) return reply(error_response(err));
      return with_own_worker(ctx_, req.who.tenant, w->id, reply, [this, reply, w = *w]() mutable {
        ask<worker>(ctx_.router, reply, [](worker& x) { return json_response(201, registration_json(x)); },
                    register_atom::value, std::move(w));
      }, true);
    }
    if (seg.size() == 5 && seg[4] == "heartbeat" && m == "POST") {
      worker_heartbeat hb;
      hb.id = seg[3];
      if (!req.body.empty()) {
        auto body = parse_json(req.body);
        if (!body) return reply(error_response(body.error()));
        auto parsed = heartbeat_from_json(*body, hb);
        if (!parsed) return reply(error_response(parsed.error()));
        hb = std::move(*parsed);
      }
      if (auto c = req.headers.find("x-worker-credential"); c != req.headers.end())
        hb.credential = c->second;
      auto id = seg[3];
      return with_own_worker(ctx_, req.who.tenant, id, reply, [this, reply, id, hb]() mutable {
        ask<bool>(ctx_.router, reply,
                  [id](bool known) {
                    if (known) return json_response(200, json::object{{"status", "ok"}});
                    return error_response(make_error(
                        errc::not_found, "id", "worker " + id + " is not registered; register it again"));
                  },
                  heartbeat_atom::value, hb);
      });
    }
    if (seg.size() == 5 && (seg[4] == "drain" || seg[4] == "undrain") && m == "POST")
      return with_own_worker(ctx_, req.who.tenant, seg[3], reply, [this, reply, seg]() mutable {
        ask<worker>(ctx_.router, reply, [](worker& w) { return json_response(200, to_json(w)); },
                    drain_atom::value, seg[3], seg[4] == "drain");
      });
    if (seg.size() == 4 && m == "DELETE")
      return with_own_worker(ctx_, req.who.tenant, seg[3], reply, [this, reply, seg]() mutable {
        ask<bool>(ctx_.router, reply, [](bool) { return http_response{204, "", "application/json"}; },
                  remove_atom::value, seg[3]);
      });
    not_found(req, reply);
  }

  void instances(http_request& req, const std::vector<std::string>& seg, reply_fn& reply) {
    if (seg.size() == 5 && seg[4] == "report" && req.method == "POST") return report_route(ctx_, seg[3], req, reply);
    if (seg.size() == 5 && seg[4] == "cancel" && req.method == "POST") {
      cancel c{req.who.tenant, seg[3], now_ms(), "cancelled by request"};
      return propose(command{std::move(c)}, reply, [](applied& a) {
        return json_response(200, to_json(a.instances.at(0)));
      });
    }
    if (req.method != "GET") return method_not_allowed(reply);
    if (seg.size() == 3) {
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
      return ask<instance_page>(ctx_.store, reply, [](instance_page& p) { return json_response(200, page_json(p)); },
                 list_instances_atom::value, q);
    }
    if (seg.size() == 4)
      return ask<instance>(ctx_.store, reply, [](instance& x) { return json_response(200, to_json(x)); },
                 get_instance_atom::value, req.who.tenant, seg[3]);
    if (seg.size() == 5 && seg[4] == "attempts")
      return ask<attempt_list>(ctx_.store, reply,
                               [](attempt_list& a) { return json_response(200, to_json(a)); },
                               attempts_atom::value, req.who.tenant, seg[3]);
    if (seg.size() == 5 && seg[4] == "output") {
      auto f = req.query.find("follow");
      if (f != req.query.end() && (f->second == "true" || f->second == "1"))
        return follow_output(ctx_, req.who.tenant, seg[3], reply);
      return ask<instance>(ctx_.store, reply,
                           [](instance& x) {
                             return json_response(
                                 200, json::object{{"instance_id", x.id},
                                                   {"state", std::string(name_of(x.state))},
                                                   {"output", x.output}});
                           },
                           get_instance_atom::value, req.who.tenant, seg[3]);
    }
    not_found(req, reply);
  }

  // -- handlers --------------------------------------------------------------

  void create_task_route(http_request& req, reply_fn& reply) {
    auto body = parse_json(req.body);
    if (!body) return reply(error_response(body.error()));
    auto t = task_from_json(*body);
    if (!t) return reply(error_response(t.error()));
    t->id = 0;
    t->version = 0;
    t->tenant = req.who.tenant;
    t->created_at = t->updated_at = now_ms();
    if (auto err = validate_full(*t)) return reply(error_response(err));
    // A client that retries a create after a timeout sends the same key and
    // gets the task the first attempt made instead of a second one.
    std::string key;
    if (auto h = req.headers.find("idempotency-key"); h != req.headers.end()) {
      key = h->second;
      bool printable = std::all_of(key.begin(), key.end(),
                                   [](char ch) { return ch > 0x20 && ch < 0x7f; });
      if (key.empty() || key.size() > 128 || !printable)
        return reply(error_response(make_error(
            errc::invalid_argument, "Idempotency-Key",
            "Idempotency-Key: 1 to 128 visible ASCII characters")));
    }
    propose(command{create_task{std::move(*t), std::move(key)}}, reply,
            [](applied& a) { return json_response(201, task_view(a.tasks.at(0))); });
  }

  void list_tasks_route(http_request& req, reply_fn& reply) {
    task_query q;
    q.tenant = req.who.tenant;
    if (auto err = read_limit(req, q.limit)) return reply(error_response(err));
    if (auto i = req.query.find("cursor"); i != req.query.end() && !i->second.empty()) {
      auto c = parse_u64(i->second);
      if (!c)
        return reply(
            error_response(make_error(errc::invalid_argument, "cursor", "malformed cursor")));
      q.after_id = *c;
    }
    if (auto i = req.query.find("name"); i != req.query.end()) q.name_contains = i->second;
    if (auto i = req.query.find("labels"); i != req.query.end() && !i->second.empty()) {
      // labels=zone=eu,gpu=true
      std::string_view rest = i->second;
      while (!rest.empty()) {
        auto pair = rest.substr(0, rest.find(','));
        rest.remove_prefix(std::min(rest.size(), pair.size() + 1));
        auto eq = pair.find('=');
        if (eq == std::string_view::npos || eq == 0)
          return reply(error_response(make_error(errc::invalid_argument, "labels",
                                                 "labels: KEY=VALUE pairs separated by commas")));
        q.labels[std::string(pair.substr(0, eq))] = std::string(pair.substr(eq + 1));
      }
    }
    if (auto i = req.query.find("state"); i != req.query.end()) {
      if (i->second == "paused") q.paused = task_query::paused_filter::paused;
      else if (i->second == "active") q.paused = task_query::paused_filter::active;
      else
        return reply(error_response(
            make_error(errc::invalid_argument, "state", "state: paused or active")));
    }
    ask<task_page>(ctx_.store, reply, [](task_page& p) { return json_response(200, page_json(p)); },
        list_tasks_atom::value, q);
  }

  void get_task_route(const std::string& tenant, uint64_t id, reply_fn& reply) {
    ask<task>(ctx_.store, reply, [](task& t) { return json_response(200, task_view(t)); },
        get_task_atom::value, tenant, id);
  }

  /// Read the stored task, merge the body over it, validate, and commit with the
  /// version read (or the one the client sent): a concurrent change gives 409.
  void update_task_route(uint64_t id, http_request& req, reply_fn& reply) {
    auto body = parse_json(req.body);
    if (!body) return reply(error_response(body.error()));
    auto ctx = ctx_;
    auto patch = std::make_shared<json::value>(std::move(*body));
    auto tenant = req.who.tenant;
    ctx.sys->spawn([ctx, id, patch, reply, tenant](caf::event_based_actor* self) {
      self->request(ctx.store, ctx.timeout, get_task_atom::value, tenant, id)
          .then(
              [=](task& cur) {
                auto stored_version = cur.version;
                auto t = task_from_json(*patch, cur);
                if (!t) return reply(error_response(t.error()));
                auto expected = t->version != stored_version ? t->version : stored_version;
                t->id = id;
                t->tenant = cur.tenant;
                t->created_at = cur.created_at;
                t->updated_at = now_ms();
                if (auto err = validate_full(*t)) return reply(error_response(err));
                update_task c{std::move(*t), expected};
                self->request(ctx.raft, ctx.timeout, propose_atom::value, command{std::move(c)})
                    .then([=](applied& a) { reply(json_response(200, task_view(a.tasks.at(0)))); },
                          [=](caf::error& e) { reply(error_response(e)); });
              },
              [=](caf::error& e) { reply(error_response(e)); });
    });
  }

  void delete_task_route(uint64_t id, http_request& req, reply_fn& reply) {
    delete_task c{req.who.tenant, id, 0};
    if (auto i = req.query.find("version"); i != req.query.end()) {
      auto v = parse_u64(i->second);
      if (!v)
        return reply(error_response(
            make_error(errc::invalid_argument, "version", "version must be an integer")));
      c.expected_version = *v;
    }
    propose(command{c}, reply, [](applied&) { return http_response{204, "", "application/json"}; });
  }

  void next_times(http_request& req, reply_fn& reply) {
    auto expr = req.query.count("cron") ? req.query["cron"] : req.query["schedule"];
    if (expr.empty())
      return reply(error_response(
          make_error(errc::invalid_argument, "cron", "query parameter 'cron' is required")));
    auto tz = req.query.count("tz") ? req.query["tz"] : "UTC";
    unix_ms after = now_ms();
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
    auto s = trigger::schedule::parse(expr, tz);
    if (!s) return reply(error_response(s.error()));
    json::array times;
    for (auto t : s->next_n(after, n)) times.push_back(json::string(format_rfc3339(t)));
    reply(json_response(200, json::object{{"times", std::move(times)}}));
  }

  /// POST /api/v1/events/{name}: fires every subscriber once with the payload.
  void publish_event(http_request& req, const std::string& name, reply_fn& reply) {
    std::string payload = "{}";
    if (!req.body.empty()) {
      auto body = parse_json(req.body);
      if (!body) return reply(error_response(body.error()));
      if (!body->is_object())
        return reply(error_response(
            make_error(errc::invalid_argument, "body", "the event payload must be a JSON object")));
      payload = json::serialize(*body);
    }
    ask_leader<applied>(reply,
                 [name](applied& a) {
                   json::array fired;
                   std::set<uint64_t> seen;
                   for (auto& x : a.instances)
                     if (seen.insert(x.task_id).second) fired.push_back(x.task_id);
                   json::array items;
                   for (auto& x : a.instances) items.push_back(to_json(x));
                   return json_response(200, json::object{{"event", name},
                                                          {"fired_tasks", std::move(fired)},
                                                          {"instances", std::move(items)}});
                 },
                 event_atom::value, req.who.tenant, name, payload);
  }

  /// POST /api/v1/tasks/{id}/backfill {"from", "to"}.
  void backfill(uint64_t id, http_request& req, reply_fn& reply) {
    auto body = parse_json(req.body);
    if (!body) return reply(error_response(body.error()));
    unix_ms from = 0, to = 0;
    for (auto [field, out] : {std::pair{"from", &from}, std::pair{"to", &to}}) {
      auto* v = body->is_object() ? body->as_object().if_contains(field) : nullptr;
      auto t = v && v->is_string() ? parse_rfc3339(v->as_string()) : std::nullopt;
      if (!t)
        return reply(error_response(make_error(errc::invalid_argument, field,
                                               std::string(field) + ": RFC 3339 time required")));
      *out = *t;
    }
    if (to < from)
      return reply(error_response(
          make_error(errc::invalid_argument, "to", "to: must not be before from")));
    ask_leader<applied>(reply,
                 [](applied& a) {
                   json::array items;
                   for (auto& x : a.instances) items.push_back(to_json(x));
                   return json_response(200, json::object{{"instances", std::move(items)}});
                 },
                 backfill_atom::value, req.who.tenant, id, from, to);
  }

  // -- helpers ---------------------------------------------------------------

  caf::error read_limit(http_request& req, uint32_t& limit) {
    auto i = req.query.find("limit");
    if (i == req.query.end()) return {};
    auto v = parse_u64(i->second);
    if (!v || *v < 1 || *v > 1000)
      return make_error(errc::invalid_argument, "limit", "limit must be between 1 and 1000");
    limit = static_cast<uint32_t>(*v);
    return {};
  }

  /// The point reads ask() serves inline (see point_reads); nullopt: not set up.
  std::optional<caf::expected<task>> inline_read(get_task_atom, const std::string& tenant,
                                                 uint64_t id) const {
    if (!ctx_.reads.task) return std::nullopt;
    return ctx_.reads.task(tenant, id);
  }
  std::optional<caf::expected<instance>> inline_read(get_instance_atom, const std::string& tenant,
                                                     const std::string& id) const {
    if (!ctx_.reads.instance) return std::nullopt;
    return ctx_.reads.instance(tenant, id);
  }
  template <class... Ts>
  std::nullopt_t inline_read(const Ts&...) const {
    return std::nullopt;
  }

  /// Sends `xs...` to `hdl` from a bridge actor and answers with `on_ok(result)`;
  /// a point read of the store is answered inline instead.
  template <class Result, class Handle, class OnOk, class... Ts>
  void ask(const Handle& hdl, reply_fn& reply, OnOk on_ok, Ts... xs) {
    if constexpr (std::is_same_v<Handle, store_actor>) {
      auto r = inline_read(xs...);
      if constexpr (!std::is_same_v<decltype(r), std::nullopt_t>) {
        if (r) return *r ? reply(on_ok(**r)) : reply(error_response(r->error()));
      }
    }
    auto timeout = ctx_.timeout;
    ctx_.sys->spawn([=](caf::event_based_actor* self) {
      self->request(hdl, timeout, xs...)
          .then([=](Result& result) { reply(on_ok(result)); },
                [=](caf::error& e) { reply(error_response(e)); });
    });
  }

  /// Like ask() to the trigger, but a follower's trigger answers not_leader:
  /// then the request goes to the leader's trigger, found through the leader's
  /// endpoint, so manual runs, events and backfills work on any member.
  template <class Result, class OnOk, class... Ts>
  void ask_leader(reply_fn& reply, OnOk on_ok, Ts... xs) {
    auto ctx = ctx_;
    ctx.sys->spawn([=](caf::event_based_actor* self) {
      auto to_leader = [=](caf::error original) {
        self->request(ctx.raft, ctx.timeout, raft_status_atom::value)
            .then(
                [=](raft_status& s) {
                  auto p = std::find_if(s.peers.begin(), s.peers.end(),
                                        [&](const peer_status& x) { return x.id == s.leader_id; });
                  if (p == s.peers.end()) return reply(error_response(original));
                  proto::reach_endpoint(self, p->address, ctx.timeout,
                                 [=](caf::expected<endpoint_actor> ep) {
                                   if (!ep) return reply(error_response(ep.error()));
                                   self->request(*ep, ctx.timeout, trigger_atom::value)
                                       .then(
                                           [=](trigger_actor& leader) {
                                             self->request(leader, ctx.timeout, xs...)
                                                 .then([=](Result& r) { reply(on_ok(r)); },
                                                       [=](caf::error& e) {
                                                         reply(error_response(e));
                                                       });
                                           },
                                           [=](caf::error& e) { reply(error_response(e)); });
                                 });
                },
                [=](caf::error&) { reply(error_response(original)); });
      };
      self->request(ctx.trigger, ctx.timeout, xs...)
          .then([=](Result& r) { reply(on_ok(r)); },
                [=](caf::error& e) {
                  if (view(e).code == errc::not_leader) return to_leader(e);
                  reply(error_response(e));
                });
    });
  }

  template <class OnOk>
  void propose(command cmd, reply_fn& reply, OnOk on_ok) {
    ask<applied>(ctx_.raft, reply, [on_ok](applied& a) { return on_ok(a); }, propose_atom::value,
        std::move(cmd));
  }

  void not_found(const http_request& req, reply_fn& reply) {
    reply(error_response(
        make_error(errc::not_found, "", "no route for " + req.method + " " + req.path)));
  }

  void method_not_allowed(reply_fn& reply) {
    reply(json_response(405, json::object{{"error", json::object{{"code", "method_not_allowed"},
                                                                 {"message", "method not allowed"},
                                                                 {"field", ""}}}}));
  }

  api_context ctx_;
  std::shared_ptr<access> gate_;
};

}  // namespace

http_response json_response(unsigned status, const json::value& v) {
  return http_response{status, json::serialize(v), "application/json"};
}

http_response error_response(const caf::error& err) {
  return json_response(http_status(err), error_to_json(err));
}

unsigned http_status(const caf::error& err) {
  switch (view(err).code) {
    case errc::invalid_argument: return 400;
    case errc::not_found: return 404;
    case errc::already_exists:
      if (is_idempotency_key_reused(err)) return 422;
      return 409;
    case errc::version_conflict:
    case errc::illegal_transition: return 409;
    case errc::payload_too_large: return 413;
    case errc::unauthenticated: return 401;
    case errc::forbidden: return 403;
    case errc::not_leader:
    case errc::unavailable:
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
