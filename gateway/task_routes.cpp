// Task and event routes; see task_routes.hpp.
#include "gateway/task_routes.hpp"

#include <algorithm>
#include <memory>
#include <set>

#include <boost/json.hpp>

#include "common/clock.hpp"
#include "gateway/access.hpp"
#include "gateway/ask.hpp"
#include "gateway/secrets_routes.hpp"
#include "gateway/control_routes.hpp"
#include "proto/json.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

/// The page; with `known`, each task's next_fire_times skip the dates of the
/// calendar it excludes.
json::value page_json(const task_page& p, const controls* known = nullptr) {
  auto calendar_of = [known](const task& t) -> const calendar* {
    if (!known || t.exclude_calendar.empty()) return nullptr;
    for (auto& c : known->calendars)
      if (c.name == t.exclude_calendar) return &c;
    return nullptr;
  };
  json::array items;
  for (auto& t : p.items) items.push_back(task_view(t, calendar_of(t)));
  json::object o;
  o["items"] = std::move(items);
  o["next_cursor"] = p.next_cursor;
  return o;
}

/// The {id} of a task route, or the 400 answered.
std::optional<uint64_t> task_id(route_call& c) {
  auto id = parse_u64(c.param());
  if (!id || *id == 0) {
    c.reply(error_response(
        make_error(errc::invalid_argument, "id", "task id must be a positive integer")));
    return std::nullopt;
  }
  return id;
}

/// Proposes `cmd` and answers `status` with the view of the task it made or
/// changed, whose next_fire_times skip the dates of the calendar it excludes.
/// Proposes `cmd`; once applied, `after` sees the task (the audit of its
/// secret references) and the answer is its view with `status`.
void propose_task(route_call& c, command cmd, unsigned status,
                  std::function<void(const task&)> after = nullptr) {
  auto made = std::make_shared<task>();
  auto ctx = c.ctx;
  auto reply = c.reply;
  reply_fn then = [ctx, reply, made, status](http_response r) {
    if (r.status >= 300) return reply(std::move(r));
    reply_task_view(ctx, reply, status, std::move(*made));
  };
  propose(ctx, std::move(cmd), then, [made, status, after](applied& a) {
    *made = a.tasks.at(0);
    if (after) after(*made);
    return http_response{status, "", "application/json"};
  });
}

void set_paused_route(route_call& c, bool paused) {
  auto id = task_id(c);
  if (!id) return;
  set_paused cmd{c.req.who.tenant, *id, paused, system_now_ms()};
  propose_task(c, command{cmd}, 200);
}

/// "VAR=name,..." of a task's secret references (names only, never a value).
std::string refs_text(const task& t) {
  std::string out;
  for (auto& [var, name] : t.secrets) out += (out.empty() ? "" : ",") + var + "=" + name;
  return out;
}

/// Audits a change of task `t`'s secret references beside its task.* entry:
/// who made task `t` reach which secrets.
void audit_refs(access& gate, const principal& who, const task& t, const std::string& before) {
  auto now = refs_text(t);
  if (now == before) return;
  audit_entry e;
  e.subject = who.subject;
  e.tenant = t.tenant;
  e.action = "secret.reference";
  e.target = "task " + std::to_string(t.id) + ": " + (now.empty() ? "(none)" : now);
  e.result = "ok";
  gate.record(std::move(e));
}

json::value instances_json(const applied& a) {
  json::array items;
  for (auto& x : a.instances) items.push_back(to_json(x));
  return items;
}

}  // namespace

void create_task(route_call& c) {
  auto& req = c.req;
  auto body = parse_json(req.body);
  if (!body) return c.reply(error_response(body.error()));
  auto t = task_from_json(*body);
  if (!t) return c.reply(error_response(t.error()));
  t->id = 0;
  t->version = 0;
  t->tenant = req.who.tenant;
  t->created_at = t->updated_at = system_now_ms();
  if (auto err = validate_full(*t, t->created_at)) return c.reply(error_response(err));
  if (auto err = check_secret_refs(c.ctx, *t)) return c.reply(error_response(err));
  // A client that retries a create after a timeout sends the same key and
  // gets the task the first attempt made instead of a second one.
  std::string key;
  if (auto h = req.headers.find("idempotency-key"); h != req.headers.end()) {
    key = h->second;
    bool printable =
        std::all_of(key.begin(), key.end(), [](char ch) { return ch > 0x20 && ch < 0x7f; });
    if (key.empty() || key.size() > 128 || !printable)
      return c.reply(error_response(make_error(errc::invalid_argument, "Idempotency-Key",
                                               "Idempotency-Key: 1 to 128 visible ASCII characters")));
  }
  auto* gate = &c.gate;
  auto who = req.who;
  propose_task(c, command{proto::create_task{std::move(*t), std::move(key)}}, 201,
               [gate, who](const task& made) { audit_refs(*gate, who, made, ""); });
}

void list_tasks(route_call& c) {
  auto& req = c.req;
  auto& reply = c.reply;
  task_query q;
  q.tenant = req.who.tenant;
  if (auto err = read_limit(req, q.limit)) return reply(error_response(err));
  if (auto i = req.query.find("cursor"); i != req.query.end() && !i->second.empty()) {
    auto cur = parse_u64(i->second);
    if (!cur)
      return reply(
          error_response(make_error(errc::invalid_argument, "cursor", "malformed cursor")));
    q.after_id = *cur;
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
  // Read the page, then the tenant's calendars if a task on it excludes one.
  auto page = std::make_shared<task_page>();
  auto ctx = c.ctx;
  reply_fn then = [ctx, reply, page, tenant = q.tenant](http_response r) {
    if (r.status != 200) return reply(std::move(r));
    bool excluding = std::any_of(page->items.begin(), page->items.end(),
                                 [](const task& t) { return !t.exclude_calendar.empty(); });
    if (!excluding) return reply(json_response(200, page_json(*page)));
    ask<controls>(
        ctx, ctx.store, reply,
        [page](controls& x) { return json_response(200, page_json(*page, &x)); },
        controls_atom::value, tenant);
  };
  ask<task_page>(
      c.ctx, c.ctx.store, then,
      [page](task_page& p) {
        *page = std::move(p);
        return http_response{200, "", "application/json"};
      },
      list_tasks_atom::value, q);
}

void get_task(route_call& c) {
  auto id = task_id(c);
  if (!id) return;
  // Read the task, then (reply_task_view) the calendar it excludes, if any:
  // its next_fire_times skip the excluded dates.
  auto found = std::make_shared<task>();
  auto ctx = c.ctx;
  auto reply = c.reply;
  reply_fn then = [ctx, reply, found](http_response r) {
    if (r.status != 200) return reply(std::move(r));
    reply_task_view(ctx, reply, 200, std::move(*found));
  };
  ask<task>(
      c.ctx, c.ctx.store, then,
      [found](task& t) {
        *found = std::move(t);
        return http_response{200, "", "application/json"};
      },
      get_task_atom::value, c.req.who.tenant, *id);
}

/// Read the stored task; PATCH merges the body over it, PUT replaces it (absent
/// fields take their defaults, as in a create); validate, and commit with the
/// version read (or the one the client sent): a concurrent change gives 409.
void update_task(route_call& c) {
  auto id_or = task_id(c);
  if (!id_or) return;
  auto id = *id_or;
  auto body = parse_json(c.req.body);
  if (!body) return c.reply(error_response(body.error()));
  auto ctx = c.ctx;
  auto patch = std::make_shared<json::value>(std::move(*body));
  auto tenant = c.req.who.tenant;
  auto reply = c.reply;
  bool replace = c.req.method == "PUT";
  auto* gate = &c.gate;
  auto who = c.req.who;
  ctx.sys->spawn([ctx, id, patch, reply, tenant, replace, gate,
                  who](caf::event_based_actor* self) {
    self->request(ctx.store, ctx.timeout, get_task_atom::value, tenant, id)
        .then(
            [=](task& cur) {
              auto stored_version = cur.version;
              auto t = replace ? task_from_json(*patch) : task_from_json(*patch, cur);
              if (!t) return reply(error_response(t.error()));
              auto expected = t->version != stored_version ? t->version : stored_version;
              t->id = id;
              t->tenant = cur.tenant;
              t->created_at = cur.created_at;
              t->updated_at = system_now_ms();
              if (auto err = validate_full(*t, t->updated_at, &cur))
                return reply(error_response(err));
              if (auto err = check_secret_refs(ctx, *t)) return reply(error_response(err));
              auto before = refs_text(cur);
              proto::update_task cmd{std::move(*t), expected};
              self->request(ctx.raft, ctx.timeout, propose_atom::value, command{std::move(cmd)})
                  .then([=](applied& a) {
                          audit_refs(*gate, who, a.tasks.at(0), before);
                          reply_task_view(ctx, reply, 200, a.tasks.at(0));
                        },
                        [=](caf::error& e) { reply(error_response(e)); });
            },
            [=](caf::error& e) { reply(error_response(e)); });
  });
}

void delete_task(route_call& c) {
  auto id = task_id(c);
  if (!id) return;
  proto::delete_task cmd{c.req.who.tenant, *id, 0};
  if (auto i = c.req.query.find("version"); i != c.req.query.end()) {
    auto v = parse_u64(i->second);
    if (!v)
      return c.reply(error_response(
          make_error(errc::invalid_argument, "version", "version must be an integer")));
    cmd.expected_version = *v;
  }
  if (auto i = c.req.query.find("cascade"); i != c.req.query.end()) {
    if (i->second != "true" && i->second != "false")
      return c.reply(error_response(
          make_error(errc::invalid_argument, "cascade", "cascade must be true or false")));
    cmd.cascade = i->second == "true";
  }
  propose(c.ctx, command{cmd}, c.reply,
          [](applied&) { return http_response{204, "", "application/json"}; });
}

void pause_task(route_call& c) { set_paused_route(c, true); }
void resume_task(route_call& c) { set_paused_route(c, false); }

namespace {

/// The answer to a manual run: 201 with its runs, or 202 when it waits for upstreams.
http_response trigger_answer(applied& a) {
  // Held back for upstreams: accepted, it runs once they succeed.
  if (a.instances.empty() && !a.waiting_for.empty()) {
    json::array ups;
    for (auto up : a.waiting_for) ups.push_back(up);
    return json_response(202, json::object{{"instances", json::array{}},
                                           {"waiting_for", std::move(ups)}});
  }
  return json_response(201, json::object{{"instances", instances_json(a)}});
}

/// Why task `t` takes no trigger payload ("" if it does): a run with a payload
/// is a bulk enqueue of one, which is one run that starts at once.
std::string payload_refused(const task& t) {
  auto why = [](const char* what) {
    return std::string("payload: not for a task with ") + what +
           " (a run with a payload is one run that starts at once; trigger it without one)";
  };
  if (t.shards > 1) return why("shards");
  if (t.route == route_strategy::broadcast) return why("broadcast routing");
  if (!t.depends_on.empty()) return why("depends_on");
  return {};
}

}  // namespace

/// POST /api/v1/tasks/{id}/trigger: no body, `{}`, or `{"payload": {...}}`. A
/// payload makes the run a bulk enqueue of that one payload (substituted as an
/// event payload); a body with anything else is a 400 naming the field.
void trigger_task(route_call& c) {
  auto id = task_id(c);
  if (!id) return;
  std::string payload;
  if (!c.req.body.empty()) {
    auto body = parse_json(c.req.body);
    if (!body) return c.reply(error_response(body.error()));
    if (!body->is_object())
      return c.reply(error_response(make_error(
          errc::invalid_argument, "body",
          R"(the body must be a JSON object: {} or {"payload":{...}})")));
    for (auto& [key, v] : body->as_object()) {
      if (key != "payload")
        return c.reply(error_response(make_error(errc::invalid_argument, std::string(key),
                                                 std::string(key) + ": unknown field")));
      if (!v.is_object())
        return c.reply(error_response(make_error(errc::invalid_argument, "payload",
                                                 "payload: must be a JSON object")));
      payload = json::serialize(v);
    }
  }
  if (payload.empty())
    return ask_leader<applied>(c.ctx, c.reply, trigger_answer, trigger_now_atom::value,
                               c.req.who.tenant, *id);
  // With a payload: read the task to refuse what a bulk enqueue cannot run
  // with the field the caller wrote, then enqueue the one run.
  auto found = std::make_shared<task>();
  auto ctx = c.ctx;
  auto reply = c.reply;
  auto tenant = c.req.who.tenant;
  auto task_no = *id;
  reply_fn then = [ctx, reply, found, tenant, task_no, payload](http_response r) {
    if (r.status != 200) return reply(std::move(r));
    if (auto why = payload_refused(*found); !why.empty())
      return reply(error_response(make_error(errc::invalid_argument, "payload", why)));
    ask_leader<applied>(ctx, reply, trigger_answer, enqueue_atom::value, tenant, task_no,
                        std::vector<std::string>{payload});
  };
  ask<task>(
      c.ctx, c.ctx.store, then,
      [found](task& t) {
        *found = std::move(t);
        return http_response{200, "", "application/json"};
      },
      get_task_atom::value, c.req.who.tenant, *id);
}

void backfill_task(route_call& c) {
  auto id = task_id(c);
  if (!id) return;
  auto body = parse_json(c.req.body);
  if (!body) return c.reply(error_response(body.error()));
  unix_ms from = 0, to = 0;
  for (auto [field, out] : {std::pair{"from", &from}, std::pair{"to", &to}}) {
    auto* v = body->is_object() ? body->as_object().if_contains(field) : nullptr;
    auto t = v && v->is_string() ? parse_rfc3339(v->as_string()) : std::nullopt;
    if (!t)
      return c.reply(error_response(make_error(errc::invalid_argument, field,
                                               std::string(field) + ": RFC 3339 time required")));
    *out = *t;
  }
  if (to < from)
    return c.reply(error_response(
        make_error(errc::invalid_argument, "to", "to: must not be before from")));
  // A future slot belongs to the schedule: backfilling it would run it now and
  // consume the real slot, which would then be deduplicated away.
  if (auto now = system_now_ms(); to > now)
    return c.reply(error_response(make_error(
        errc::invalid_argument, "to",
        "to: " + format_rfc3339(to) + " is in the future (now " + format_rfc3339(now) +
            "); backfill covers past slots only")));
  ask_leader<applied>(
      c.ctx, c.reply,
      [](applied& a) { return json_response(200, json::object{{"instances", instances_json(a)}}); },
      backfill_atom::value, c.req.who.tenant, *id, from, to);
}

/// POST /api/v1/tasks/{id}/runs: a bulk enqueue, one run per payload (each a
/// JSON object, substituted as an event payload), in one raft command.
void enqueue_runs(route_call& c) {
  auto id = task_id(c);
  if (!id) return;
  auto body = parse_json(c.req.body);
  if (!body) return c.reply(error_response(body.error()));
  auto* list = body->is_object() ? body->as_object().if_contains("payloads") : nullptr;
  if (!list || !list->is_array())
    return c.reply(error_response(make_error(
        errc::invalid_argument, "payloads",
        R"(payloads: required, an array of JSON objects (one run each), e.g. {"payloads":[{}]})")));
  for (auto& [key, v] : body->as_object())
    if (key != "payloads")
      return c.reply(error_response(make_error(errc::invalid_argument, std::string(key),
                                               std::string(key) + ": unknown field")));
  // How many a batch may hold is the planner's rule (trigger::planner::enqueue).
  auto& items = list->as_array();
  std::vector<std::string> payloads;
  payloads.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_object())
      return c.reply(error_response(
          make_error(errc::invalid_argument, "payloads[" + std::to_string(i) + "]",
                     "payloads[" + std::to_string(i) + "]: must be a JSON object")));
    payloads.push_back(json::serialize(items[i]));
  }
  ask_leader<applied>(
      c.ctx, c.reply,
      [](applied& a) {
        json::array ids;
        for (auto& x : a.instances) ids.push_back(json::string(x.id));
        return json_response(202, json::object{{"instance_ids", std::move(ids)}});
      },
      enqueue_atom::value, c.req.who.tenant, *id, std::move(payloads));
}

/// POST /api/v1/events/{name}: fires every subscriber once with the payload.
void publish_event(route_call& c) {
  std::string payload = "{}";
  if (!c.req.body.empty()) {
    auto body = parse_json(c.req.body);
    if (!body) return c.reply(error_response(body.error()));
    if (!body->is_object())
      return c.reply(error_response(
          make_error(errc::invalid_argument, "body", "the event payload must be a JSON object")));
    payload = json::serialize(*body);
  }
  auto name = c.param();
  ask_leader<applied>(
      c.ctx, c.reply,
      [name](applied& a) {
        json::array fired;
        std::set<uint64_t> seen;
        for (auto& x : a.instances)
          if (seen.insert(x.task_id).second) fired.push_back(x.task_id);
        return json_response(200, json::object{{"event", name},
                                               {"fired_tasks", std::move(fired)},
                                               {"instances", instances_json(a)}});
      },
      event_atom::value, c.req.who.tenant, name, payload);
}

}  // namespace aisched::gateway
