// Out-of-line pieces of the data model; see types.hpp.
#include "proto/types.hpp"
#include "proto/worker_id.hpp"

namespace aisched::proto {

bool operator==(const task& a, const task& b) {
  return a.id == b.id && a.tenant == b.tenant && a.name == b.name && a.kind == b.kind &&
         a.command == b.command && a.http == b.http && a.image == b.image &&
         a.schedule == b.schedule && a.at == b.at && a.event == b.event &&
         a.timezone == b.timezone && a.labels == b.labels && a.route == b.route &&
         a.shards == b.shards && a.retry == b.retry && a.timeout == b.timeout &&
         a.memory_mb == b.memory_mb &&
         a.overlap == b.overlap && a.start_at == b.start_at && a.end_at == b.end_at &&
         a.jitter == b.jitter && a.catchup_window == b.catchup_window &&
         a.misfire == b.misfire && a.misfire_limit == b.misfire_limit &&
         a.depends_on == b.depends_on && a.secrets == b.secrets && a.paused == b.paused &&
         a.max_runs == b.max_runs && a.max_concurrency == b.max_concurrency &&
         a.pool == b.pool && a.exclude_calendar == b.exclude_calendar &&
         a.retention == b.retention &&
         a.created_at == b.created_at && a.updated_at == b.updated_at && a.version == b.version;
}

bool operator==(const instance& a, const instance& b) {
  return a.id == b.id && a.tenant == b.tenant && a.task_id == b.task_id && a.slot == b.slot &&
         a.shard == b.shard && a.shards == b.shards && a.attempt == b.attempt &&
         a.state == b.state && a.worker_id == b.worker_id && a.created_at == b.created_at &&
         a.dispatched_at == b.dispatched_at && a.started_at == b.started_at &&
         a.finished_at == b.finished_at && a.next_attempt_at == b.next_attempt_at && a.deadline == b.deadline &&
         a.exit_code == b.exit_code && a.error == b.error && a.output == b.output &&
         a.trace_id == b.trace_id && a.idempotency_key == b.idempotency_key &&
         a.event_name == b.event_name && a.event_payload == b.event_payload;
}

std::string make_instance_id(uint64_t task_id, unix_ms slot, uint32_t shard) {
  return std::to_string(task_id) + "-" + std::to_string(slot) + "-" + std::to_string(shard);
}

std::string scoped_worker_id(const std::string& tenant, const std::string& id) {
  static const std::string default_tenant = worker{}.tenant;
  if (tenant == default_tenant && id.find('@') == std::string::npos) return id;
  return id + "@" + tenant;
}

std::string api_worker_id(const std::string& tenant, const std::string& id) {
  auto suffix = "@" + tenant;
  if (id.size() <= suffix.size() || id.compare(id.size() - suffix.size(), suffix.size(), suffix))
    return id;
  return id.substr(0, id.size() - suffix.size());
}

}  // namespace aisched::proto
