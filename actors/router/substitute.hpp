// Event templating, pure: replaces `{{event.name}}` and
// `{{event.payload.<key>}}` (nested keys with dots; `{{.event...}}` works too)
// in a task's command, URL or body with values from the firing event, escaped
// for where they land so a value can never change the text's syntax.
#pragma once

#include <string>
#include <string_view>

namespace aisched::router {

enum class landing : uint8_t {
  shell,  // a single-quoted shell word: 'it'\''s'
  url,    // percent-encoded (RFC 3986 unreserved characters kept)
  json,   // JSON string contents (quotes, backslashes and control characters escaped)
  text,   // as is (headers)
};

/// Returns `text` with every event placeholder replaced by its value from
/// `payload_json` (a JSON object; unknown keys become empty), escaped for `where`.
std::string substitute(std::string_view text, const std::string& event_name,
                       const std::string& payload_json, landing where);

}  // namespace aisched::router
