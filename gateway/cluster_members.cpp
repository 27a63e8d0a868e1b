// Membership changes over REST; see cluster_members.hpp.
#include "gateway/cluster_members.hpp"

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "proto/errors.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

bool valid_id(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

bool valid_host_port(const std::string& s) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) return false;
  unsigned long port = 0;
  for (auto i = colon + 1; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    port = port * 10 + static_cast<unsigned long>(s[i] - '0');
    if (port > 65535) return false;
  }
  return port > 0;
}

caf::expected<member_info> member_from_body(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec || !v.is_object())
    return make_error(errc::invalid_argument, "", "the body must be a JSON object");
  member_info m;
  m.voter = false;
  for (auto& [k, x] : v.as_object()) {
    std::string* field = k == "id"             ? &m.id
                         : k == "cluster_addr" ? &m.cluster_addr
                         : k == "http_addr"    ? &m.http_addr
                                               : nullptr;
    if (field == nullptr)
      return make_error(errc::invalid_argument, std::string(k), "unknown field");
    if (!x.is_string()) return make_error(errc::invalid_argument, std::string(k), "must be a string");
    *field = std::string(x.as_string());
  }
  if (!valid_id(m.id))
    return make_error(errc::invalid_argument, "id",
                      "required: 1-64 letters, digits, '-', '_' or '.'");
  if (!valid_host_port(m.cluster_addr))
    return make_error(errc::invalid_argument, "cluster_addr", "required: HOST:PORT");
  if (!m.http_addr.empty() && !valid_host_port(m.http_addr))
    return make_error(errc::invalid_argument, "http_addr", "must be HOST:PORT");
  return m;
}

void ask_raft(const api_context& ctx, membership_change change, reply_fn reply) {
  ctx.sys->spawn([ctx, change, reply](caf::event_based_actor* self) {
    self->request(ctx.raft, ctx.timeout, change_members_atom::value, change)
        .then(
            [=](applied& a) {
              json::object o{{"id", change.member.id}, {"index", a.index}};
              if (change.add) {
                o["role"] = "learner";
                o["cluster_addr"] = change.member.cluster_addr;
                o["http_addr"] = change.member.http_addr;
              } else {
                o["removed"] = true;
              }
              reply(json_response(change.add ? 201 : 200, o));
            },
            [=](caf::error& e) { reply(error_response(e)); });
  });
}

}  // namespace

void add_cluster_member(route_call& c) {
  auto m = member_from_body(c.req.body);
  if (!m) return c.reply(error_response(m.error()));
  ask_raft(c.ctx, membership_change{true, std::move(*m)}, c.reply);
}

void remove_cluster_member(route_call& c) {
  ask_raft(c.ctx, membership_change{false, member_info{c.param(), true, "", ""}}, c.reply);
}

}  // namespace aisched::gateway
