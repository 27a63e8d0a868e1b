// Validation rules for tasks and workers; see validate.hpp.
#include "proto/validate.hpp"

#include <algorithm>
#include <set>

#include "proto/errors.hpp"
#include "proto/secret_types.hpp"

namespace aisched::proto {

namespace {

caf::error bad(const std::string& field, const std::string& why) {
  return make_error(errc::invalid_argument, field, field + ": " + why);
}

/// A header name as it may appear in a field path: CR and LF spelled out.
std::string printable(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '\r') out += "\\r";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

bool is_http_url(const std::string& url) {
  return (url.rfind("http://", 0) == 0 && url.size() > 7) ||
         (url.rfind("https://", 0) == 0 && url.size() > 8);
}

bool env_name(const std::string& s) {
  if (s.empty() || s.size() > 128 || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

/// The structure of a task's secret references (which exist is the gateway's
/// check): variable names a shell accepts that do not shadow a run's own
/// variables, valid secret names, placeholders only where they are filled.
caf::error validate_secret_refs(const task& t) {
  static const std::set<std::string> reserved{
      "PATH",     "HOME",     "IDEMPOTENCY_KEY", "SHARD_NO", "SHARD_TOTAL",
      "SCHEDULE_INSTANCE_ID", "ATTEMPT",         "TRACE_ID", "TASK_ID"};
  if (t.secrets.size() > 64) return bad("secrets", "at most 64 secrets per task");
  for (auto& [var, name] : t.secrets) {
    auto field = "secrets." + printable(var);
    if (!env_name(var))
      return bad(field, "not an environment variable name (A-Z, a-z, 0-9, '_', not starting "
                        "with a digit)");
    if (reserved.count(var) || var.rfind("AISCHED_", 0) == 0)
      return bad(field, "reserved: every run sets this variable itself");
    if (!valid_secret_name(name))
      return bad(field, "secret names are 1-128 of A-Z, a-z, 0-9, '_', '.', '-'");
  }
  if (!secret_refs(t.command).empty())
    return bad("command", "{{secret.NAME}} is not filled in commands: map the secret to an "
                          "environment variable in 'secrets' and use $VARIABLE");
  if (!secret_refs(t.http.url).empty())
    return bad("http.url", "secrets may not appear in the URL (URLs are shown and logged); "
                           "use a header or the body");
  return {};
}

}  // namespace

caf::error validate_retention(const retention_policy& r, const std::string& prefix) {
  if (r.keep_for < 0 || r.keep_for > max_keep_for)
    return bad(prefix + "keep_for", "must be between 0s (the cluster's default) and 87600h");
  if (r.keep_for != 0 && r.keep_for < 1000)
    return bad(prefix + "keep_for", "must be at least 1s (or 0s: the cluster's default)");
  if (r.keep_runs > max_keep_runs)
    return bad(prefix + "keep_runs", "must be at most " + std::to_string(max_keep_runs));
  return {};
}

caf::error validate_task(const task& t) {
  if (t.name.empty()) return bad("name", "must not be empty");
  if (t.name.size() > max_name_length)
    return bad("name", "longer than " + std::to_string(max_name_length) + " characters");
  if (t.command.size() > max_command_length) return bad("command", "too long");
  switch (t.kind) {
    case task_kind::shell:
      if (t.command.empty()) return bad("command", "required for kind 'shell'");
      break;
    case task_kind::http: {
      if (!is_http_url(t.http.url))
        return bad("http.url", "required for kind 'http' and must start with http:// or https://");
      static const std::set<std::string> methods{"GET",    "POST", "PUT",    "PATCH",
                                                 "DELETE", "HEAD", "OPTIONS"};
      if (!methods.count(t.http.method))
        return bad("http.method", "unsupported method '" + t.http.method + "'");
      // A line break would end the header and start another (or the body): injection.
      for (auto& [name, value] : t.http.headers)
        if ((name + value).find_first_of("\r\n") != std::string::npos)
          return bad("http.headers." + printable(name), "must not contain CR or LF");
      break;
    }
    case task_kind::container:
      if (t.image.empty()) return bad("image", "required for kind 'container'");
      break;
    case task_kind::noop:
      break;
  }
  int triggers = !t.schedule.empty() + (t.at != 0) + !t.event.empty();
  if (triggers > 1)
    return bad("schedule", "set at most one of 'schedule', 'at' and 'event'");
  if (t.timezone.empty()) return bad("timezone", "must not be empty (use \"UTC\")");
  if (t.shards < 1 || t.shards > max_shards)
    return bad("shards", "must be between 1 and " + std::to_string(max_shards));
  if (t.memory_mb > 1024 * 1024) return bad("memory_mb", "must be at most 1048576 (1 TiB)");
  if (t.timeout <= 0 || t.timeout > max_timeout)
    return bad("timeout", "must be greater than 0s and at most 168h");
  const auto& r = t.retry;
  if (r.max_attempts < 1 || r.max_attempts > max_attempts_limit)
    return bad("retry.max_attempts", "must be between 1 and " + std::to_string(max_attempts_limit));
  if (r.kind == retry_kind::exponential) {
    if (r.initial <= 0) return bad("retry.initial", "must be greater than 0s");
    if (r.max < r.initial) return bad("retry.max", "must not be smaller than retry.initial");
    if (!(r.multiplier >= 1.0 && r.multiplier <= 100.0))
      return bad("retry.multiplier", "must be between 1 and 100");
  }
  if ((r.kind == retry_kind::fixed || r.kind == retry_kind::on_error_codes) && r.interval <= 0)
    return bad("retry.interval", "must be greater than 0s");
  if (r.kind == retry_kind::on_error_codes && r.error_codes.empty())
    return bad("retry.error_codes", "required for policy 'on_error_codes'");
  if (t.start_at != 0 && t.end_at != 0 && t.end_at <= t.start_at)
    return bad("end_at", "must be after start_at");
  if (t.jitter < 0) return bad("jitter", "must not be negative");
  if (t.misfire == misfire_policy::fire_all && t.misfire_limit == 0)
    return bad("misfire_limit", "must be at least 1 for misfire 'fire_all'");
  for (auto& [k, v] : t.labels)
    if (k.empty()) return bad("labels", "label names must not be empty");
  if (auto err = validate_secret_refs(t)) return err;
  for (auto dep : t.depends_on) {
    if (dep == 0) return bad("depends_on", "task ids start at 1");
    if (t.id != 0 && dep == t.id) return bad("depends_on", "a task cannot depend on itself");
  }
  if (t.max_runs != 0 && t.schedule.empty() && t.at == 0 && t.event.empty())
    return bad("max_runs", "the task has no schedule or event whose fires it could count");
  if (t.max_runs > max_runs_limit)
    return bad("max_runs", "must be at most " + std::to_string(max_runs_limit));
  if (t.max_concurrency > max_pool_size)
    return bad("max_concurrency", "must be at most " + std::to_string(max_pool_size));
  if (!t.pool.empty())
    if (auto err = validate_control_name(t.pool, "pool")) return err;
  if (!t.exclude_calendar.empty())
    if (auto err = validate_control_name(t.exclude_calendar, "exclude_calendar")) return err;
  if (auto err = validate_retention(t.retention, "retention.")) return err;
  auto deps = t.depends_on;
  std::sort(deps.begin(), deps.end());
  if (std::adjacent_find(deps.begin(), deps.end()) != deps.end())
    return bad("depends_on", "lists a task twice");
  return {};
}

caf::error validate_worker(const worker& w) {
  if (w.id.empty()) return bad("id", "must not be empty");
  if (w.id.size() > max_name_length) return bad("id", "too long");
  if (w.protocol == worker_protocol::http && !is_http_url(w.address))
    return bad("callback_url", "must start with http:// or https://");
  if (w.max_load < 1) return bad("max_load", "must be at least 1");
  if (w.cpu_percent > 100) return bad("cpu_percent", "must be between 0 and 100");
  if (w.memory_percent > 100) return bad("memory_percent", "must be between 0 and 100");
  return {};
}

}  // namespace aisched::proto
