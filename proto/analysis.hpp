// The failure analysis of one instance (issue #8 part 5) and the typed interface
// of the analysis actor (actors/ai_features) that computes, stores and serves it.
// Kept beside, not inside, types.hpp/interfaces.hpp: only the AI features and
// the gateway use it. JSON mapping: proto/analysis.cpp.
#pragma once

#include <string>
#include <vector>

#include <boost/json/fwd.hpp>
#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "proto/field.hpp"
#include "proto/interfaces.hpp"

namespace aisched::proto {

/// Why a run failed and what to do about it. `source` says who judged:
/// "rules" (the deterministic rule engine) or "llm" (the model, checked
/// against the expected fields). Severity is one of low, medium, high,
/// critical; confidence is in [0, 1].
struct failure_analysis {
  std::string instance_id;
  std::string source = "rules";
  std::string summary;
  std::string severity = "medium";
  std::vector<std::string> categories;
  std::string root_cause;
  std::string fix;
  double confidence = 0;
  unix_ms analyzed_at = 0;
  std::string llm_error;  // why the model's answer was not used ("" when it was, or not asked)

  friend bool operator==(const failure_analysis& a, const failure_analysis& b) {
    return a.instance_id == b.instance_id && a.source == b.source && a.summary == b.summary &&
           a.severity == b.severity && a.categories == b.categories &&
           a.root_cause == b.root_cause && a.fix == b.fix && a.confidence == b.confidence &&
           a.analyzed_at == b.analyzed_at && a.llm_error == b.llm_error;
  }
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, failure_analysis& x) {
  return f(caf::meta::type_name("aisched.failure_analysis"), field("instance_id"), x.instance_id,
           field("source"), x.source, field("summary"), x.summary, field("severity"), x.severity,
           field("categories"), x.categories, field("root_cause"), x.root_cause,
           field("fix"), x.fix, save_finite(x.confidence), field("confidence"), x.confidence,
           load_finite(x.confidence), field("analyzed_at"), x.analyzed_at,
           field("llm_error"), x.llm_error, keep_unknown(x.unknown));
}

/// The REST shape: {"instance_id","source","summary","severity","categories",
/// "root_cause","fix","confidence","analyzed_at"?, "llm_error"?}.
boost::json::value to_json(const failure_analysis& a);

/// Whether `s` is one of the severities an analysis may carry.
bool valid_severity(std::string_view s);

using get_analysis_atom = caf::atom_constant<caf::atom("getanalys")>;
using analyze_atom = caf::atom_constant<caf::atom("analyze")>;
using judged_atom = caf::atom_constant<caf::atom("judged")>;

/// analysis (actors/ai_features): a commit listener on every scheduler node.
/// `getanalys` (tenant, instance id) answers the stored analysis, or the rule
/// engine's answer computed now when none is stored; `analyze` (tenant,
/// instance id) recomputes it (rules, then the model when one is configured),
/// stores and answers it. On the leader, with a model configured, every run
/// that fails for the last time is analysed automatically, off the scheduling
/// path. `judged` (instance id, ok, text) is internal: the model's answer.
using analysis_actor = commit_listener_actor::extend<
    caf::replies_to<get_analysis_atom, std::string, std::string>::with<failure_analysis>,
    caf::replies_to<analyze_atom, std::string, std::string>::with<failure_analysis>,
    caf::reacts_to<judged_atom, std::string, bool, std::string>, inspect_signature>;

}  // namespace aisched::proto
