// Reading a model's judgement: the JSON object in its reply (bare, in a code
// fence, or wrapped in prose) checked against the fields a feature expects.
// Anything else is an error the caller turns into its facts/rules answer with
// a marker, never into a failed request. Pure; no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <caf/expected.hpp>

#include "proto/analysis.hpp"

namespace aisched::ai {

/// The first JSON object in `text`: the whole text, the content of a ```json
/// (or plain ```) fence, or the first balanced {...} that parses. nullopt when
/// there is none.
std::optional<boost::json::object> extract_json_object(std::string_view text);

/// The model's failure analysis in `text` over the rules' answer `rules`:
/// requires summary, severity (low|medium|high|critical), categories (strings),
/// root_cause, fix and confidence (0..1); source becomes "llm". An error names
/// what is missing or wrong.
caf::expected<proto::failure_analysis> analysis_from_judgement(std::string_view text,
                                                               const proto::failure_analysis& rules);

/// Instructions for the failure-analysis judgement, naming the JSON shape.
std::string analysis_system_prompt();

/// A string field of `o`, or an error naming it.
caf::expected<std::string> required_string(const boost::json::object& o, std::string_view key);

}  // namespace aisched::ai
