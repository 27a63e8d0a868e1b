// Natural language -> task draft without a model: a small deterministic parser
// for the common phrasings ("every 5 minutes run X", "run X daily at 3am",
// "every monday at 9:30 call https://..."). It only proposes a task document;
// the gateway validates it exactly like a REST create and never creates it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

namespace aisched::ai {

/// What the parser understood, as a task document ({"name","kind","command" |
/// "http","schedule"}), or nullopt with `why` set when it found no command.
/// A missing schedule leaves the task manual-only (and says so in `why`).
std::optional<boost::json::object> draft_from_text(std::string_view text, std::string& why);

/// "3am" / "3:30 pm" / "15:05" / "noon" / "midnight" -> {hour, minute}; nullopt otherwise.
std::optional<std::pair<int, int>> parse_clock(std::string_view s);

}  // namespace aisched::ai
