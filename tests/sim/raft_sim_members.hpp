// The membership side of the raft simulation (tests/sim/raft_sim): random
// single-server changes proposed by leaders (add a spare or removed member as
// a learner, promote a learner, remove any member including the leader), and
// the checks that only hold with changing memberships: at most one
// uncommitted change in any log, and which votes a campaign could collect
// given each member's own view of the membership.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/raft/core.hpp"

namespace aisched::raft::sim {

/// The membership in effect for a log of `entries` over a base membership.
proto::membership latest_membership(const std::vector<proto::log_entry>& entries,
                                    const proto::membership& base);

/// Whether member `id` could campaign after restarting from a durable log of
/// `entries` after a snapshot base (`base_index`, `base`) with commit index
/// `commit`: raft::core::can_campaign() of the restored member.
bool could_campaign(const std::vector<proto::log_entry>& entries, uint64_t base_index,
                    const proto::membership& base, uint64_t commit, const std::string& id);

/// What a random change did, for traces and stats.
struct change_outcome {
  bool proposed = false;
  bool removes_leader = false;
  std::string what;  // "" if nothing was tried
};

/// Proposes one random single-server change on `leader`: `all_ids` are every
/// member the simulation runs (spares included); at least `min_voters` voters
/// stay. `roll_*` are random numbers from the simulation's generator. A
/// refusal for a change in progress or an uncommitted term is fine; any other
/// refusal of an allowed change returns an outcome whose `what` starts with
/// "refused".
change_outcome propose_random_change(core& leader, const std::vector<std::string>& all_ids,
                                     size_t min_voters, uint64_t roll_kind, uint64_t roll_pick);

/// "" if `c`'s log holds at most one membership entry above `committed` (the
/// highest index known committed anywhere), else what is wrong.
std::string check_one_uncommitted_change(const core& c, uint64_t committed);

}  // namespace aisched::raft::sim
