// Worker load history routes; see load_history_route.hpp.
#include "gateway/load_history_route.hpp"

#include <algorithm>
#include <set>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <map>

#include "common/clock.hpp"
#include "gateway/access.hpp"
#include "proto/errors.hpp"
#include "proto/worker_id.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

constexpr duration_ms default_window = 3'600'000;  // the last hour
constexpr uint32_t max_samples = 50'000;           // per answer (about a week of one worker)

json::object item_json(const load_sample& s) {
  return {{"at", format_rfc3339(s.at)},
          {"load", s.load},
          {"max_load", s.max_load},
          {"cpu_percent", s.cpu_percent},
          {"memory_percent", s.memory_percent}};
}

/// Reads `name` from the query as RFC 3339; `fallback` when absent.
caf::expected<unix_ms> time_param(const http_request& req, const char* name, unix_ms fallback) {
  auto i = req.query.find(name);
  if (i == req.query.end() || i->second.empty()) return fallback;
  auto t = parse_rfc3339(i->second);
  if (!t)
    return make_error(errc::invalid_argument, name,
                      std::string(name) + " must be an RFC 3339 time, got '" + i->second + "'");
  return *t;
}

/// One worker's samples (`worker_id` set, scoped: proto::scoped_worker_id) or
/// every worker's (""); the answer names workers as the caller's tenant does.
void load_history_route(const api_context& ctx, const http_request& req,
                        const std::string& worker_id, reply_fn reply) {
  auto now = system_now_ms();
  auto until = time_param(req, "until", now);
  if (!until) return reply(error_response(until.error()));
  auto since = time_param(req, "since", *until - default_window);
  if (!since) return reply(error_response(since.error()));
  if (*since > *until)
    return reply(error_response(
        make_error(errc::invalid_argument, "since", "since must not be after until")));
  load_query q{worker_id, *since, *until, max_samples};
  auto one = !worker_id.empty();
  auto tenant = req.who.tenant;
  ctx.sys->spawn([ctx, q, one, reply, tenant](caf::event_based_actor* self) {
    auto answer = [=](const load_history& h) {
      json::object o;
      if (one) {
        json::array items;
        for (auto& s : h.items) items.push_back(item_json(s));
        o["worker_id"] = api_worker_id(tenant, q.worker_id);
        o["items"] = std::move(items);
      } else {
        std::map<std::string, json::array> by_worker;
        for (auto& s : h.items) by_worker[s.worker_id].push_back(item_json(s));
        json::object workers;
        for (auto& [id, items] : by_worker) workers[api_worker_id(tenant, id)] = std::move(items);
        o["workers"] = std::move(workers);
      }
      o["since"] = format_rfc3339(q.since);
      o["until"] = format_rfc3339(q.until);
      if (h.truncated) o["truncated"] = true;
      reply(json_response(200, o));
    };
    auto show = [=](load_history h) {
      // With tenants, a caller sees only its own tenant's workers' history.
      if (!ctx.auth.enabled) return answer(h);
      self->request(ctx.router, ctx.timeout, list_workers_atom::value)
          .then(
              [=](worker_list& l) mutable {
                std::set<std::string> own;
                for (auto& w : l.items)
                  if (w.tenant == tenant) own.insert(w.id);
                auto& xs = h.items;
                xs.erase(std::remove_if(xs.begin(), xs.end(),
                                        [&](const load_sample& s) { return !own.count(s.worker_id); }),
                         xs.end());
                answer(h);
              },
              [=](caf::error& e) { reply(error_response(e)); });
    };
    self->request(ctx.store, ctx.timeout, load_history_atom::value, q)
        .then(
            [=](load_history& h) {
              if (!one || !h.items.empty()) return show(std::move(h));
              // No samples: an error only for a worker nobody knows (a new one has none yet).
              self->request(ctx.router, ctx.timeout, list_workers_atom::value)
                  .then(
                      [=](worker_list& l) {
                        for (auto& w : l.items)
                          if (w.id == q.worker_id && (!ctx.auth.enabled || w.tenant == tenant))
                            return answer(h);
                        reply(error_response(make_error(
                            errc::not_found, "id",
                            "no worker '" + api_worker_id(tenant, q.worker_id) + "'")));
                      },
                      [=](caf::error&) { answer(h); });
            },
            [=](caf::error& e) { reply(error_response(e)); });
  });
}

}  // namespace

void list_load_history(route_call& c) { load_history_route(c.ctx, c.req, "", c.reply); }

void get_worker_load_history(route_call& c) {
  auto ctx = c.ctx;
  auto reply = c.reply;
  with_own_worker(
      ctx, c.req.who.tenant, c.param(), reply,
      [ctx, reply, req = c.req](auto& scoped) { load_history_route(ctx, req, scoped, reply); },
      true);
}

}  // namespace aisched::gateway
