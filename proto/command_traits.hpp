// What each replicated command says of itself. Every command struct in
// proto/commands.hpp carries `static constexpr command_traits traits{...}`:
// its name (logs, metrics, errors) and how the state machine fences it. The
// registry (proto/registry.cpp) visits the variant through these, and checks
// at compile time that each struct has them and that they agree with its members.
#pragma once

namespace aisched::proto {

/// How the state machine decides whether a committed command still applies.
enum class fencing {
  none,         // a client's command: applies whoever proposed it
  leader_term,  // a leader's decision: carries `term`, refused unless it is the entry's term
};

struct command_traits {
  const char* name;
  fencing fence;
};

}  // namespace aisched::proto
