// CPU and memory use of the machine a worker runs on, from /proc, for its
// heartbeats. CPU use is measured between two samples, so the first reading
// after construction covers the time since construction.
#pragma once

#include <cstdint>

namespace aisched::worker {

class host_stats {
 public:
  host_stats();
  /// Percent of CPU time busy (all cores) since the previous call.
  uint32_t cpu_percent();
  /// Percent of memory in use (MemTotal - MemAvailable).
  static uint32_t memory_percent();

 private:
  uint64_t busy_ = 0, total_ = 0;
};

}  // namespace aisched::worker
