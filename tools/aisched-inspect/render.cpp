// Table and JSON forms of a node_summary; see render.hpp.
#include "tools/aisched-inspect/render.hpp"

#include <boost/json.hpp>
#include <ostream>
#include <string>

#include "tools/aischedctl/output.hpp"

namespace aisched::inspect_tool {

namespace json = boost::json;

namespace {

std::string join(const std::vector<std::string>& xs, const char* sep) {
  std::string out;
  for (auto& x : xs) out += (out.empty() ? "" : sep) + x;
  return out;
}

/// How long before the collection the actor last handled a message.
std::string idle_text(const proto::node_summary& s, const proto::actor_summary& a) {
  if (a.last_active_ms == 0) return "never";
  return format_duration(std::max<unix_ms>(0, s.collected_at_ms - a.last_active_ms)) + " ago";
}

std::string details_text(const proto::actor_summary& a) {
  if (!a.responsive) return "UNRESPONSIVE: " + a.error;
  std::string out;
  for (auto& [k, v] : a.details) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out.empty() ? "-" : out;
}

}  // namespace

json::value to_json(const proto::node_summary& s) {
  json::array actors;
  for (auto& a : s.actors) {
    json::object details;
    for (auto& [k, v] : a.details) details[k] = v;
    json::object x{{"name", a.name},         {"kind", a.kind},
                   {"actor_id", a.actor_id}, {"responsive", a.responsive},
                   {"error", a.error},       {"mailbox", a.mailbox},
                   {"handled", a.handled},   {"details", std::move(details)}};
    if (a.last_active_ms == 0) {
      x["last_active"] = nullptr;
      x["idle_ms"] = nullptr;
    } else {
      x["last_active"] = format_rfc3339(a.last_active_ms);
      x["idle_ms"] = std::max<unix_ms>(0, s.collected_at_ms - a.last_active_ms);
    }
    actors.push_back(std::move(x));
  }
  json::array roles;
  for (auto& r : s.roles) roles.push_back(json::value(r));
  return json::object{{"node_id", s.node_id},
                      {"roles", std::move(roles)},
                      {"started_at", format_rfc3339(s.started_at_ms)},
                      {"collected_at", format_rfc3339(s.collected_at_ms)},
                      {"actors", std::move(actors)}};
}

void print_table(std::ostream& out, const proto::node_summary& s) {
  out << "node " << s.node_id << "  roles " << join(s.roles, ",") << "  up "
      << format_duration(std::max<unix_ms>(0, s.collected_at_ms - s.started_at_ms)) << "  at "
      << format_rfc3339(s.collected_at_ms) << "\n\n";
  ctl::table t({"NAME", "KIND", "MAILBOX", "HANDLED", "LAST ACTIVE", "DETAILS"});
  for (auto& a : s.actors) {
    if (a.responsive)
      t.add({a.name, a.kind, std::to_string(a.mailbox), std::to_string(a.handled),
             idle_text(s, a), details_text(a)});
    else
      t.add({a.name, "-", "-", "-", "-", details_text(a)});
  }
  t.print(out);
}

}  // namespace aisched::inspect_tool
