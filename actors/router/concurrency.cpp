// Concurrency limits of tasks and pools; see concurrency.hpp.
#include "actors/router/concurrency.hpp"

namespace aisched::router {

void concurrency::hold(const std::string& run_id, const task_terms& t) {
  // Only runs of limited tasks are tracked: the rest cost nothing here.
  if (t.max_concurrency == 0 && t.pool.empty()) return;
  slot s{t.id, {t.tenant, t.pool}};
  if (!runs_.emplace(run_id, s).second) return;
  by_task_[t.id] += 1;
  if (!t.pool.empty()) by_pool_[s.pool] += 1;
}

void concurrency::release(const std::string& run_id) {
  auto i = runs_.find(run_id);
  if (i == runs_.end()) return;
  auto& s = i->second;
  if (auto n = by_task_.find(s.task_id); n != by_task_.end() && --n->second == 0) by_task_.erase(n);
  if (!s.pool.second.empty())
    if (auto n = by_pool_.find(s.pool); n != by_pool_.end() && --n->second == 0) by_pool_.erase(n);
  runs_.erase(i);
}

uint32_t concurrency::held_by_task(uint64_t task_id) const {
  auto i = by_task_.find(task_id);
  return i == by_task_.end() ? 0 : i->second;
}

uint32_t concurrency::held_in_pool(const std::string& tenant, const std::string& pool) const {
  auto i = by_pool_.find({tenant, pool});
  return i == by_pool_.end() ? 0 : i->second;
}

std::string concurrency::blocked(const task_terms& t) const {
  if (t.max_concurrency != 0) {
    auto n = held_by_task(t.id);
    if (n >= t.max_concurrency)
      return "max_concurrency " + std::to_string(t.max_concurrency) + " reached (" +
             std::to_string(n) + "/" + std::to_string(t.max_concurrency) + ")";
  }
  if (!t.pool.empty()) {
    auto size = sizes_.find({t.tenant, t.pool});
    if (size == sizes_.end()) return "pool " + t.pool + " does not exist";
    auto n = held_in_pool(t.tenant, t.pool);
    if (n >= size->second)
      return "pool " + t.pool + " full (" + std::to_string(n) + "/" +
             std::to_string(size->second) + ")";
  }
  return "";
}

}  // namespace aisched::router
