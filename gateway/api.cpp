// REST route handlers; see api.hpp.
#include "gateway/api.hpp"

#include <charconv>
#include <regex>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/trigger/schedule.hpp"
#include "proto/errors.hpp"
#include "proto/json.hpp"
#include "proto/validate.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

constexpr const char* default_tenant = "default";

http_response json_response(unsigned status, const json::value& v) {
  return http_response{status, json::serialize(v), "application/json"};
}

http_response error_response(const caf::error& err) {
  return json_response(http_status(err), error_to_json(err));
}

std::optional<uint64_t> parse_u64(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
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
  explicit api(api_context ctx) : ctx_(std::move(ctx)) {}

  void operator()(http_request req, reply_fn reply) {
    auto seg = segments(req.path);
    auto& m = req.method;
    if (seg.size() == 1 && seg[0] == "healthz" && m == "GET")
      return reply(json_response(200, json::object{{"status", "ok"}}));
    if (seg.size() < 3 || seg[0] != "api" || seg[1] != "v1") return not_found(req, reply);
    const auto& res = seg[2];
    if (res == "version" && seg.size() == 3 && m == "GET")
      return reply(json_response(
          200, json::object{{"version", AISCHED_VERSION}, {"node_id", ctx_.node_id}}));
    if (res == "cluster" && seg.size() == 3 && m == "GET") return cluster(reply);
    if (res == "schedules" && seg.size() == 4 && seg[3] == "next" && m == "GET")
      return next_times(req, reply);
    if (res == "tasks") return tasks(req, seg, reply);
    if (res == "instances") return instances(req, seg, reply);
    if (res == "workers" && seg.size() == 3 && m == "GET")
      return ask<worker_list>(ctx_.router, reply,
                              [](worker_list& l) {
                                json::array items;
                                for (auto& w : l.items) items.push_back(to_json(w));
                                return json_response(200, json::object{{"items", std::move(items)}});
                              },
                              list_workers_atom::value);
    not_found(req, reply);
  }

 private:
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
      if (m == "GET") return get_task_route(*id, reply);
      if (m == "PUT" || m == "PATCH") return update_task_route(*id, req, reply);
      if (m == "DELETE") return delete_task_route(*id, req, reply);
      return method_not_allowed(reply);
    }
    if (seg.size() == 5 && m == "POST" && seg[4] == "trigger")
      return ask<applied>(ctx_.trigger, reply,
                          [](applied& a) {
                            json::array items;
                            for (auto& x : a.instances) items.push_back(to_json(x));
                            return json_response(201, json::object{{"instances", std::move(items)}});
                          },
                          trigger_now_atom::value, std::string(default_tenant), *id);
    if (seg.size() == 5 && m == "POST" && (seg[4] == "pause" || seg[4] == "resume")) {
      set_paused c{default_tenant, *id, seg[4] == "pause", now_ms()};
      return propose(command{c}, reply, [](applied& a) {
        return json_response(200, task_view(a.tasks.at(0)));
      });
    }
    not_found(req, reply);
  }

  void instances(http_request& req, const std::vector<std::string>& seg, reply_fn& reply) {
    if (seg.size() == 5 && seg[4] == "cancel" && req.method == "POST") {
      cancel c{default_tenant, seg[3], now_ms(), "cancelled by request"};
      return propose(command{std::move(c)}, reply, [](applied& a) {
        return json_response(200, to_json(a.instances.at(0)));
      });
    }
    if (req.method != "GET") return method_not_allowed(reply);
    if (seg.size() == 3) {
      instance_query q;
      q.tenant = default_tenant;
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
      if (auto err = read_limit(req, q.limit)) return reply(error_response(err));
      if (auto i = req.query.find("cursor"); i != req.query.end()) q.cursor = i->second;
      return ask<instance_page>(ctx_.store, reply, [](instance_page& p) { return json_response(200, page_json(p)); },
                 list_instances_atom::value, q);
    }
    if (seg.size() == 4)
      return ask<instance>(ctx_.store, reply, [](instance& x) { return json_response(200, to_json(x)); },
                 get_instance_atom::value, std::string(default_tenant), seg[3]);
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
    t->tenant = default_tenant;
    t->created_at = t->updated_at = now_ms();
    if (auto err = validate_full(*t)) return reply(error_response(err));
    propose(command{create_task{std::move(*t)}}, reply,
            [](applied& a) { return json_response(201, task_view(a.tasks.at(0))); });
  }

  void list_tasks_route(http_request& req, reply_fn& reply) {
    task_query q;
    q.tenant = default_tenant;
    if (auto err = read_limit(req, q.limit)) return reply(error_response(err));
    if (auto i = req.query.find("cursor"); i != req.query.end() && !i->second.empty()) {
      auto c = parse_u64(i->second);
      if (!c)
        return reply(
            error_response(make_error(errc::invalid_argument, "cursor", "malformed cursor")));
      q.after_id = *c;
    }
    ask<task_page>(ctx_.store, reply, [](task_page& p) { return json_response(200, page_json(p)); },
        list_tasks_atom::value, q);
  }

  void get_task_route(uint64_t id, reply_fn& reply) {
    ask<task>(ctx_.store, reply, [](task& t) { return json_response(200, task_view(t)); },
        get_task_atom::value, std::string(default_tenant), id);
  }

  /// Read the stored task, merge the body over it, validate, and commit with the
  /// version read (or the one the client sent): a concurrent change gives 409.
  void update_task_route(uint64_t id, http_request& req, reply_fn& reply) {
    auto body = parse_json(req.body);
    if (!body) return reply(error_response(body.error()));
    auto ctx = ctx_;
    auto patch = std::make_shared<json::value>(std::move(*body));
    ctx.sys->spawn([ctx, id, patch, reply](caf::event_based_actor* self) {
      self->request(ctx.store, ctx.timeout, get_task_atom::value, std::string(default_tenant), id)
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
    delete_task c{default_tenant, id, 0};
    if (auto i = req.query.find("version"); i != req.query.end()) {
      auto v = parse_u64(i->second);
      if (!v)
        return reply(error_response(
            make_error(errc::invalid_argument, "version", "version must be an integer")));
      c.expected_version = *v;
    }
    propose(command{c}, reply, [](applied&) { return http_response{204, "", "application/json"}; });
  }

  void cluster(reply_fn& reply) {
    ask<raft_status>(ctx_.raft, reply,
        [](raft_status& s) {
          json::object member = to_json(s).as_object();
          member["id"] = s.node_id;
          member["reachable"] = true;
          json::object o;
          o["leader"] = s.leader_id;
          o["term"] = s.term;
          o["members"] = json::array{member};
          return json_response(200, o);
        },
        raft_status_atom::value);
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

  /// Sends `xs...` to `hdl` from a bridge actor and answers with `on_ok(result)`.
  template <class Result, class Handle, class OnOk, class... Ts>
  void ask(const Handle& hdl, reply_fn& reply, OnOk on_ok, Ts... xs) {
    auto timeout = ctx_.timeout;
    ctx_.sys->spawn([=](caf::event_based_actor* self) {
      self->request(hdl, timeout, xs...)
          .then([=](Result& result) { reply(on_ok(result)); },
                [=](caf::error& e) { reply(error_response(e)); });
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
};

}  // namespace

unsigned http_status(const caf::error& err) {
  switch (view(err).code) {
    case errc::invalid_argument: return 400;
    case errc::not_found: return 404;
    case errc::already_exists:
    case errc::version_conflict:
    case errc::illegal_transition: return 409;
    case errc::payload_too_large: return 413;
    case errc::not_leader:
    case errc::unavailable: return 503;
    default: return 500;
  }
}

handler_fn make_api(api_context ctx) {
  auto a = std::make_shared<api>(std::move(ctx));
  return [a](http_request req, reply_fn reply) { (*a)(std::move(req), std::move(reply)); };
}

}  // namespace aisched::gateway
