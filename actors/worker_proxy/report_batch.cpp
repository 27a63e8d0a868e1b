// Folding of a batch of reports; see report_batch.hpp.
#include "actors/worker_proxy/report_batch.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace aisched::worker_proxy {

using proto::instance_state;
using proto::run_result;

void fold_starts(std::vector<run_result>& reports) {
  // Nothing to fold without a start (no-ops never report one).
  if (std::none_of(reports.begin(), reports.end(),
                   [](const run_result& r) { return r.state == instance_state::running; }))
    return;
  // The last final report of each attempt in the batch.
  std::map<std::pair<std::string, uint32_t>, size_t> final_at;
  for (size_t i = 0; i < reports.size(); ++i)
    if (reports[i].state != instance_state::running)
      final_at[{reports[i].instance_id, reports[i].attempt}] = i;
  if (final_at.empty()) return;
  std::vector<run_result> out;
  out.reserve(reports.size());
  for (size_t i = 0; i < reports.size(); ++i) {
    auto& r = reports[i];
    if (r.state == instance_state::running) {
      auto f = final_at.find({r.instance_id, r.attempt});
      if (f != final_at.end() && f->second > i) {
        auto& end = reports[f->second];
        if (end.started_at == 0) end.started_at = r.started_at;
        if (end.worker_id.empty()) end.worker_id = r.worker_id;
        continue;
      }
    }
    out.push_back(std::move(r));
  }
  reports = std::move(out);
}

}  // namespace aisched::worker_proxy
