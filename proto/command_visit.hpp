// Reading a proto::command back as its struct: the state machine's dispatch
// (and tests'). Kept apart from commands.hpp so that only the files that apply
// commands include the codec.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "proto/codec.hpp"
#include "proto/commands.hpp"
#include "proto/errors.hpp"

namespace aisched::proto {

namespace detail {

template <class T>
struct command_tag {
  using type = T;
};

/// Reads `c` as the command its type number names with `read_as(tag, bytes)`
/// (the codec's decode, or format_1's) and answers `f` of it.
template <class R, class Read, class F, class... Ts>
R visit_listed(command_list<Ts...>, const command& c, Read read_as, F& f) {
  std::optional<R> out;  // the error of an unknown type is built only then
  auto read = [&](auto tag) {
    using T = typename decltype(tag)::type;
    caf::expected<T> x = read_as(tag, c.data);
    if (!x)
      out.emplace(make_error(errc::corrupted, "command",
                             std::string("a ") + T::traits.name + " that does not decode: " +
                                 view(x.error()).message));
    else
      out.emplace(f(*x));
    return true;
  };
  (void)((c.type == Ts::traits.id && read(command_tag<Ts>{})) || ...);
  if (out) return std::move(*out);
  return R{make_error(errc::corrupted, "command",
                      "unknown command type " + std::to_string(c.type) +
                          " (written by a newer build?)")};
}

}  // namespace detail

/// Decodes `c` as the command its type number names and calls `f` with it
/// (an lvalue of that struct). R, what `f` answers, must take a caf::error:
/// an unknown type number or bytes that do not decode answer errc::corrupted.
template <class F>
auto visit_command(const command& c, F&& f) {
  using R = decltype(f(std::declval<noop&>()));
  auto read = [](auto tag, std::string_view bytes) {
    return decode<typename decltype(tag)::type>(bytes);
  };
  return detail::visit_listed<R>(all_commands{}, c, read, f);
}

/// visit_command for a command data formats 0 and 1 stored: its bytes are
/// CAF's encoding of its struct (proto::format_1). The migrations read them.
template <class F>
auto visit_command_format_1(const command& c, F&& f) {
  using R = decltype(f(std::declval<noop&>()));
  auto read = [](auto tag, std::string_view bytes) {
    return format_1::decode<typename decltype(tag)::type>(bytes);
  };
  return detail::visit_listed<R>(all_commands{}, c, read, f);
}

}  // namespace aisched::proto
