// Secrets over REST; see secrets_routes.hpp.
#include "gateway/secrets_routes.hpp"

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "common/clock.hpp"
#include "gateway/api.hpp"
#include "proto/errors.hpp"
#include "proto/json.hpp"
#include "proto/secret_types.hpp"
#include "storage/secret_keeper.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

constexpr size_t max_value_bytes = 64 * 1024;
constexpr const char* disabled_message =
    "secrets are disabled on this node: start every member with --secrets-key-file";

/// 501 secrets_disabled: a code of its own (no actor answers it, so errc has none).
/// Not 503: a node without a key stays so until restarted with one, and clients
/// read a 503 as "retry later".
http_response disabled() {
  return error_response(501, "secrets_disabled", disabled_message, "secrets");
}

json::value meta_json(const secret_record& s) {
  json::object o;
  o["name"] = s.name;
  o["tenant"] = s.tenant;
  if (s.version != 0) o["version"] = s.version;
  o["set_by"] = s.set_by;
  o["set_at"] = format_rfc3339(s.set_at);
  if (s.created_at != 0) o["created_at"] = format_rfc3339(s.created_at);
  return o;
}

/// The secret's name from the path, or the 400.
caf::error check_name(const std::string& name) {
  if (valid_secret_name(name)) return {};
  return make_error(errc::invalid_argument, "name",
                    "name: 1-128 of A-Z, a-z, 0-9, '_', '.', '-'");
}

/// The value of a PUT body {"value": "..."}; nothing else is accepted.
caf::expected<std::string> read_value(const std::string& body) {
  auto v = parse_json(body);
  if (!v) return v.error();
  if (!v->is_object()) return make_error(errc::invalid_argument, "body", "expected an object");
  for (auto& kv : v->as_object())
    if (kv.key() != "value")
      return make_error(errc::invalid_argument, std::string(kv.key()),
                        std::string(kv.key()) + ": unknown field");
  auto i = v->as_object().find("value");
  if (i == v->as_object().end() || !i->value().is_string() || i->value().as_string().empty())
    return make_error(errc::invalid_argument, "value", "value: a non-empty string is required");
  if (i->value().as_string().size() > max_value_bytes)
    return make_error(errc::invalid_argument, "value", "value: at most 64 KiB");
  return std::string(i->value().as_string());
}

/// Proposes the sealed secret, first the tenant's data key when it has none.
/// `retry_seal`: another gateway created the tenant's key meanwhile (ours
/// lost): seal again under the winner's, once.
void propose_sealed(const api_context& ctx, storage::secret_keeper::sealed_secret s,
                    std::string value, reply_fn reply, bool retry_seal) {
  ctx.sys->spawn([=](caf::event_based_actor* self) {
    auto put = [=](secret_record r) {
      self->request(ctx.raft, ctx.timeout, propose_atom::value, command{put_secret{r}})
          .then([=](applied&) { reply(json_response(200, meta_json(r))); },
                [=](caf::error& e) { reply(error_response(e)); });
    };
    if (!s.first_key) return put(s.record);
    self->request(ctx.raft, ctx.timeout, propose_atom::value, command{*s.first_key})
        .then([=](applied&) { put(s.record); },
              [=](caf::error& e) {
                if (view(e).code != errc::already_exists || !retry_seal)
                  return reply(error_response(e));
                auto again =
                    ctx.secrets->seal(s.record.tenant, s.record.name, value, system_now_ms());
                if (!again) return reply(error_response(again.error()));
                if (again->first_key) {
                  // This member has not applied the winner's key yet.
                  auto res = error_response(make_error(
                      errc::unavailable, "", "the tenant's data key is being created; retry"));
                  res.headers.emplace_back("Retry-After", "1");
                  return reply(std::move(res));
                }
                again->record.set_by = s.record.set_by;
                propose_sealed(ctx, std::move(*again), value, reply, false);
              });
  });
}

bool enabled(const api_context& ctx) { return ctx.secrets && ctx.secrets->enabled(); }

}  // namespace

void list_secrets(route_call& c) {
  // Names are stored in clear: listing them needs no key.
  if (!c.ctx.secrets) return c.reply(disabled());
  auto xs = c.ctx.secrets->list(c.req.who.tenant);
  if (!xs) return c.reply(error_response(xs.error()));
  json::array items;
  for (auto& s : *xs) items.push_back(meta_json(s));
  c.reply(json_response(
      200, json::object{{"items", std::move(items)}, {"enabled", enabled(c.ctx)}}));
}

void put_secret_route(route_call& c) {
  // Bad input is a 400 naming the field whether or not this node can seal.
  if (auto err = check_name(c.param())) return c.reply(error_response(err));
  auto value = read_value(c.req.body);
  if (!value) return c.reply(error_response(value.error()));
  if (!enabled(c.ctx)) return c.reply(disabled());
  auto s = c.ctx.secrets->seal(c.req.who.tenant, c.param(), *value, system_now_ms());
  if (!s) return c.reply(error_response(s.error()));
  s->record.set_by = c.req.who.subject;
  propose_sealed(c.ctx, std::move(*s), std::move(*value), c.reply, true);
}

void delete_secret_route(route_call& c) {
  if (auto err = check_name(c.param())) return c.reply(error_response(err));
  if (!enabled(c.ctx)) return c.reply(disabled());
  auto reply = c.reply;
  auto ctx = c.ctx;
  delete_secret cmd{c.req.who.tenant, c.param()};
  ctx.sys->spawn([=](caf::event_based_actor* self) {
    self->request(ctx.raft, ctx.timeout, propose_atom::value, command{cmd})
        .then([=](applied&) { reply(http_response{204, "", "application/json"}); },
              [=](caf::error& e) { reply(error_response(e)); });
  });
}

void rotate_secrets_key(route_call& c) {
  if (!enabled(c.ctx)) return c.reply(disabled());
  auto cmd = c.ctx.secrets->rewrap_all();
  if (!cmd) return c.reply(error_response(cmd.error()));
  auto n = cmd->keys.size();
  auto check = c.ctx.secrets->key_check();
  auto reply = c.reply;
  auto ctx = c.ctx;
  ctx.sys->spawn([=, cmd = std::move(*cmd)](caf::event_based_actor* self) {
    self->request(ctx.raft, ctx.timeout, propose_atom::value, command{cmd})
        .then(
            [=](applied&) {
              reply(json_response(200, json::object{{"rewrapped", n}, {"key_check", check}}));
            },
            [=](caf::error& e) { reply(error_response(e)); });
  });
}

caf::error check_secret_refs(const api_context& ctx, const task& t) {
  // field -> names it refers to
  std::vector<std::pair<std::string, std::set<std::string>>> refs;
  for (auto& [var, name] : t.secrets) refs.push_back({"secrets." + var, {name}});
  if (t.kind == task_kind::http) {
    for (auto& [h, v] : t.http.headers) refs.push_back({"http.headers." + h, secret_refs(v)});
    refs.push_back({"http.body", secret_refs(t.http.body)});
  }
  for (auto& [field, names] : refs) {
    if (names.empty()) continue;
    if (!enabled(ctx))
      return make_error(errc::invalid_argument, field, field + ": " + disabled_message);
    for (auto& name : names) {
      auto there = ctx.secrets->exists(t.tenant, name);
      if (!there) return there.error();
      if (!*there)
        return make_error(errc::invalid_argument, field,
                          field + ": secret '" + name + "' does not exist in tenant " + t.tenant);
    }
  }
  return {};
}

}  // namespace aisched::gateway
