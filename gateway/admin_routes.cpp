// /api/v1/admin routes; see admin_routes.hpp.
#include "gateway/admin_routes.hpp"

#include <boost/json.hpp>

#include "gateway/api.hpp"
#include "proto/errors.hpp"
#include "proto/json.hpp"
#include "common/log.hpp"

namespace aisched::gateway {

namespace json = boost::json;

namespace {

http_response level_view() {
  return json_response(200, json::object{{"level", log::level_name(log::current_level())}});
}

}  // namespace

void get_log_level(route_call& c) { c.reply(level_view()); }

void set_log_level(route_call& c) {
  const auto& req = c.req;
  auto& reply = c.reply;
  auto body = proto::parse_json(req.body);
  if (!body) return reply(error_response(body.error()));
  auto* o = body->if_object();
  auto* given = o ? o->if_contains("level") : nullptr;
  log::level lvl = log::level::info;
  if (!given || !given->is_string() ||
      !log::parse_level(std::string(given->as_string().data(), given->as_string().size()), lvl))
    return reply(error_response(make_error(errc::invalid_argument, "level",
                                           "level must be one of debug, info, warn, error")));
  auto before = log::current_level();
  log::set_level(lvl);
  // Logged at warn so the change is visible whatever the new level is.
  log::warn(
      "log level changed",
      {{"actor", "gateway"}, {"from", log::level_name(before)}, {"to", log::level_name(lvl)}});
  reply(level_view());
}

}  // namespace aisched::gateway
