// Sorting runs in flight at a worker's registration; see adoption.hpp.
#include "actors/router/adoption.hpp"

#include <algorithm>

namespace aisched::router {

using namespace proto;

handover sort_in_flight(const std::vector<instance>& in_flight, const std::string& worker_id,
                        const std::vector<held_run>& held) {
  handover out;
  for (auto& x : in_flight) {
    if (x.worker_id != worker_id) continue;
    bool holds = std::any_of(held.begin(), held.end(), [&](const held_run& h) {
      return h.instance_id == x.id && h.attempt == x.attempt;
    });
    if (holds)
      out.adopt.push_back(x);
    else if (never_started(x))
      out.replace.push_back(x);
    else
      out.lost.push_back(lost_report(x, "restarted without it"));
  }
  return out;
}

bool never_started(const instance& x) {
  return x.state == instance_state::dispatched && x.started_at == 0;
}

run_result failed_report(const instance& x, std::string error) {
  run_result r;
  r.instance_id = x.id;
  r.worker_id = x.worker_id;
  r.attempt = x.attempt;
  r.state = instance_state::failed;
  r.exit_code = -1;
  r.error = std::move(error);
  return r;
}

run_result lost_report(const instance& x, const std::string& why) {
  return failed_report(x, "worker_lost: worker " + x.worker_id + " " + why);
}

}  // namespace aisched::router
