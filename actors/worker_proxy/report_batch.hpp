// What a proxy commits of its worker's reports, pure: the reports queued while
// the previous batch was being committed go as one `report_results`, and a
// run's start is folded into its result when both wait in the same batch
// (a run that finished before its start was committed needs one transition,
// dispatched -> its outcome, with the start time the result carries).
#pragma once

#include <vector>

#include "proto/commands.hpp"

namespace aisched::worker_proxy {

/// Drops each `running` report of `reports` whose attempt (same instance and
/// attempt number) also has a final report later in the batch, moving its start
/// time and worker into that report where the report lacks them. Everything
/// else keeps its order.
void fold_starts(std::vector<proto::run_result>& reports);

}  // namespace aisched::worker_proxy
