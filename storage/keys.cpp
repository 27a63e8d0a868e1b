// Parsing helpers for keys; see keys.hpp.
#include "storage/keys.hpp"

#include <charconv>

namespace aisched::storage::keys {

std::optional<instance_ref> parse_instance_id(std::string_view id) {
  // Split at the first and the last '-': the slot may itself be negative.
  auto first = id.find('-');
  auto last = id.rfind('-');
  if (first == std::string_view::npos || first == last) return std::nullopt;
  instance_ref ref;
  auto parse = [](std::string_view s, auto& out) {
    if (s.empty()) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && p == s.data() + s.size();
  };
  if (!parse(id.substr(0, first), ref.task_id) ||
      !parse(id.substr(first + 1, last - first - 1), ref.slot) ||
      !parse(id.substr(last + 1), ref.shard))
    return std::nullopt;
  return ref;
}

}  // namespace aisched::storage::keys
