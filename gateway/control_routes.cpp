// Pool and calendar routes; see control_routes.hpp.
#include "gateway/control_routes.hpp"

#include <memory>

#include <boost/json.hpp>

#include "common/clock.hpp"
#include "gateway/ask.hpp"
#include "proto/json.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

/// The {name} of the route, or the 400 answered.
bool name_ok(route_call& c) {
  if (auto err = validate_control_name(c.param())) {
    c.reply(error_response(err));
    return false;
  }
  return true;
}

template <class T>
json::value list_json(const std::vector<T>& xs) {
  json::array items;
  for (auto& x : xs) items.push_back(to_json(x));
  return json::object{{"items", std::move(items)}};
}

template <class T>
const T* named(const std::vector<T>& xs, const std::string& name) {
  for (auto& x : xs)
    if (x.name == name) return &x;
  return nullptr;
}

template <class T>
http_response one_or_404(const std::vector<T>& xs, const std::string& name, const char* what) {
  if (auto* x = named(xs, name)) return json_response(200, to_json(*x));
  return error_response(
      make_error(errc::not_found, "name", std::string(what) + " '" + name + "' does not exist"));
}

}  // namespace

void list_pools(route_call& c) {
  ask<controls>(c.ctx, c.ctx.store, c.reply,
                [](controls& x) { return json_response(200, list_json(x.pools)); },
                controls_atom::value, c.req.who.tenant);
}

void get_pool(route_call& c) {
  if (!name_ok(c)) return;
  auto name = c.param();
  ask<controls>(c.ctx, c.ctx.store, c.reply,
                [name](controls& x) { return one_or_404(x.pools, name, "pool"); },
                controls_atom::value, c.req.who.tenant);
}

void put_pool_route(route_call& c) {
  if (!name_ok(c)) return;
  auto body = parse_json(c.req.body);
  if (!body) return c.reply(error_response(body.error()));
  pool base;
  base.tenant = c.req.who.tenant;
  base.name = c.param();
  base.updated_at = system_now_ms();
  auto p = pool_from_json(*body, base);
  if (!p) return c.reply(error_response(p.error()));
  propose(c.ctx, command{put_pool{std::move(*p)}}, c.reply,
          [](applied& a) { return json_response(200, to_json(a.pools.at(0))); });
}

void list_calendars(route_call& c) {
  ask<controls>(c.ctx, c.ctx.store, c.reply,
                [](controls& x) { return json_response(200, list_json(x.calendars)); },
                controls_atom::value, c.req.who.tenant);
}

void get_calendar(route_call& c) {
  if (!name_ok(c)) return;
  auto name = c.param();
  ask<controls>(c.ctx, c.ctx.store, c.reply,
                [name](controls& x) { return one_or_404(x.calendars, name, "calendar"); },
                controls_atom::value, c.req.who.tenant);
}

void put_calendar_route(route_call& c) {
  if (!name_ok(c)) return;
  auto body = parse_json(c.req.body);
  if (!body) return c.reply(error_response(body.error()));
  calendar base;
  base.tenant = c.req.who.tenant;
  base.name = c.param();
  base.updated_at = system_now_ms();
  auto cal = calendar_from_json(*body, base);
  if (!cal) return c.reply(error_response(cal.error()));
  propose(c.ctx, command{put_calendar{std::move(*cal)}}, c.reply,
          [](applied& a) { return json_response(200, to_json(a.calendars.at(0))); });
}

void delete_calendar_route(route_call& c) {
  if (!name_ok(c)) return;
  propose(c.ctx, command{delete_calendar{c.req.who.tenant, c.param()}}, c.reply,
          [](applied&) { return http_response{204, "", "application/json"}; });
}

void reply_task_view(const api_context& ctx, const reply_fn& reply, int status, task t) {
  if (t.exclude_calendar.empty()) return reply(json_response(status, task_view(t)));
  auto tenant = t.tenant;
  ask<controls>(
      ctx, ctx.store, reply,
      [status, t = std::move(t)](controls& x) {
        return json_response(status, task_view(t, named(x.calendars, t.exclude_calendar)));
      },
      controls_atom::value, tenant);
}

}  // namespace aisched::gateway
