// GET /api/v1/cluster; see cluster_view.hpp.
#include "gateway/cluster_view.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "common/cluster_link.hpp"
#include "proto/json.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

/// This member's status and what the others answered about themselves.
struct gather {
  raft_status local;
  std::map<std::string, raft_status> answers;  // peer id -> its own status
  size_t waiting = 0;                         // peers not answered yet
};

json::value cluster_json(const gather& g) {
  auto member = [](const raft_status& s, bool reachable, bool self) {
    auto m = to_json(s).as_object();  // the member's own view
    m["reachable"] = reachable;
    m["self"] = self;
    return m;
  };
  auto& s = g.local;
  json::array members;
  members.push_back(member(s, true, true));
  for (auto& p : s.peers) {
    json::object m;
    if (auto a = g.answers.find(p.id); a != g.answers.end()) {
      m = member(a->second, true, false);
    } else {
      // Unreachable from here: what this member knows of it.
      m["id"] = p.id;
      m["role"] = p.id == s.leader_id ? "leader" : "unknown";
      m["http_addr"] = "";
      m["reachable"] = false;
      m["self"] = false;
    }
    m["address"] = p.address;
    // Whether it votes, as this member's membership says (a learner that
    // answered may not know yet that it was promoted).
    m["voter"] = p.voter;
    auto role = m["role"].is_string() ? std::string(m["role"].as_string()) : std::string{};
    if (!p.voter && (role == "follower" || role == "unknown")) m["role"] = "learner";
    if (s.role == "leader") m["match_index"] = p.match_index;
    if (!p.refused.empty()) m["refused"] = p.refused;
    members.push_back(std::move(m));
  }
  // The builds the reachable members run: more than one while a group is
  // being upgraded member by member (README "Upgrading").
  std::set<std::string> builds{s.version};
  for (auto& [id, a] : g.answers) builds.insert(a.version);
  json::array versions;
  for (auto& b : builds) versions.emplace_back(b);
  json::object o;
  o["node_id"] = s.node_id;
  o["leader"] = s.leader_id;
  o["term"] = s.term;
  o["cluster_id"] = s.cluster_id;
  o["versions"] = std::move(versions);
  o["members"] = std::move(members);
  return o;
}

}  // namespace

void cluster_view(const api_context& ctx, reply_fn reply) {
  ctx.sys->spawn([ctx, reply](caf::event_based_actor* self) {
    self->request(ctx.raft, ctx.timeout, raft_status_atom::value)
        .then(
            [=](raft_status& s) {
              auto g = std::make_shared<gather>();
              g->local = std::move(s);
              g->local.http_addr = ctx.http_addr;
              g->waiting = g->local.peers.size();
              auto finish = [g, reply] { reply(json_response(200, cluster_json(*g))); };
              if (g->waiting == 0) return finish();
              for (auto& p : g->local.peers) {
                auto id = p.id;
                auto answered = [g, finish, id](std::optional<raft_status> st) {
                  if (st) g->answers[id] = std::move(*st);
                  if (--g->waiting == 0) finish();
                };
                // Only over a connection raft already has (known_member, never
                // a dial): a second connection between two members makes CAF
                // 0.17 keep one of them unmapped (see raft::dials), and the
                // member it carries raft's messages to stops hearing them. That
                // raft reports a peer reachable does not mean it still holds
                // its endpoint (the link may have gone since): unreachable then.
                auto ep = p.reachable ? proto::known_member(self->system(), p.address)
                                      : endpoint_actor{};
                if (!ep) {
                  answered(std::nullopt);
                  continue;
                }
                self->request(ep, std::chrono::seconds(1), raft_status_atom::value)
                    .then([=](raft_status& st) { answered(std::move(st)); },
                          [=](caf::error&) { answered(std::nullopt); });
              }
            },
            [=](caf::error& e) { reply(error_response(e)); });
  });
}

void get_cluster(route_call& c) { cluster_view(c.ctx, c.reply); }

}  // namespace aisched::gateway
