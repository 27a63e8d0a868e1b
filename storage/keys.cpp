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

std::string to_hex(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 0xf]);
  }
  return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

}  // namespace aisched::storage::keys
