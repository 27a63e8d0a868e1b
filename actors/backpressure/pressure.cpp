// Backpressure arithmetic; see pressure.hpp.
#include "actors/backpressure/pressure.hpp"

namespace aisched::backpressure {

using proto::pressure;
using proto::pressure_level;

pressure assess(const thresholds& t, uint64_t backlog, double worker_load) {
  double ratio = t.max_backlog == 0 ? 0.0 : static_cast<double>(backlog) / t.max_backlog;
  pressure p;
  if (ratio >= t.red) {
    p.level = pressure_level::red;
  } else if (ratio >= t.yellow || worker_load >= t.load_throttle) {
    p.level = pressure_level::yellow;
    p.delay = t.yellow_delay;
  }
  return p;
}

}  // namespace aisched::backpressure
