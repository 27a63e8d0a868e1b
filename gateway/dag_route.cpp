// GET /api/v1/dag; see dag_route.hpp.
#include "gateway/dag_route.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "proto/json.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

void dag_route(const api_context& ctx, const std::string& tenant, reply_fn& reply) {
  struct acc {
    json::array nodes;
    std::set<uint64_t> ids;
    std::vector<std::pair<uint64_t, uint64_t>> edges;  // upstream, downstream
    std::map<uint64_t, std::optional<instance_state>> latest;  // task -> its latest run's state
  };
  auto out = std::make_shared<acc>();
  ctx.sys->spawn([ctx, out, reply, tenant](caf::event_based_actor* self) {
    auto next = std::make_shared<std::function<void(uint64_t)>>();
    *next = [=](uint64_t after) {
      task_query q;
      q.tenant = tenant;
      q.after_id = after;
      q.limit = 1000;
      self->request(ctx.store, ctx.timeout, scan_atom::value, q)
          .then(
              [=](schedule_page& p) {
                for (size_t i = 0; i < p.tasks.size(); ++i) {
                  auto& t = p.tasks[i];
                  auto& rt = p.runtimes[i];
                  out->nodes.push_back(json::object{
                      {"id", t.id},
                      {"name", t.name},
                      {"paused", t.paused},
                      {"last_slot", rt.last_slot ? json::value(format_rfc3339(rt.last_slot))
                                                 : json::value(nullptr)},
                      {"last_state", rt.last_instance_id.empty()
                                         ? json::value(nullptr)
                                         : json::value(std::string(name_of(rt.last_state)))}});
                  out->ids.insert(t.id);
                  out->latest[t.id] = rt.last_instance_id.empty()
                                          ? std::nullopt
                                          : std::optional<instance_state>(rt.last_state);
                  for (auto up : t.depends_on) out->edges.emplace_back(up, t.id);
                }
                if (!p.next_cursor.empty() && !p.tasks.empty()) return (*next)(p.tasks.back().id);
                // Deletes drop their edges (delete_task), but state written before
                // that rule may still name a missing upstream: never draw it.
                json::array edges;
                // Why a downstream does not fire: each upstream whose latest run
                // has not succeeded (null: it never ran), on the downstream's node.
                std::map<uint64_t, json::array> waiting;
                for (auto [from, to] : out->edges) {
                  if (!out->ids.count(from)) continue;
                  edges.push_back(json::object{{"from", from}, {"to", to}});
                  auto& state = out->latest[from];
                  if (state == instance_state::success) continue;
                  waiting[to].push_back(json::object{
                      {"id", from},
                      {"last_state", state ? json::value(std::string(name_of(*state)))
                                           : json::value(nullptr)}});
                }
                for (auto& n : out->nodes) {
                  auto& o = n.as_object();
                  auto w = waiting.find(static_cast<uint64_t>(o.at("id").to_number<int64_t>()));
                  o["waiting_for"] = w == waiting.end() ? json::array{} : std::move(w->second);
                }
                reply(json_response(200, json::object{{"nodes", std::move(out->nodes)},
                                                      {"edges", std::move(edges)}}));
                *next = nullptr;  // break the self-reference
              },
              [=](caf::error& e) {
                reply(error_response(e));
                *next = nullptr;
              });
    };
    (*next)(0);
  });
}

void get_dag(route_call& c) { dag_route(c.ctx, c.req.who.tenant, c.reply); }

}  // namespace aisched::gateway
