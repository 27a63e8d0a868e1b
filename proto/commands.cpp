// The command registry: type numbers, names and fencing of every command in
// proto::all_commands, and the encoding of each into a proto::command.
#include "proto/commands.hpp"

#include <array>

#include "proto/codec.hpp"

namespace aisched::proto {

namespace {

/// Whether command type T has a `term` member (what a leader-fenced command
/// carries), detected so its traits cannot claim otherwise.
template <class T, class = void>
struct carries_term : std::false_type {};
template <class T>
struct carries_term<T, std::void_t<decltype(std::declval<T&>().term)>> : std::true_type {};

template <class T>
constexpr bool traits_agree() {
  return (T::traits.fence == fencing::leader_term) == carries_term<T>::value;
}

template <class... Ts>
constexpr bool all_traits_agree(command_list<Ts...>) {
  return (traits_agree<Ts>() && ...);
}
static_assert(all_traits_agree(all_commands{}),
              "a command is fenced by leader_term exactly when it carries a term");

template <class... Ts>
constexpr bool numbers_distinct(command_list<Ts...>) {
  constexpr std::array<command_type, sizeof...(Ts)> ids{Ts::traits.id...};
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t j = i + 1; j < ids.size(); ++j)
      if (ids[i] == ids[j]) return false;
  return true;
}
static_assert(numbers_distinct(all_commands{}), "two commands have the same type number");

template <class... Ts>
const command_traits* find_traits(command_list<Ts...>, command_type type) {
  const command_traits* out = nullptr;
  (void)((type == Ts::traits.id ? (out = &Ts::traits, true) : false) || ...);
  return out;
}

template <class... Ts>
std::string encode_data(command_list<Ts...>, command_type type, const void* x) {
  std::string out;
  bool found = ((type == Ts::traits.id ? (out = encode(*static_cast<const Ts*>(x)), true) : false) ||
                ...);
  AISCHED_INVARIANT(found, "a command struct has a type number missing from all_commands");
  return out;
}

template <class... Ts>
bool decode_data(command_list<Ts...>, command_type type, std::string_view data, void* out) {
  bool ok = false;
  auto read = [&](auto* x) {
    auto got = decode<std::decay_t<decltype(*x)>>(data);
    if (got) *x = std::move(*got);
    return static_cast<bool>(got);
  };
  (void)((type == Ts::traits.id ? (ok = read(static_cast<Ts*>(out)), true) : false) || ...);
  return ok;
}

}  // namespace

std::string encode_command_data(command_type type, const void* x) {
  return encode_data(all_commands{}, type, x);
}

bool decode_command_data(command_type type, std::string_view data, void* out) {
  return decode_data(all_commands{}, type, data, out);
}

const command_traits* traits_of(command_type type) { return find_traits(all_commands{}, type); }

const char* command_name(const command& cmd) {
  auto* t = traits_of(cmd.type);
  return t != nullptr ? t->name : "unknown";
}

bool fenced_by_leader(const command& cmd) {
  auto* t = traits_of(cmd.type);
  return t != nullptr && t->fence == fencing::leader_term;
}

}  // namespace aisched::proto
