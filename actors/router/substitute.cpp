// Event templating; see substitute.hpp.
#include "actors/router/substitute.hpp"

#include <cctype>
#include <cstring>
#include <deque>
#include <vector>

#include <boost/json.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

namespace aisched::router {

namespace json = boost::json;

namespace {

std::string escape(const std::string& v, landing where) {
  std::string out;
  switch (where) {
    case landing::url:  // everything but RFC 3986's unreserved characters, as %XX
      return boost::urls::encode(v, boost::urls::unreserved_chars);
    case landing::json: {
      auto quoted = json::serialize(json::value(json::string(v)));
      return quoted.substr(1, quoted.size() - 2);
    }
    case landing::text:
      for (char c : v)
        if (c != '\r' && c != '\n') out += c;  // no header injection
      return out;
  }
  return out;
}

std::string lookup(const json::value* payload, std::string_view path) {
  const json::value* cur = payload;
  while (cur && !path.empty()) {
    auto dot = path.find('.');
    auto key = path.substr(0, dot);
    if (!cur->is_object()) return {};
    auto* next = cur->as_object().if_contains(json::string_view(key.data(), key.size()));
    cur = next;
    path = dot == std::string_view::npos ? std::string_view{} : path.substr(dot + 1);
  }
  if (!cur || cur->is_null()) return {};
  if (cur->is_string()) return std::string(cur->as_string());
  return json::serialize(*cur);
}

/// A placeholder at `text[open]` ("{{"): its expression and where it ends, or
/// nothing when the braces hold something else.
struct placeholder {
  bool found = false;
  bool is_name = false;     // {{event.name}}
  std::string_view path;    // {{event.payload.<path>}}
  size_t end = 0;           // index after "}}"
};

placeholder placeholder_at(std::string_view text, size_t open) {
  placeholder p;
  if (text.compare(open, 2, "{{") != 0) return p;
  auto close = text.find("}}", open + 2);
  if (close == std::string_view::npos) return p;
  auto expr = text.substr(open + 2, close - open - 2);
  while (!expr.empty() && expr.front() == ' ') expr.remove_prefix(1);
  while (!expr.empty() && expr.back() == ' ') expr.remove_suffix(1);
  if (!expr.empty() && expr.front() == '.') expr.remove_prefix(1);
  if (expr == "event.name") {
    p.is_name = true;
  } else if (expr.substr(0, 14) == "event.payload.") {
    p.path = expr.substr(14);
  } else {
    return p;
  }
  p.found = true;
  p.end = close + 2;
  return p;
}

}  // namespace

std::string substitute(std::string_view text, const std::string& event_name,
                       const std::string& payload_json, landing where) {
  if (text.find("{{") == std::string_view::npos) return std::string(text);
  boost::system::error_code ec;
  auto payload = json::parse(payload_json, ec);
  const json::value* root = ec ? nullptr : &payload;
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    auto open = text.find("{{", pos);
    if (open == std::string_view::npos) break;
    auto close = text.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    out.append(text.substr(pos, open - pos));
    auto p = placeholder_at(text, open);
    if (p.found && p.is_name) {
      out += escape(event_name, where);
    } else if (p.found) {
      out += escape(lookup(root, p.path), where);
    } else {
      out.append(text.substr(open, close + 2 - open));  // not ours: leave it
    }
    pos = close + 2;
  }
  out.append(text.substr(pos));
  return out;
}

// -- shell commands ------------------------------------------------------------------

namespace {

/// Where the scan stands in the shell's grammar (POSIX sh, plus $'...').
enum class frame : uint8_t {
  unquoted,    // top level, or the body of $(...) / `...` / ${...} outside quotes
  dquote,      // "..."
  squote,      // '...'
  ansi,        // $'...'
  cmdsub,      // $( ... ), with its own parenthesis depth
  backtick,    // `...`
  param,       // ${ ... } outside double quotes
  dparam,      // ${ ... } inside double quotes
  comment,     // # ... up to the end of the line
};

struct heredoc {
  std::string delimiter;
  bool strip_tabs = false;  // <<-
  bool expands = true;      // unquoted delimiter: the body is expanded like "..."
};

class shell_scanner {
 public:
  shell_scanner(std::string_view text, const std::string& event_name, const json::value* payload)
      : text_(text), event_name_(event_name), payload_(payload) {
    stack_.push_back({frame::unquoted, 0});
  }

  shell_substitution run() {
    while (i_ < text_.size()) step();
    return {std::move(out_), std::move(env_)};
  }

 private:
  struct entry {
    frame f;
    int depth;  // cmdsub: open parentheses inside it
  };

  frame top() const { return stack_.back().f; }
  void push(frame f) { stack_.push_back({f, 0}); }
  void pop() {
    if (stack_.size() > 1) stack_.pop_back();
  }
  bool at(std::string_view s) const { return text_.compare(i_, s.size(), s) == 0; }
  char next() const { return i_ + 1 < text_.size() ? text_[i_ + 1] : '\0'; }
  void emit(size_t n) {
    out_.append(text_.substr(i_, n));
    i_ += n;
  }
  bool placeholder_follows(size_t pos) const { return placeholder_at(text_, pos).found; }
  bool word_start() const {
    if (out_.empty()) return true;
    char prev = out_.back();
    return std::isspace(static_cast<unsigned char>(prev)) || std::strchr(";&|()<>", prev);
  }
  bool unquoted_like() const {
    auto f = top();
    return f == frame::unquoted || f == frame::cmdsub || f == frame::backtick || f == frame::param;
  }

  /// The variable for a placeholder, created on first use.
  std::string variable_for(const placeholder& p) {
    std::string key = p.is_name ? "\n" : std::string(p.path);  // "\n": no path has it
    if (auto i = names_.find(key); i != names_.end()) return i->second;
    std::string base = "AISCHED_EVENT_NAME";
    if (!p.is_name) {
      base = "AISCHED_EVENT_PAYLOAD_";
      for (unsigned char c : p.path)
        base += std::isalnum(c) ? static_cast<char>(std::toupper(c)) : '_';
    }
    auto name = base;
    for (int n = 2; env_.count(name); ++n) name = base + "_" + std::to_string(n);
    env_[name] = p.is_name ? event_name_ : lookup(payload_, p.path);
    names_[key] = name;
    return name;
  }

  /// The text that expands to exactly the variable's value in the current state.
  void emit_reference(const std::string& var) {
    auto ref = "${" + var + "}";
    switch (top()) {
      case frame::dquote:
      case frame::dparam:
        out_ += ref;
        return;
      case frame::squote:
        out_ += "'\"" + ref + "\"'";  // close, expand quoted, reopen
        return;
      case frame::ansi:
        out_ += "'\"" + ref + "\"$'";
        return;
      default:
        out_ += "\"" + ref + "\"";
        return;
    }
  }

  void step() {
    if (auto p = placeholder_at(text_, i_); p.found) {
      emit_reference(variable_for(p));
      i_ = p.end;
      return;
    }
    char c = text_[i_];
    switch (top()) {
      case frame::squote:
        if (c == '\'') pop();
        emit(1);
        return;
      case frame::ansi:
        if (c == '\\') return emit(std::min<size_t>(2, text_.size() - i_));
        if (c == '\'') pop();
        emit(1);
        return;
      case frame::comment:
        if (c == '\n') {
          pop();
          return newline();
        }
        emit(1);
        return;
      case frame::dquote:
      case frame::dparam:
        return step_in_double_quotes(c);
      default:
        return step_unquoted(c);
    }
  }

  void step_in_double_quotes(char c) {
    if (c == '\\') {
      // Only $ ` " \ and newline are escaped here; before a placeholder the
      // backslash is literal, so it must not escape the reference's '$'.
      char n = next();
      if (n == '$' || n == '`' || n == '"' || n == '\\' || n == '\n') return emit(2);
      if (placeholder_follows(i_ + 1)) {
        out_ += "\\\\";
        ++i_;
        return;
      }
      return emit(1);
    }
    if (c == '"') {
      if (top() == frame::dquote) pop();
      else push(frame::dquote);  // "${x:-"..."}": quotes nest inside ${...}
      return emit(1);
    }
    if (c == '}' && top() == frame::dparam) {
      pop();
      return emit(1);
    }
    if (dollar_or_backtick(c)) return;
    emit(1);
  }

  /// $( $(( ${ ` : push their frame; true when `c` started one.
  bool dollar_or_backtick(char c) {
    bool quoted = top() == frame::dquote || top() == frame::dparam;
    if (c == '$' && next() == '(') {
      push(frame::cmdsub);
      emit(2);
      return true;
    }
    if (c == '$' && next() == '{' && !placeholder_follows(i_ + 1)) {
      push(quoted ? frame::dparam : frame::param);
      emit(2);
      return true;
    }
    if (c == '`') {
      if (top() == frame::backtick) pop();
      else push(frame::backtick);
      emit(1);
      return true;
    }
    return false;
  }

  void step_unquoted(char c) {
    if (c == '\\') {
      // A backslash escapes the next character; before a placeholder it would
      // escape the reference's opening quote, and escaping '{' means nothing: drop it.
      if (placeholder_follows(i_ + 1)) {
        ++i_;
        return;
      }
      return emit(std::min<size_t>(2, text_.size() - i_));
    }
    if (c == '\'') {
      push(frame::squote);
      return emit(1);
    }
    if (c == '"') {
      push(frame::dquote);
      return emit(1);
    }
    if (c == '$' && next() == '\'') {
      push(frame::ansi);
      return emit(2);
    }
    if (dollar_or_backtick(c)) return;
    if (top() == frame::cmdsub && c == '(') ++stack_.back().depth;
    if (top() == frame::cmdsub && c == ')') {
      if (stack_.back().depth-- == 0) pop();
      return emit(1);
    }
    if (top() == frame::param && c == '}') {
      pop();
      return emit(1);
    }
    if (c == '#' && top() != frame::param && word_start()) {
      push(frame::comment);
      return emit(1);
    }
    if (c == '<' && at("<<") && !at("<<<")) return here_document_operator();
    if (c == '\n') return newline();
    emit(1);
  }

  /// `<<WORD` / `<<-WORD`: remembers the delimiter; the body starts at the next newline.
  void here_document_operator() {
    heredoc h;
    emit(2);
    if (i_ < text_.size() && text_[i_] == '-') {
      h.strip_tabs = true;
      emit(1);
    }
    while (i_ < text_.size() && (text_[i_] == ' ' || text_[i_] == '\t')) emit(1);
    char quote = 0;
    while (i_ < text_.size()) {
      char c = text_[i_];
      if (quote) {
        if (c == quote) quote = 0;
        else h.delimiter += c;
      } else if (c == '\'' || c == '"') {
        quote = c;
        h.expands = false;
      } else if (c == '\\' && i_ + 1 < text_.size()) {
        h.expands = false;
        emit(1);
        c = text_[i_];
        h.delimiter += c;
      } else if (std::isspace(static_cast<unsigned char>(c)) || std::strchr(";&|()<>", c)) {
        break;
      } else {
        h.delimiter += c;
      }
      emit(1);
    }
    if (!h.delimiter.empty()) pending_.push_back(std::move(h));
  }

  /// A newline outside quotes: the bodies of pending here-documents follow it.
  void newline() {
    emit(1);
    while (!pending_.empty()) {
      auto h = std::move(pending_.front());
      pending_.pop_front();
      here_document_body(h);
    }
  }

  void here_document_body(const heredoc& h) {
    while (i_ < text_.size()) {
      auto eol = text_.find('\n', i_);
      auto line = text_.substr(i_, eol == std::string_view::npos ? std::string_view::npos
                                                                 : eol - i_);
      auto bare = line;
      if (h.strip_tabs)
        while (!bare.empty() && bare.front() == '\t') bare.remove_prefix(1);
      if (bare == h.delimiter) {
        emit(line.size() + (eol == std::string_view::npos ? 0 : 1));
        return;
      }
      // The body is expanded like "..." (quotes are plain characters there) or, after
      // a quoted delimiter, not at all: the reference then stays as text.
      size_t end = i_ + line.size();
      while (i_ < end) {
        if (auto p = placeholder_at(text_, i_); p.found && p.end <= end) {
          out_ += "${" + variable_for(p) + "}";
          i_ = p.end;
        } else if (h.expands && text_[i_] == '\\' && placeholder_follows(i_ + 1)) {
          out_ += "\\\\";  // a literal backslash, not one escaping the reference's '$'
          ++i_;
        } else if (h.expands && text_[i_] == '\\' && i_ + 1 < end) {
          emit(2);
        } else {
          emit(1);
        }
      }
      if (i_ < text_.size()) emit(1);  // the newline
    }
  }

  std::string_view text_;
  const std::string& event_name_;
  const json::value* payload_;
  size_t i_ = 0;
  std::vector<entry> stack_;
  std::deque<heredoc> pending_;
  std::string out_;
  std::map<std::string, std::string> env_;
  std::map<std::string, std::string> names_;  // placeholder path -> variable
};

}  // namespace

shell_substitution substitute_shell(std::string_view command, const std::string& event_name,
                                    const std::string& payload_json) {
  if (command.find("{{") == std::string_view::npos) return {std::string(command), {}};
  boost::system::error_code ec;
  auto payload = json::parse(payload_json, ec);
  return shell_scanner(command, event_name, ec ? nullptr : &payload).run();
}

}  // namespace aisched::router
