// Server-Sent Events parsing; see sse_reader.hpp.
#include "common/sse_reader.hpp"

namespace aisched::http {

bool sse_reader::feed(std::string_view bytes) {
  if (stopped_) return false;
  pending_.append(bytes);
  size_t start = 0;
  for (size_t eol; (eol = pending_.find('\n', start)) != std::string::npos; start = eol + 1) {
    std::string_view text(pending_.data() + start, eol - start);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (!line(text)) {
      stopped_ = true;
      pending_.clear();
      return false;
    }
  }
  pending_.erase(0, start);
  return true;
}

bool sse_reader::line(std::string_view text) {
  if (text.empty()) {  // a blank line ends the event
    bool keep_going = true;
    if (has_data_ || !event_.type.empty()) keep_going = on_event_(event_);
    event_ = {};
    has_data_ = false;
    return keep_going;
  }
  if (text.front() == ':') return true;  // a comment (keep-alive)
  auto colon = text.find(':');
  auto field = text.substr(0, colon);
  auto value = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "event") {
    event_.type = std::string(value);
  } else if (field == "data") {
    if (has_data_) event_.data += '\n';
    event_.data += value;
    has_data_ = true;
  }
  // `id:` and `retry:` matter to browsers reconnecting, not to us.
  return true;
}

}  // namespace aisched::http
