// A strict reader of the Prometheus text exposition format 0.0.4 for tests:
// every line must be `# HELP name text`, `# TYPE name type` or
// `name{label="value",...} value`, each sample must belong to a family whose
// TYPE came first, and names must follow Prometheus conventions. We check this
// ourselves instead of depending on promtool in the build.
#pragma once

#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace aisched::test {

struct prom_sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct prom_text {
  std::vector<prom_sample> samples;
  std::map<std::string, std::string> types;  // family name -> counter, gauge, histogram ...
  std::vector<std::string> errors;           // one per malformed line or broken convention

  /// Sum of the samples named `name` whose labels include `want`; nullopt if none.
  std::optional<double> value(const std::string& name,
                              const std::map<std::string, std::string>& want = {}) const {
    std::optional<double> sum;
    for (auto& s : samples) {
      if (s.name != name) continue;
      bool ok = true;
      for (auto& [k, v] : want) {
        auto i = s.labels.find(k);
        ok = ok && i != s.labels.end() && i->second == v;
      }
      if (ok) sum = sum.value_or(0) + s.value;
    }
    return sum;
  }
};

namespace detail {

/// The family a sample belongs to: histogram samples carry a suffix.
inline std::string family_of(const std::string& name,
                             const std::map<std::string, std::string>& types) {
  if (types.count(name)) return name;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    std::string sfx(suffix);
    if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
      auto base = name.substr(0, name.size() - sfx.size());
      auto t = types.find(base);
      if (t != types.end() && (t->second == "histogram" || t->second == "summary")) return base;
    }
  }
  return "";
}

/// Parses `{a="x",b="y"}` starting at `pos` (just after the name); false if malformed.
inline bool parse_labels(const std::string& line, size_t& pos,
                         std::map<std::string, std::string>& out) {
  static const std::regex label_name("[a-zA-Z_][a-zA-Z0-9_]*");
  if (pos >= line.size() || line[pos] != '{') return true;
  ++pos;
  while (pos < line.size() && line[pos] != '}') {
    auto eq = line.find('=', pos);
    if (eq == std::string::npos) return false;
    auto name = line.substr(pos, eq - pos);
    if (!std::regex_match(name, label_name) || eq + 1 >= line.size() || line[eq + 1] != '"')
      return false;
    std::string value;
    size_t i = eq + 2;
    for (; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\') {
        if (++i >= line.size()) return false;
        char c = line[i];
        if (c == 'n')
          value.push_back('\n');
        else if (c == '\\' || c == '"')
          value.push_back(c);
        else
          return false;
      } else {
        value.push_back(line[i]);
      }
    }
    if (i >= line.size() || out.count(name)) return false;
    out[name] = value;
    pos = i + 1;
    if (pos < line.size() && line[pos] == ',') ++pos;
  }
  if (pos >= line.size()) return false;
  ++pos;  // '}'
  return true;
}

inline std::optional<double> parse_value(const std::string& s) {
  if (s == "+Inf") return std::numeric_limits<double>::infinity();
  if (s == "-Inf") return -std::numeric_limits<double>::infinity();
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

}  // namespace detail

/// Parses and checks `text`; problems land in `errors`, one per line.
inline prom_text parse_prometheus_text(const std::string& text) {
  static const std::regex metric_name("[a-zA-Z_:][a-zA-Z0-9_:]*");
  static const std::set<std::string> known_types{"counter", "gauge", "histogram", "summary",
                                                 "untyped"};
  prom_text out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  auto fail = [&](const std::string& why) {
    out.errors.push_back("line " + std::to_string(n) + ": " + why + ": " + line);
  };
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    if (line.rfind("# HELP ", 0) == 0) {
      auto rest = line.substr(7);
      if (!std::regex_match(rest.substr(0, rest.find(' ')), metric_name)) fail("bad HELP name");
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type, extra;
      words >> name >> type;
      if (!std::regex_match(name, metric_name) || !known_types.count(type) || (words >> extra))
        fail("bad TYPE line");
      else if (out.types.count(name))
        fail("second TYPE for " + name);
      else if (type == "counter" && (name.size() < 6 || name.compare(name.size() - 6, 6, "_total")))
        fail("a counter's name must end in _total");
      else
        out.types[name] = type;
      continue;
    }
    if (line[0] == '#') continue;  // other comments are allowed
    prom_sample s;
    size_t pos = 0;
    while (pos < line.size() && line[pos] != '{' && line[pos] != ' ') ++pos;
    s.name = line.substr(0, pos);
    if (!std::regex_match(s.name, metric_name)) {
      fail("bad metric name");
      continue;
    }
    if (!detail::parse_labels(line, pos, s.labels)) {
      fail("bad labels");
      continue;
    }
    if (pos >= line.size() || line[pos] != ' ') {
      fail("no value");
      continue;
    }
    std::istringstream rest(line.substr(pos + 1));
    std::string value, timestamp, extra;
    rest >> value >> timestamp >> extra;
    auto v = detail::parse_value(value);
    if (!v || !extra.empty()) {
      fail("bad value");
      continue;
    }
    s.value = *v;
    auto family = detail::family_of(s.name, out.types);
    if (family.empty())
      fail("sample before (or without) its TYPE line");
    else if (out.types[family] == "histogram" && s.name == family + "_bucket" &&
             !s.labels.count("le"))
      fail("histogram bucket without le");
    out.samples.push_back(std::move(s));
  }
  return out;
}

}  // namespace aisched::test
