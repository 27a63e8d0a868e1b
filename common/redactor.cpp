// Streaming redaction; see redactor.hpp.
#include "common/redactor.hpp"

#include <algorithm>

namespace aisched {

redactor::redactor(std::vector<std::string> values) {
  for (auto& v : values)
    if (!v.empty()) values_.push_back(std::move(v));
  std::sort(values_.begin(), values_.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  values_.erase(std::unique(values_.begin(), values_.end()), values_.end());
  max_len_ = values_.empty() ? 0 : values_.front().size();
}

std::string redactor::feed(std::string_view chunk) {
  if (values_.empty()) return std::string(chunk);
  buf_.append(chunk.data(), chunk.size());
  return release(false);
}

std::string redactor::flush() {
  auto out = release(true);
  buf_.clear();
  covered_prefix_ = 0;
  in_mask_ = false;
  return out;
}

std::string redactor::redact(std::string_view text) const {
  redactor r(values_);
  auto out = r.feed(text);
  return out + r.flush();
}

std::string redactor::release(bool at_end) {
  // Every byte any occurrence of any value covers (occurrences may overlap)
  // is masked, and each run of masked bytes becomes one mask: no byte of a
  // value shows, whichever values overlap. A byte is decided once every
  // occurrence that could cover it is known, i.e. when max_len - 1 bytes
  // follow it (or at the end); the rest waits for the next chunk.
  size_t n = buf_.size();
  size_t limit = at_end ? n : (n + 1 > max_len_ ? n + 1 - max_len_ : 0);
  std::vector<bool> covered(n, false);
  for (size_t i = 0; i < std::min(covered_prefix_, n); ++i) covered[i] = true;
  for (size_t j = 0; j < limit; ++j)
    for (auto& v : values_)
      if (n - j >= v.size() && buf_.compare(j, v.size(), v) == 0) {
        for (size_t i = j; i < j + v.size(); ++i) covered[i] = true;
        break;  // the longest value at j covers the most
      }
  std::string out;
  for (size_t i = 0; i < limit; ++i) {
    if (!covered[i]) {
      out.push_back(buf_[i]);
      in_mask_ = false;
    } else if (!in_mask_) {
      out += mask;
      in_mask_ = true;
    }
  }
  // Bytes past `limit` an occurrence already covers stay covered next time.
  size_t still = limit;
  while (still < n && covered[still]) ++still;
  covered_prefix_ = still - limit;
  buf_.erase(0, limit);
  return out;
}

}  // namespace aisched
