// The inspector actor: one per node, answers "what actors run here". It holds
// a named handle on each of the node's actors (given at spawn or enrolled
// later) and, on `inspnode`, asks all of them for their summary at once with
// a deadline; those that do not answer in time (busy, stuck or gone) are
// listed as unresponsive, which is itself worth seeing. aisched-inspect gets
// it from the node's endpoint. It keeps no other state.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/activity.hpp"
#include "common/clock.hpp"
#include "proto/inspection.hpp"

namespace aisched::inspector {

/// A node actor under the name the listing shows.
struct target {
  std::string name;
  proto::inspectable_actor handle;
};

struct inspector_options {
  std::string node_id;
  std::vector<std::string> roles;
  unix_ms started_at = 0;  // the node's start, on `clock`
  wall_clock clock{};      // when a listing is collected (common/clock.hpp): the system's
};

struct inspector_state {
  inspector_options opts;
  wall_clock clock;  // opts.clock
  std::vector<target> targets;
  inspector::activity activity;
  static inline const char* name = "inspector";
};

/// Bounds on the wait a caller may ask for in `inspnode` (milliseconds).
constexpr duration_ms min_wait = 10;
constexpr duration_ms max_wait = 60'000;

proto::inspector_actor::behavior_type inspector_actor_impl(
    proto::inspector_actor::stateful_pointer<inspector_state> self, inspector_options opts,
    std::vector<target> targets);

}  // namespace aisched::inspector
