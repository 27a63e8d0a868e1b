// How the REST handlers (gateway/api.cpp, gateway/task_routes.cpp) reach the
// actors: ask() sends a request from a short-lived bridge actor (or answers a
// point read of the store inline, see point_reads), ask_leader() retries a
// trigger request on the leader, propose() commits a command through raft.
// Each calls the reply exactly once, with on_ok(result) or the error.
#pragma once

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "gateway/api.hpp"
#include "common/cluster_link.hpp"
#include "proto/errors.hpp"

namespace aisched::gateway {

/// `s` as an unsigned integer; nullopt unless it is all digits.
inline std::optional<uint64_t> parse_u64(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

/// Reads the optional `limit` query parameter (1..1000) into `limit`.
inline caf::error read_limit(const http_request& req, uint32_t& limit) {
  auto i = req.query.find("limit");
  if (i == req.query.end()) return {};
  auto v = parse_u64(i->second);
  if (!v || *v < 1 || *v > 1000)
    return make_error(errc::invalid_argument, "limit",
                      "limit must be between 1 and 1000");
  limit = static_cast<uint32_t>(*v);
  return {};
}

namespace detail {

/// The point reads ask() serves inline (see point_reads); nullopt: not set up.
inline std::optional<caf::expected<proto::task>> inline_read(const api_context& ctx,
                                                             proto::get_task_atom,
                                                             const std::string& tenant,
                                                             uint64_t id) {
  if (!ctx.reads.task) return std::nullopt;
  return ctx.reads.task(tenant, id);
}
inline std::optional<caf::expected<proto::instance>> inline_read(const api_context& ctx,
                                                                 proto::get_instance_atom,
                                                                 const std::string& tenant,
                                                                 const std::string& id) {
  if (!ctx.reads.instance) return std::nullopt;
  return ctx.reads.instance(tenant, id);
}
template <class... Ts>
std::nullopt_t inline_read(const api_context&, const Ts&...) {
  return std::nullopt;
}

}  // namespace detail

/// Sends `xs...` to `hdl` from a bridge actor and answers with `on_ok(result)`;
/// a point read of the store is answered inline instead.
template <class Result, class Handle, class OnOk, class... Ts>
void ask(const api_context& ctx, const Handle& hdl, const reply_fn& reply, OnOk on_ok, Ts... xs) {
  if constexpr (std::is_same_v<Handle, proto::store_actor>) {
    auto r = detail::inline_read(ctx, xs...);
    if constexpr (!std::is_same_v<decltype(r), std::nullopt_t>) {
      if (r) return *r ? reply(on_ok(**r)) : reply(error_response(r->error()));
    }
  }
  auto timeout = ctx.timeout;
  ctx.sys->spawn([=](caf::event_based_actor* self) {
    self->request(hdl, timeout, xs...)
        .then([=](Result& result) { reply(on_ok(result)); },
              [=](caf::error& e) { reply(error_response(e)); });
  });
}

/// Like ask() to the trigger, but a follower's trigger answers not_leader:
/// then the request goes to the leader's trigger, found through the leader's
/// endpoint, so manual runs, events and backfills work on any member.
template <class Result, class OnOk, class... Ts>
void ask_leader(const api_context& ctx, const reply_fn& reply, OnOk on_ok, Ts... xs) {
  using namespace proto;
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

/// Commits `cmd` through the raft actor and answers with `on_ok(applied)`.
template <class OnOk>
void propose(const api_context& ctx, proto::command cmd, const reply_fn& reply, OnOk on_ok) {
  ask<proto::applied>(ctx, ctx.raft, reply, [on_ok](proto::applied& a) { return on_ok(a); },
                      proto::propose_atom::value, std::move(cmd));
}

}  // namespace aisched::gateway
