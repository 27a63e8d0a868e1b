// What each replicated command says of itself. Every command struct in
// proto/commands.hpp carries `static constexpr command_traits traits{...}`:
// its name (logs, metrics, errors), how the state machine fences it, and its
// type number, the one a raft entry carries (proto::command). The registry
// (proto/commands.cpp) checks at compile time that the numbers are distinct
// and that each fencing agrees with the struct's members.
#pragma once

#include <cstdint>

namespace aisched::proto {

/// How the state machine decides whether a committed command still applies.
enum class fencing {
  none,         // a client's command: applies whoever proposed it
  leader_term,  // a leader's decision: carries `term`, refused unless it is the entry's term
};

/// A command's type number. Stored in every raft entry: a number is never
/// reused nor changed once a build has written it (format 0 numbered the
/// first 30 by their place in the command variant of that format).
using command_type = uint16_t;

struct command_traits {
  const char* name;
  fencing fence;
  command_type id;
};

}  // namespace aisched::proto
