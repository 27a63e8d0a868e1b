// aisched-chaos, bulk enqueues: what the workload recorded of the bursts it
// sent (POST /api/v1/tasks/{id}/runs, the kill_mid_burst fault), and the check
// of one member's runs against them: every acknowledged run there exactly as
// acknowledged, each batch whole, no batch that no request could have made.
// Pure: runs in, violations out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

namespace aisched::chaos {

/// A bulk enqueue a member acknowledged: 202 with the ids of its runs, in the
/// order of the payloads.
struct acked_batch {
  std::string via;  // the member that answered
  size_t sent = 0;  // payloads in the request
  std::vector<std::string> run_ids;
};

/// The bulk enqueues of the manual task `task`. A request answered neither 202
/// nor 4xx (no answer, or 5xx such as outcome_unknown) may or may not have been
/// committed: `uncertain` counts them.
struct burst_record {
  uint64_t task = 0;  // 0: no bulk task was created
  std::vector<acked_batch> acked;
  uint64_t uncertain = 0;
};

/// Checks the runs member `member` lists (by run id, as GET /api/v1/instances
/// gives them) against `bursts`: every acknowledged run is there as run k of
/// its batch (its task, shard k), the runs of a batch share one instant and no
/// other run has it, every batch of the task is whole (shards 0..n-1: a batch is
/// one raft command), and the batches nobody acknowledged are no more than
/// `bursts.uncertain`. Returns the violations, one line each.
std::vector<std::string> check_bursts(const std::string& member,
                                      const std::map<std::string, boost::json::object>& runs,
                                      const burst_record& bursts);

}  // namespace aisched::chaos
