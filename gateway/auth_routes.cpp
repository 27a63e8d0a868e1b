// Login, whoami, users, tokens and the audit log; see auth_routes.hpp.
#include "gateway/auth_routes.hpp"

#include <charconv>
#include <map>
#include <memory>
#include <set>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "common/clock.hpp"
#include "proto/errors.hpp"
#include "proto/json.hpp"
#include "proto/random.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

using fields = std::map<std::string, std::string>;

/// Reads a flat object of string fields: unknown fields, non-strings and
/// missing required fields are errors naming the field.
caf::expected<fields> read_fields(const std::string& body, const std::set<std::string>& allowed,
                                  const std::set<std::string>& required) {
  auto v = parse_json(body);
  if (!v) return v.error();
  if (!v->is_object()) return make_error(errc::invalid_argument, "body", "expected an object");
  fields out;
  for (auto& kv : v->as_object()) {
    std::string k(kv.key());
    if (!allowed.count(k)) return make_error(errc::invalid_argument, k, k + ": unknown field");
    if (!kv.value().is_string())
      return make_error(errc::invalid_argument, k, k + ": must be a string");
    out[k] = std::string(kv.value().as_string());
  }
  for (auto& k : required)
    if (!out.count(k) || out[k].empty())
      return make_error(errc::invalid_argument, k, k + ": required");
  return out;
}

/// The user's name from `f`: `username`, or its alias `name` (login and user
/// create read the same field, so a client sends one spelling to both).
caf::expected<std::string> read_username(const fields& f) {
  auto u = f.find("username"), n = f.find("name");
  if (u != f.end() && n != f.end() && u->second != n->second)
    return make_error(errc::invalid_argument, "username",
                      "username: give username or its alias name, not both");
  std::string name = u != f.end() ? u->second : n != f.end() ? n->second : std::string();
  if (name.empty()) return make_error(errc::invalid_argument, "username", "username: required");
  return name;
}

/// The tenant a user or token route acts on: the caller's unless `named` (the
/// body's or query's "tenant") names another, which only the cluster admin may
/// (tenant admins administer their own tenant, nothing more).
caf::expected<std::string> tenant_named(const principal& who, const std::string* named) {
  if (!named || named->empty() || *named == who.tenant) return who.tenant;
  if (!valid_name(*named))
    return make_error(errc::invalid_argument, "tenant",
                      "tenant: 1-63 of a-z, 0-9, '_', '.', '-', starting with a letter or digit");
  if (who.r < role::cluster_admin)
    return make_error(errc::forbidden, "tenant",
                      "only the cluster admin may act on another tenant's users and tokens");
  return *named;
}

caf::expected<std::string> target_tenant(const principal& who, const fields& f) {
  auto i = f.find("tenant");
  return tenant_named(who, i == f.end() ? nullptr : &i->second);
}

caf::expected<std::string> target_tenant(const http_request& req) {
  auto i = req.query.find("tenant");
  return tenant_named(req.who, i == req.query.end() ? nullptr : &i->second);
}

caf::expected<role> read_role(const fields& f) {
  auto i = f.find("role");
  auto r = i == f.end() ? std::optional<role>{role::viewer} : parse_enum<role>(i->second);
  if (!r)
    return make_error(errc::invalid_argument, "role",
                      "role: viewer, operator, admin or cluster_admin");
  return *r;
}

/// Sends `xs...` to `hdl` from a bridge actor; answers with on_ok(result) or the error.
template <class Result, class Handle, class OnOk, class... Ts>
void ask(const api_context& ctx, const Handle& hdl, reply_fn reply, OnOk on_ok, Ts... xs) {
  auto timeout = ctx.timeout;
  ctx.sys->spawn([=](caf::event_based_actor* self) {
    self->request(hdl, timeout, xs...)
        .then([=](Result& r) { reply(on_ok(r)); },
              [=](caf::error& e) { reply(error_response(e)); });
  });
}

http_response no_content() { return http_response{204, "", "application/json"}; }

int64_t unix_seconds() { return system_now_ms() / 1000; }

// -- routes ----------------------------------------------------------------------

/// 429 `too_many_requests` with Retry-After: `v.by` (the user or the source
/// address) failed too often lately. (A REST code of its own, like
/// method_not_allowed: no actor ever answers it, so errc has none.)
http_response throttled(const login_guard::verdict& v) {
  std::string whom = std::string(v.by) == "source" ? "from this address" : "for this user";
  auto seconds = std::to_string(v.retry_after.count());
  auto res = error_response(429, "too_many_requests",
                            "too many failed logins " + whom + "; retry in " + seconds + " s",
                            v.by);
  res.headers.emplace_back("Retry-After", seconds);
  return res;
}

/// Checks a password in a detached actor (argon2 takes tens of ms of CPU on
/// purpose). Unknown users are verified against the guard's dummy hash, so
/// both take as long and the answer's timing does not tell which names exist.
/// Each attempt first passes the guard (per user and per source address),
/// counts as a failure until it succeeds, and is audited, refusals included.
void login(access& gate, http_request& req, reply_fn& reply) {
  const auto& ctx = gate.ctx();
  auto f = read_fields(req.body, {"username", "name", "password"}, {"password"});
  if (!f) return reply(error_response(f.error()));
  auto username = read_username(*f);
  if (!username) return reply(error_response(username.error()));
  if (!ctx.auth.enabled)
    return reply(error_response(make_error(errc::not_found, "", "authentication is not enabled")));
  auto name = *username, password = (*f)["password"];
  audit_entry e;
  e.subject = name;
  e.tenant = "default";
  e.action = "auth.login";
  e.target = name;
  if (auto v = req.headers.find("x-aisched-via"); v != req.headers.end()) e.via = v->second;
  auto guard = ctx.auth.logins;
  auto source = source_key(req.peer);
  auto verdict = guard->begin(name, source, steady_now());
  if (!verdict.allowed) {
    e.result = "too_many_requests";
    gate.record(std::move(e));
    return reply(throttled(verdict));
  }
  auto* g = &gate;
  ctx.sys->spawn<caf::detached>([ctx, g, guard, source, name, password, e,
                                 reply](caf::event_based_actor* self) {
    auto denied = [=](audit_entry entry) {
      entry.result = "unauthenticated";
      g->record(std::move(entry));
      reply(error_response(make_error(errc::unauthenticated, "password",
                                      "invalid username or password")));
    };
    self->request(ctx.store, ctx.timeout, get_user_atom::value, name)
        .then(
            [=](user& u) {
              auto entry = e;
              entry.tenant = u.tenant;
              if (!verify_password(u.password_hash, password)) return denied(entry);
              guard->succeeded(name, source);
              auto now = unix_seconds();
              auto token = issue_jwt(ctx.auth, u, now);
              if (!token) return reply(error_response(token.error()));
              entry.result = "ok";
              g->record(std::move(entry));
              auto expires = (now + ctx.auth.token_ttl.count()) * 1000;
              reply(json_response(200, json::object{{"token", *token},
                                                    {"expires_at", format_rfc3339(expires)},
                                                    {"role", std::string(name_of(u.r))},
                                                    {"tenant", u.tenant}}));
            },
            [=](caf::error& err) {
              if (view(err).code != errc::not_found) {
                guard->released(name, source);  // no password was tested
                return reply(error_response(err));
              }
              if (guard->bootstrap_pending) {
                guard->released(name, source);
                auto res = error_response(make_error(
                    errc::unavailable, "", "no users yet: the admin is being created; retry"));
                res.headers.emplace_back("Retry-After", "1");
                return reply(std::move(res));
              }
              verify_password(guard->dummy_hash(), password);  // as long as a known user
              denied(e);
            });
  });
}

void create_user(access& gate, http_request& req, reply_fn& reply) {
  auto f = read_fields(req.body, {"username", "name", "password", "role", "tenant"},
                       {"password"});
  if (!f) return reply(error_response(f.error()));
  auto username = read_username(*f);
  if (!username) return reply(error_response(username.error()));
  auto tenant = target_tenant(req.who, *f);
  if (!tenant) return reply(error_response(tenant.error()));
  auto r = read_role(*f);
  if (!r) return reply(error_response(r.error()));
  if (*r > req.who.r)
    return reply(error_response(
        make_error(errc::forbidden, "role", "role: a user cannot have more rights than you")));
  user u;
  u.name = *username;
  u.tenant = *tenant;
  u.r = *r;
  u.created_at = system_now_ms();
  if (!valid_name(u.name))
    return reply(error_response(make_error(
        errc::invalid_argument, "username", "username: 1-63 of a-z, 0-9, '_', '.', '-'")));
  auto password = (*f)["password"];
  if (password.size() < 8 || password.size() > 1024)
    return reply(error_response(
        make_error(errc::invalid_argument, "password", "password: 8 to 1024 characters")));
  auto ctx = gate.ctx();
  ctx.sys->spawn<caf::detached>([ctx, base = u, password, reply](caf::event_based_actor* self) {
    auto hash = hash_password(password);
    if (!hash) return reply(error_response(hash.error()));
    auto u = base;
    u.password_hash = std::move(*hash);
    self->request(ctx.raft, ctx.timeout, propose_atom::value, command{put_user{u, false}})
        .then([=](applied&) { reply(json_response(201, to_json(u))); },
              [=](caf::error& e) { reply(error_response(e)); });
  });
}

void create_token(access& gate, http_request& req, reply_fn& reply) {
  auto f = read_fields(req.body, {"name", "role", "tenant"}, {"name"});
  if (!f) return reply(error_response(f.error()));
  auto tenant = target_tenant(req.who, *f);
  if (!tenant) return reply(error_response(tenant.error()));
  auto r = read_role(*f);
  if (!r) return reply(error_response(r.error()));
  if (*r > req.who.r)
    return reply(error_response(
        make_error(errc::forbidden, "role", "role: a token cannot have more rights than you")));
  if ((*f)["name"].size() > 200)
    return reply(error_response(make_error(errc::invalid_argument, "name", "name: too long")));
  api_token t;
  t.id = "tok_" + proto::random_hex(8);
  t.name = (*f)["name"];
  t.tenant = *tenant;
  t.r = *r;
  t.created_by = req.who.subject;
  t.created_at = system_now_ms();
  auto secret = std::string(token_prefix) + proto::random_hex(24);
  t.hash = sha256_hex(secret);
  ask<applied>(
      gate.ctx(), gate.ctx().raft, reply,
      [t, secret](applied&) {
        auto v = to_json(t);
        v.as_object()["token"] = secret;  // shown once, never stored
        return json_response(201, v);
      },
      propose_atom::value, command{put_token{t}});
}

void list_audit(access& gate, http_request& req, reply_fn& reply) {
  audit_query q;
  auto tenant = target_tenant(req);
  if (!tenant) return reply(error_response(tenant.error()));
  q.tenant = *tenant;
  if (auto i = req.query.find("scope"); i != req.query.end() && i->second != "tenant") {
    if (i->second != "cluster")
      return reply(error_response(
          make_error(errc::invalid_argument, "scope", "scope: tenant or cluster")));
    if (req.who.r < role::cluster_admin)
      return reply(error_response(
          make_error(errc::forbidden, "scope", "only the cluster admin reads the cluster audit")));
    q.tenant = std::string(cluster_audit_log);
  }
  if (auto i = req.query.find("limit"); i != req.query.end()) {
    uint32_t n = 0;
    auto [p, ec] = std::from_chars(i->second.data(), i->second.data() + i->second.size(), n);
    if (ec != std::errc{} || p != i->second.data() + i->second.size() || n < 1 || n > 1000)
      return reply(error_response(
          make_error(errc::invalid_argument, "limit", "limit must be between 1 and 1000")));
    q.limit = n;
  }
  if (auto i = req.query.find("cursor"); i != req.query.end()) q.cursor = i->second;
  if (auto i = req.query.find("since"); i != req.query.end() && !i->second.empty()) {
    auto t = parse_rfc3339(i->second);
    if (!t)
      return reply(error_response(
          make_error(errc::invalid_argument, "since", "since must be an RFC 3339 time")));
    q.since = *t;
  }
  ask<audit_page>(
      gate.ctx(), gate.ctx().store, reply,
      [](audit_page& p) {
        json::array items;
        for (auto& e : p.items) items.push_back(to_json(e));
        return json_response(200, json::object{{"items", std::move(items)},
                                               {"next_cursor", p.next_cursor}});
      },
      list_audit_atom::value, q);
}

template <class List>
http_response items_json(const List& l) {
  json::array items;
  for (auto& x : l.items) items.push_back(to_json(x));
  return json_response(200, json::object{{"items", std::move(items)}});
}

/// Answers `f(tenant)` for the tenant the request names (?tenant=), or the 403.
template <class F>
void for_tenant(route_call& c, F f) {
  auto tenant = target_tenant(c.req);
  if (!tenant) return c.reply(error_response(tenant.error()));
  f(*tenant);
}

}  // namespace

void login_route(route_call& c) { login(c.gate, c.req, c.reply); }

void whoami(route_call& c) {
  const auto& w = c.req.who;
  c.reply(json_response(200, json::object{{"subject", w.subject},
                                          {"tenant", w.tenant},
                                          {"role", std::string(name_of(w.r))},
                                          {"authenticated", w.authenticated},
                                          {"auth_enabled", c.ctx.auth.enabled}}));
}

void list_users(route_call& c) {
  for_tenant(c, [&](const std::string& tenant) {
    ask<user_list>(c.ctx, c.ctx.store, c.reply, [](user_list& l) { return items_json(l); },
                   list_users_atom::value, tenant);
  });
}

void create_user_route(route_call& c) { create_user(c.gate, c.req, c.reply); }

void delete_user_route(route_call& c) {
  for_tenant(c, [&](const std::string& tenant) {
    ask<applied>(c.ctx, c.ctx.raft, c.reply, [](applied&) { return no_content(); },
                 propose_atom::value, command{delete_user{tenant, c.param()}});
  });
}

void list_tokens(route_call& c) {
  for_tenant(c, [&](const std::string& tenant) {
    ask<token_list>(c.ctx, c.ctx.store, c.reply, [](token_list& l) { return items_json(l); },
                    list_tokens_atom::value, tenant);
  });
}

void create_token_route(route_call& c) { create_token(c.gate, c.req, c.reply); }

void revoke_token(route_call& c) {
  auto* g = &c.gate;
  for_tenant(c, [&](const std::string& tenant) {
    ask<applied>(c.ctx, c.ctx.raft, c.reply,
                 [g](applied&) {
                   g->forget_tokens();  // at once here; within 2 s elsewhere
                   return no_content();
                 },
                 propose_atom::value, command{delete_token{tenant, c.param()}});
  });
}

void list_audit_route(route_call& c) { list_audit(c.gate, c.req, c.reply); }

void bootstrap_admin(const api_context& ctx, std::string admin_password) {
  auto hash = hash_password(admin_password);
  if (!hash) return;
  user u;
  u.name = "admin";
  u.tenant = "default";
  u.r = role::cluster_admin;  // the one user above tenants: membership, log level, tenants
  u.password_hash = std::move(*hash);
  u.created_at = system_now_ms();
  auto guard = ctx.auth.logins;
  guard->bootstrap_pending = true;
  // The actor captures what it needs, never the api_context: a handle to the
  // raft, store or agent actor kept alive past the node's shutdown makes the
  // actor system wait for it forever (a node that never had a leader hung on
  // SIGTERM while a self-referencing retry closure held the whole context).
  auto raft = ctx.raft;
  auto timeout = ctx.timeout;
  ctx.sys->spawn([raft, timeout, u, guard](caf::event_based_actor* self) -> caf::behavior {
    self->link_to(caf::actor_cast<caf::actor>(raft));  // stops with the node
    auto attempt = [self, raft, timeout, u, guard] {
      self->request(raft, timeout, propose_atom::value, command{put_user{u, true}})
          .then([self, guard](applied&) {
                  guard->bootstrap_pending = false;
                  self->quit();
                },
                [self, guard](caf::error& e) {
                  if (view(e).code == errc::already_exists) {
                    guard->bootstrap_pending = false;
                    return self->quit();
                  }
                  // No leader yet: try again shortly.
                  self->delayed_send(self, std::chrono::seconds(1), caf::tick_atom::value);
                });
    };
    attempt();
    return {[attempt](caf::tick_atom) { attempt(); }};
  });
}

}  // namespace aisched::gateway
