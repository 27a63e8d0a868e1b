// Extraction and checking of a model's JSON judgement; see judgement.hpp.
#include "actors/ai_features/judgement.hpp"

#include <boost/json.hpp>

#include "proto/errors.hpp"

namespace json = boost::json;

namespace aisched::ai {

namespace {

std::optional<json::object> parse_object(std::string_view s) {
  boost::system::error_code ec;
  auto v = json::parse(s, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.as_object());
}

/// End (one past the closing brace) of the balanced object starting at `open`,
/// skipping braces inside strings; npos when it never closes.
size_t balanced_end(std::string_view s, size_t open) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

caf::error bad(std::string_view field, std::string why) {
  return make_error(errc::invalid_argument, std::string(field),
                    "model judgement: " + std::string(field) + ": " + why);
}

}  // namespace

std::optional<json::object> extract_json_object(std::string_view text) {
  if (auto o = parse_object(text)) return o;
  // A fenced block: ```json\n{...}\n``` (the language tag is optional).
  for (size_t fence = text.find("```"); fence != std::string_view::npos;
       fence = text.find("```", fence + 3)) {
    auto body = text.find('\n', fence);
    if (body == std::string_view::npos) break;
    auto close = text.find("```", body);
    if (close == std::string_view::npos) break;
    if (auto o = parse_object(text.substr(body + 1, close - body - 1))) return o;
    fence = close;
  }
  // Prose around it: the first balanced {...} that parses as an object.
  for (size_t open = text.find('{'); open != std::string_view::npos; open = text.find('{', open + 1)) {
    auto end = balanced_end(text, open);
    if (end == std::string_view::npos) break;
    if (auto o = parse_object(text.substr(open, end - open))) return o;
  }
  return std::nullopt;
}

caf::expected<std::string> required_string(const json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  if (!v) return bad(key, "missing");
  if (!v->is_string() || v->as_string().empty()) return bad(key, "expected a non-empty string");
  return std::string(v->as_string());
}

caf::expected<proto::failure_analysis> analysis_from_judgement(
    std::string_view text, const proto::failure_analysis& rules) {
  auto o = extract_json_object(text);
  if (!o) return bad("body", "no JSON object in the reply");
  auto out = rules;
  out.source = "llm";
  out.llm_error.clear();
  for (auto [key, dst] : {std::pair{"summary", &out.summary}, std::pair{"root_cause", &out.root_cause},
                          std::pair{"fix", &out.fix}}) {
    auto s = required_string(*o, key);
    if (!s) return s.error();
    *dst = std::move(*s);
  }
  auto sev = required_string(*o, "severity");
  if (!sev) return sev.error();
  if (!proto::valid_severity(*sev)) return bad("severity", "one of low, medium, high, critical");
  out.severity = *sev;
  auto* cats = o->if_contains("categories");
  if (!cats || !cats->is_array()) return bad("categories", "expected an array of strings");
  out.categories.clear();
  for (auto& c : cats->as_array()) {
    if (!c.is_string()) return bad("categories", "expected an array of strings");
    out.categories.emplace_back(c.as_string());
  }
  auto* conf = o->if_contains("confidence");
  if (!conf || !(conf->is_number())) return bad("confidence", "expected a number in [0, 1]");
  auto c = conf->to_number<double>();
  if (!(c >= 0 && c <= 1)) return bad("confidence", "expected a number in [0, 1]");
  out.confidence = c;
  return out;
}

std::string analysis_system_prompt() {
  return "You are the failure analyst of aisched, a job scheduler. You get the facts of one "
         "failed run (state, exit code, error, output tail, the task) and the rule engine's "
         "reading of them. Judge the root cause and the fix. Answer with ONE JSON object and "
         "nothing else: {\"summary\": string, \"severity\": \"low\"|\"medium\"|\"high\"|"
         "\"critical\", \"categories\": [string], \"root_cause\": string, \"fix\": string, "
         "\"confidence\": number between 0 and 1}. Use categories like command_not_found, "
         "permission_denied, out_of_memory, killed, timeout, connection_refused, dns_failure, "
         "http_5xx, http_4xx, tls_error, disk_full, nonzero_exit, or a short new one.";
}

}  // namespace aisched::ai
