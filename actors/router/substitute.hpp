// Event templating, pure: replaces `{{event.name}}` and
// `{{event.payload.<key>}}` (nested keys with dots; `{{.event...}}` works too)
// in a task's command, URL or body with values from the firing event, escaped
// for where they land so a value can never change the text's syntax. In a shell
// command a placeholder becomes a reference to an environment variable that
// holds the value: the value itself is never parsed by the shell.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace aisched::router {

enum class landing : uint8_t {
  url,    // percent-encoded (RFC 3986 unreserved characters kept)
  json,   // JSON string contents (quotes, backslashes and control characters escaped)
  text,   // as is (headers)
};

/// Returns `text` with every event placeholder replaced by its value from
/// `payload_json` (a JSON object; unknown keys become empty), escaped for `where`.
std::string substitute(std::string_view text, const std::string& event_name,
                       const std::string& payload_json, landing where);

/// A shell command whose placeholders refer to variables, and their values.
struct shell_substitution {
  std::string command;
  std::map<std::string, std::string> env;  // AISCHED_EVENT_... -> value
};

/// Replaces every event placeholder in `command` by a reference to a variable
/// (AISCHED_EVENT_NAME, AISCHED_EVENT_PAYLOAD_<KEY> with the key's dots and other
/// characters as '_', a suffix _2, _3 ... when two keys map to one name) that
/// expands to exactly the value wherever the placeholder stands, by the shell's
/// quoting state there: `"${V}"` unquoted (no field splitting, no globbing),
/// `${V}` inside double quotes, `'"${V}"'` inside single quotes (closing and
/// reopening them), likewise in $'...', $(...), backquotes, ${...} and
/// here-documents. Even where this scan misjudges the state (say, `case`
/// patterns inside $(...)), only the reference text can land there, never the
/// value, so no value can become shell code; only `eval` of it would.
shell_substitution substitute_shell(std::string_view command, const std::string& event_name,
                                    const std::string& payload_json);

}  // namespace aisched::router
