// The auth gate and the audit recorder; see access.hpp.
#include "gateway/access.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>
#include <unordered_map>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "common/clock.hpp"
#include "proto/errors.hpp"
#include "proto/worker_id.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

// -- the audit recorder ----------------------------------------------------------

constexpr size_t max_batch = 1000;        // entries per record_audit proposal
constexpr size_t max_queued = 100'000;    // beyond this the oldest are dropped
constexpr auto batch_delay = std::chrono::milliseconds(5);
constexpr auto retry_delay = std::chrono::milliseconds(500);

struct recorder_state {
  std::deque<audit_entry> queue;
  bool scheduled = false;
  bool in_flight = false;
  uint64_t dropped = 0;
  static inline const char* name = "audit_recorder";
};

/// Keeps at most one proposal in flight; what arrives meanwhile waits for the
/// next batch. A failed proposal (no leader yet) is retried with its entries.
caf::behavior audit_recorder(caf::stateful_actor<recorder_state>* self, raft_actor raft,
                             std::chrono::milliseconds timeout) {
  auto schedule = [=](std::chrono::milliseconds delay) {
    if (self->state.scheduled) return;
    self->state.scheduled = true;
    self->delayed_send(self, delay, flush_atom::value);
  };
  // Linked: when the node stops its raft actor, the recorder stops too (what
  // is still queued then, a few ms of entries, is lost with the process).
  self->link_to(caf::actor_cast<caf::actor>(raft));
  return {
      [=](audit_entry& e) {
        auto& st = self->state;
        if (st.queue.size() >= max_queued) {
          st.queue.pop_front();
          ++st.dropped;
        }
        st.queue.push_back(std::move(e));
        schedule(batch_delay);
      },
      [=](flush_atom) {
        auto& st = self->state;
        st.scheduled = false;
        if (st.in_flight || st.queue.empty()) return;
        auto n = std::min(max_batch, st.queue.size());
        auto batch = std::make_shared<std::vector<audit_entry>>(
            std::make_move_iterator(st.queue.begin()),
            std::make_move_iterator(st.queue.begin() + static_cast<std::ptrdiff_t>(n)));
        st.queue.erase(st.queue.begin(), st.queue.begin() + static_cast<std::ptrdiff_t>(n));
        st.in_flight = true;
        self->request(raft, timeout, propose_atom::value, command{record_audit{*batch}})
            .then(
                [=](applied&) {
                  self->state.in_flight = false;
                  if (!self->state.queue.empty()) schedule(batch_delay);
                },
                [=](caf::error&) {
                  auto& s = self->state;
                  s.in_flight = false;
                  // Put them back in front (in order) unless that overflows.
                  if (s.queue.size() + batch->size() <= max_queued)
                    s.queue.insert(s.queue.begin(), batch->begin(), batch->end());
                  else
                    s.dropped += batch->size();
                  schedule(retry_delay);
                });
      },
  };
}

/// The error code of an error answer (set by error_response), for the audit.
std::string result_of(const http_response& res) {
  if (res.status < 400) return "ok";
  if (!res.error_code.empty()) return res.error_code;
  return "http_" + std::to_string(res.status);
}

/// A created object's id or name, from a successful answer's body.
std::string created_target(const http_response& res) {
  if (res.status >= 300 || res.stream) return "";
  json::error_code ec;
  auto v = json::parse(res.body, ec);
  if (ec || !v.is_object()) return "";
  for (auto key : {"id", "name"})
    if (auto* x = v.as_object().if_contains(key)) {
      if (x->is_string()) return std::string(x->as_string());
      if (x->is_int64()) return std::to_string(x->as_int64());
      if (x->is_uint64()) return std::to_string(x->as_uint64());
    }
  return "";
}

caf::error unauthenticated(std::string why) {
  return make_error(errc::unauthenticated, "Authorization", std::move(why));
}

int64_t unix_seconds() { return system_now_ms() / 1000; }

}  // namespace

// -- token cache -----------------------------------------------------------------

/// API tokens by the hash of their secret, kept 2 s: a revocation reaches
/// every node within that (and at once on the node that revoked).
struct access::token_cache {
  struct entry {
    caf::expected<principal> who{caf::error{}};
    std::chrono::steady_clock::time_point at;
  };
  static constexpr auto ttl = std::chrono::seconds(2);
  std::mutex mtx;
  std::unordered_map<std::string, entry> map;

  std::optional<caf::expected<principal>> find(const std::string& hash) {
    std::lock_guard<std::mutex> guard(mtx);
    auto i = map.find(hash);
    if (i == map.end() || steady_now() - i->second.at > ttl)
      return std::nullopt;
    return i->second.who;
  }
  void put(const std::string& hash, caf::expected<principal> who) {
    std::lock_guard<std::mutex> guard(mtx);
    if (map.size() > 10'000) map.clear();  // bounded: garbage tokens cannot grow it
    map[hash] = entry{std::move(who), steady_now()};
  }
};

access::access(api_context ctx) : ctx_(std::move(ctx)), cache_(std::make_shared<token_cache>()) {
  recorder_ = ctx_.sys->spawn(audit_recorder, ctx_.raft, ctx_.timeout);
  if (ctx_.auth.enabled) ctx_.auth.logins->dummy_hash();  // its ~20 ms now, not in a login
}

access::~access() = default;

void access::forget_tokens() {
  std::lock_guard<std::mutex> guard(cache_->mtx);
  cache_->map.clear();
}

void access::record(audit_entry e) {
  e.node = ctx_.node_id;
  if (e.at == 0) e.at = system_now_ms();
  caf::anon_send(recorder_, std::move(e));
}

void access::admit(const route& r, path_params params, http_request req, reply_fn reply) {
  if (!ctx_.auth.enabled) {
    principal everyone{"anonymous", "default", role::cluster_admin, false};
    return proceed(r, params, std::move(req), std::move(reply), std::move(everyone));
  }
  if (!r.min) {
    req.who = principal{"anonymous", "default", role::viewer, false};
    route_call c{ctx_, *this, req, reply, params};
    return r.handler(c);
  }
  auto cred = bearer_of(req.headers);
  if (cred.empty())
    return reply(error_response(unauthenticated("missing 'Authorization: Bearer <token>'")));
  if (cred.rfind(token_prefix, 0) != 0) {
    auto who = verify_jwt(ctx_.auth, cred, unix_seconds());
    if (!who) return reply(error_response(who.error()));
    return proceed(r, params, std::move(req), std::move(reply), std::move(*who));
  }
  auto shared = std::make_shared<std::tuple<http_request, reply_fn, path_params>>(
      std::move(req), std::move(reply), std::move(params));
  resolve_token(cred, [this, &r, shared](caf::expected<principal> who) {
    auto& [rq, rp, ps] = *shared;
    if (!who) return rp(error_response(who.error()));
    proceed(r, ps, std::move(rq), std::move(rp), std::move(*who));
  });
}

void access::resolve_token(const std::string& secret,
                           std::function<void(caf::expected<principal>)> done) {
  auto hash = sha256_hex(secret);
  if (auto hit = cache_->find(hash)) return done(std::move(*hit));
  auto cache = cache_;
  auto ctx = ctx_;
  ctx.sys->spawn([ctx, cache, hash, done](caf::event_based_actor* self) {
    self->request(ctx.store, ctx.timeout, get_token_atom::value, hash)
        .then(
            [=](api_token& t) {
              principal who{"token:" + t.id, t.tenant, t.r, true};
              cache->put(hash, who);
              done(who);
            },
            [=](caf::error& e) {
              if (view(e).code != errc::not_found) return done(e);  // not cached: transient
              auto bad = unauthenticated("invalid or revoked token");
              cache->put(hash, bad);
              done(bad);
            });
  });
}

void access::proceed(const route& r, const path_params& params, http_request req,
                     reply_fn reply, principal who) {
  req.who = std::move(who);
  audit_entry e;
  bool audited = !r.action.empty();
  if (audited) {
    e.subject = req.who.subject;
    e.tenant = req.who.tenant;
    e.action = std::string(r.action);
    e.target = params[0];
    if (auto v = req.headers.find("x-aisched-via"); v != req.headers.end())
      e.via = v->second.substr(0, 64);
  }
  if (r.min && req.who.r < *r.min) {
    auto err = make_error(errc::forbidden, "", "role " + std::string(name_of(req.who.r)) +
                                                   " may not " + req.method + " " + req.path);
    auto res = error_response(err);
    if (audited) {
      e.result = "forbidden";
      record(std::move(e));
    }
    return reply(std::move(res));
  }
  if (audited)
    reply = [this, e = std::move(e), reply = std::move(reply)](http_response res) mutable {
      e.result = result_of(res);
      if (e.target.empty()) e.target = created_target(res);
      record(std::move(e));
      reply(std::move(res));
    };
  route_call c{ctx_, *this, req, reply, params};
  r.handler(c);
}

void with_own_worker(const api_context& ctx, const std::string& tenant, const std::string& id,
                     reply_fn reply, std::function<void(const std::string&)> then,
                     bool allow_missing) {
  if (!ctx.auth.enabled) return then(scoped_worker_id(tenant, id));
  ctx.sys->spawn([ctx, tenant, id, reply, then, allow_missing](caf::event_based_actor* self) {
    self->request(ctx.router, ctx.timeout, list_workers_atom::value)
        .then(
            [=](worker_list& l) {
              // Only this tenant's workers count: others' are not looked at.
              auto w = std::find_if(l.items.begin(), l.items.end(), [&](const worker& x) {
                return x.tenant == tenant && api_worker_id(tenant, x.id) == id;
              });
              if (w != l.items.end()) return then(w->id);
              if (allow_missing) return then(scoped_worker_id(tenant, id));
              reply(error_response(
                  make_error(errc::not_found, "id", "worker " + id + " is not registered")));
            },
            [=](caf::error& e) { reply(error_response(e)); });
  });
}

}  // namespace aisched::gateway
