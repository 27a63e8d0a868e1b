// Streaming redaction of secret values, pure: replaces every occurrence of any
// of a set of values with "***" in a stream cut into arbitrary chunks, holding
// back at most (longest value - 1) bytes between chunks. Used by the worker's
// executor (actors/worker/executor.cpp) on everything a run writes, before the
// output is kept, streamed or reported.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aisched {

class redactor {
 public:
  /// The mask that replaces a value.
  static constexpr std::string_view mask = "***";

  /// Redacts every non-empty value of `values` (empty ones are ignored: they
  /// would match everywhere). With no values, feed() passes its input through.
  explicit redactor(std::vector<std::string> values);

  /// Takes the next `chunk` and returns what can be released now: the input
  /// so far with each value masked, except a tail that could still be the
  /// start of a value (at most max_len - 1 bytes), kept for the next call.
  std::string feed(std::string_view chunk);

  /// The end of the stream: the held-back tail, masked.
  std::string flush();

  /// `text` with every value masked (a whole string, no streaming).
  std::string redact(std::string_view text) const;

  bool empty() const { return values_.empty(); }

 private:
  /// Masks `buf_` and releases the prefix no later input can change.
  std::string release(bool at_end);

  std::vector<std::string> values_;  // longest first: the longest match wins
  size_t max_len_ = 0;
  std::string buf_;            // undecided bytes (at most max_len_ - 1 between calls)
  size_t covered_prefix_ = 0;  // leading bytes of buf_ an earlier occurrence covers
  bool in_mask_ = false;       // the last byte released was masked
};

}  // namespace aisched
