// The deterministic task-draft parser; see task_draft.hpp.
#include "actors/ai_features/task_draft.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>

#include <boost/json.hpp>

namespace aisched::ai {

namespace {

const std::regex::flag_type icase = std::regex::ECMAScript | std::regex::icase;

/// Strips surrounding blanks and the sentence's own trailing punctuation. The
/// front keeps every dot ("./sync.sh" is not "/sync.sh"), and a trailing dot
/// stays when it is part of a path ("ls .", "cd ..").
std::string trim(std::string s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  s = s.substr(b);
  for (;;) {
    while (!s.empty() && std::strchr(" \t\r\n,;", s.back()) != nullptr) s.pop_back();
    bool sentence_dot = s.size() >= 2 && s.back() == '.' && s[s.size() - 2] != '.' &&
                        s[s.size() - 2] != '/' &&
                        !std::isspace(static_cast<unsigned char>(s[s.size() - 2]));
    if (!sentence_dot) return s;
    s.pop_back();
  }
}

std::string unquote(std::string s) {
  s = trim(std::move(s));
  if (s.size() >= 2 && (s.front() == '`' || s.front() == '\'' || s.front() == '"') &&
      s.back() == s.front())
    return s.substr(1, s.size() - 2);
  return s;
}

/// The schedule phrase in `t` as an aisched schedule ("" if none) and the
/// text with that phrase removed (so what remains names the command).
std::string find_schedule(std::string& t) {
  static const std::regex every_n(
      R"(\b(?:every|each)\s+(\d+)\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)\b)",
      icase);
  static const std::regex every_unit(R"(\b(?:every|each)\s+(second|minute|hour)\b|\bhourly\b)",
                                     icase);
  static const std::regex day_at(
      R"(\b(?:daily|every\s+day|each\s+day|every\s+night|nightly)\s+at\s+([0-9:]+\s*(?:am|pm)?|noon|midnight)|\bat\s+([0-9:]+\s*(?:am|pm)?|noon|midnight)\s+(?:daily|every\s+day|each\s+day|every\s+night|nightly)\b)",
      icase);
  static const std::regex weekday_at(
      R"(\b(?:every|each|on)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekday)s?\s+at\s+([0-9:]+\s*(?:am|pm)?|noon|midnight))",
      icase);
  static const std::regex daily(R"(\b(?:daily|every\s+day|each\s+day|nightly)\b)", icase);
  std::smatch m;
  std::string sched;
  if (std::regex_search(t, m, every_n)) {
    auto n = std::stoll(m[1].str());
    char u = static_cast<char>(std::tolower(static_cast<unsigned char>(m[2].str()[0])));
    if (n > 0) {
      if (u == 'd') sched = "@every " + std::to_string(n * 24) + "h";
      else sched = "@every " + std::to_string(n) + std::string(1, u);
    }
  } else if (std::regex_search(t, m, weekday_at)) {
    static const char* days[] = {"sunday", "monday", "tuesday", "wednesday",
                                 "thursday", "friday", "saturday"};
    std::string d = m[1].str();
    std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string dow = d == "weekday" ? "1-5" : "";
    for (int i = 0; i < 7 && dow.empty(); ++i)
      if (d == days[i]) dow = std::to_string(i);
    if (auto c = parse_clock(m[2].str()))
      sched = std::to_string(c->second) + " " + std::to_string(c->first) + " * * " + dow;
  } else if (std::regex_search(t, m, day_at)) {
    if (auto c = parse_clock(m[1].matched ? m[1].str() : m[2].str()))
      sched = std::to_string(c->second) + " " + std::to_string(c->first) + " * * *";
  } else if (std::regex_search(t, m, every_unit)) {
    auto w = m[1].matched ? m[1].str() : std::string("hour");
    std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return std::tolower(c); });
    sched = w == "second" ? "@every 1s" : w == "minute" ? "@every 1m" : "@hourly";
  } else if (std::regex_search(t, m, daily)) {
    sched = "@daily";
  }
  if (!sched.empty()) {
    // "run backup.sh every day." leaves a lone "." that is the sentence's, not the command's.
    auto rest = m.suffix().str();
    if (rest.find_first_not_of(" \t\r\n.,;!") == std::string::npos) rest.clear();
    t = m.prefix().str() + " " + rest;
  }
  return sched;
}

std::string name_from(const std::string& what) {
  std::string out;
  for (char c : what) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) out += static_cast<char>(std::tolower(u));
    else if (!out.empty() && out.back() != '-') out += '-';
    if (out.size() >= 40) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "drafted-task" : out;
}

}  // namespace

std::optional<std::pair<int, int>> parse_clock(std::string_view s) {
  static const std::regex clock(R"(^\s*(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*$)", icase);
  std::string str(s);
  std::string low = str;
  std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return std::tolower(c); });
  if (low.find("noon") != std::string::npos) return std::pair{12, 0};
  if (low.find("midnight") != std::string::npos) return std::pair{0, 0};
  std::smatch m;
  if (!std::regex_match(low, m, clock)) return std::nullopt;
  int h = std::stoi(m[1].str());
  int mi = m[2].matched ? std::stoi(m[2].str()) : 0;
  if (m[3].matched) {
    if (h < 1 || h > 12) return std::nullopt;
    if (m[3].str() == "am") h = h == 12 ? 0 : h;
    else h = h == 12 ? 12 : h + 12;
  } else if (!m[2].matched) {
    return std::nullopt;  // a bare "3" is not a time
  }
  if (h > 23 || mi > 59) return std::nullopt;
  return std::pair{h, mi};
}

std::optional<boost::json::object> draft_from_text(std::string_view text, std::string& why) {
  std::string t(text);
  std::string name;
  static const std::regex named(R"(\b(?:called|named)\s+([A-Za-z0-9_.-]+))", icase);
  std::smatch m;
  if (std::regex_search(t, m, named)) {
    name = m[1].str();
    t = m.prefix().str() + " " + m.suffix().str();
  }
  auto schedule = find_schedule(t);
  boost::json::object doc;
  static const std::regex url(R"(\b(?:(get|post|put|delete|call|hit|ping|request)\s+)?(https?://\S+))",
                              icase);
  static const std::regex run(R"(\b(?:run|execute|exec)\s+(.+))", icase);
  if (std::regex_search(t, m, url)) {
    auto method = m[1].matched ? m[1].str() : std::string("GET");
    std::transform(method.begin(), method.end(), method.begin(),
                   [](unsigned char c) { return std::toupper(c); });
    if (method != "POST" && method != "PUT" && method != "DELETE") method = "GET";
    auto u = trim(m[2].str());
    doc["kind"] = "http";
    doc["http"] = boost::json::object{{"method", method}, {"url", u}};
    if (name.empty()) name = name_from(u.substr(u.find("//") + 2));
  } else if (std::regex_search(t, m, run)) {
    auto cmd = unquote(m[1].str());
    if (cmd.empty()) {
      why = "no command found after 'run'";
      return std::nullopt;
    }
    doc["kind"] = "shell";
    doc["command"] = cmd;
    if (name.empty()) name = name_from(cmd);
  } else {
    why = "say what to run: 'run <command>' or a URL to call";
    return std::nullopt;
  }
  doc["name"] = name;
  if (!schedule.empty()) doc["schedule"] = schedule;
  else why = "no schedule recognised: the draft is manual-only (trigger it, or add a schedule)";
  return doc;
}

}  // namespace aisched::ai
