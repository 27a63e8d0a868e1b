// Machine load from /proc; see host_stats.hpp.
#include "actors/worker/host_stats.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace aisched::worker {

namespace {

/// Busy and total jiffies of all CPUs: the first line of /proc/stat.
bool read_cpu(uint64_t& busy, uint64_t& total) {
  std::ifstream in("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      cpu != "cpu")
    return false;
  busy = user + nice + system + irq + softirq + steal;
  total = busy + idle + iowait;
  return true;
}

uint32_t percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return 0;
  auto p = (part * 100 + whole / 2) / whole;
  return static_cast<uint32_t>(p > 100 ? 100 : p);
}

}  // namespace

host_stats::host_stats() { read_cpu(busy_, total_); }

uint32_t host_stats::cpu_percent() {
  uint64_t busy = 0, total = 0;
  if (!read_cpu(busy, total) || total <= total_) return 0;
  auto p = percent(busy - busy_, total - total_);
  busy_ = busy;
  total_ = total;
  return p;
}

uint32_t host_stats::memory_percent() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  uint64_t total = 0, available = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kb = 0;
    fields >> key >> kb;
    if (key == "MemTotal:") total = kb;
    else if (key == "MemAvailable:") available = kb;
  }
  return total > available ? percent(total - available, total) : 0;
}

}  // namespace aisched::worker
