// aisched-chaos, one leader per term; see leaders.hpp.
#include "tools/chaos/leaders.hpp"

#include <boost/json.hpp>
#include <cstdlib>
#include <set>
#include <sstream>

namespace aisched::chaos {

std::vector<std::string> check_one_leader_per_term(const std::map<std::string, std::string>& logs,
                                                   size_t& elections) {
  std::map<uint64_t, std::set<std::string>> leaders;  // by term
  elections = 0;
  for (auto& [member, text] : logs) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.find("\"elected leader\"") == std::string::npos) continue;
      boost::system::error_code ec;
      auto v = boost::json::parse(line, ec);
      if (ec || !v.is_object()) continue;
      auto& o = v.as_object();
      auto* term = o.if_contains("term");
      auto* leader = o.if_contains("leader");
      if (!term || !leader || !term->is_string() || !leader->is_string()) continue;
      ++elections;
      leaders[std::strtoull(term->get_string().c_str(), nullptr, 10)].insert(
          std::string(leader->get_string()));
    }
  }
  std::vector<std::string> out;
  for (auto& [term, ids] : leaders) {
    if (ids.size() < 2) continue;
    std::string names;
    for (auto& id : ids) names += (names.empty() ? "" : ", ") + id;
    out.push_back("term " + std::to_string(term) + " had " + std::to_string(ids.size()) +
                  " leaders: " + names);
  }
  return out;
}

}  // namespace aisched::chaos
