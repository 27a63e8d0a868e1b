// JSON mapping of the failure analysis; see analysis.hpp.
#include "proto/analysis.hpp"

#include <boost/json.hpp>

namespace aisched::proto {

boost::json::value to_json(const failure_analysis& a) {
  boost::json::array cats;
  for (auto& c : a.categories) cats.emplace_back(c);
  boost::json::object o{{"instance_id", a.instance_id},
                        {"source", a.source},
                        {"summary", a.summary},
                        {"severity", a.severity},
                        {"categories", std::move(cats)},
                        {"root_cause", a.root_cause},
                        {"fix", a.fix},
                        {"confidence", a.confidence}};
  if (a.analyzed_at != 0) o["analyzed_at"] = format_rfc3339(a.analyzed_at);
  if (!a.llm_error.empty()) o["llm_error"] = a.llm_error;
  return o;
}

bool valid_severity(std::string_view s) {
  return s == "low" || s == "medium" || s == "high" || s == "critical";
}

}  // namespace aisched::proto
