// The data model every part of aisched shares: tasks, instances (one run of one
// shard of one slot) and workers, with their enums. Each type is defined once here
// with its CAF inspect() (used for messages and RocksDB values); JSON mapping for
// REST lives in proto/json.hpp, validation in proto/validate.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "proto/field.hpp"
#include "proto/finite.hpp"
#include "proto/time.hpp"

namespace aisched::proto {

// -- enums -------------------------------------------------------------------

enum class task_kind : uint8_t { shell, http, container, noop };
enum class route_strategy : uint8_t {
  least_loaded, round_robin, random, first, last, lfu, lru, consistent_hash, failover,
  busyover, broadcast,
};
enum class retry_kind : uint8_t { fixed, exponential, on_error_codes };
enum class overlap_policy : uint8_t { allow, skip, buffer_one, buffer_all, replace };
enum class misfire_policy : uint8_t { fire_once, skip, fire_all };
enum class instance_state : uint8_t {
  pending, dispatched, running, success, failed, timed_out, cancelled, retry_waiting,
};
enum class worker_protocol : uint8_t { native, http };
enum class worker_status : uint8_t { online, offline, draining };

/// The wire/JSON names of each enum, indexed by its underlying value.
template <class E> struct enum_names;
template <> struct enum_names<task_kind> {
  static constexpr std::string_view name = "task_kind";
  static constexpr std::array<std::string_view, 4> value{"shell", "http", "container", "noop"};
};
template <> struct enum_names<route_strategy> {
  static constexpr std::string_view name = "route_strategy";
  static constexpr std::array<std::string_view, 11> value{
      "least_loaded", "round_robin", "random", "first", "last", "lfu", "lru",
      "consistent_hash", "failover", "busyover", "broadcast"};
};
template <> struct enum_names<retry_kind> {
  static constexpr std::string_view name = "retry_kind";
  static constexpr std::array<std::string_view, 3> value{"fixed", "exponential",
                                                         "on_error_codes"};
};
template <> struct enum_names<overlap_policy> {
  static constexpr std::string_view name = "overlap_policy";
  static constexpr std::array<std::string_view, 5> value{"allow", "skip", "buffer_one",
                                                         "buffer_all", "replace"};
};
template <> struct enum_names<misfire_policy> {
  static constexpr std::string_view name = "misfire_policy";
  static constexpr std::array<std::string_view, 3> value{"fire_once", "skip", "fire_all"};
};
template <> struct enum_names<instance_state> {
  static constexpr std::string_view name = "instance_state";
  static constexpr std::array<std::string_view, 8> value{
      "pending", "dispatched", "running", "success", "failed", "timed_out", "cancelled",
      "retry_waiting"};
};
template <> struct enum_names<worker_protocol> {
  static constexpr std::string_view name = "worker_protocol";
  static constexpr std::array<std::string_view, 2> value{"native", "http"};
};
template <> struct enum_names<worker_status> {
  static constexpr std::string_view name = "worker_status";
  static constexpr std::array<std::string_view, 3> value{"online", "offline", "draining"};
};

/// Returns the name of `x` ("?" for a value outside the enum).
template <class E>
std::string_view name_of(E x) {
  auto i = static_cast<size_t>(x);
  const auto& names = enum_names<E>::value;
  return i < names.size() ? names[i] : std::string_view{"?"};
}

/// Parses an enum from its name; nullopt if `s` names no value.
template <class E>
std::optional<E> parse_enum(std::string_view s) {
  const auto& names = enum_names<E>::value;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

/// Whether an instance in state `s` has finished for good (no further transitions).
inline bool is_terminal(instance_state s) {
  return s == instance_state::success || s == instance_state::failed ||
         s == instance_state::timed_out || s == instance_state::cancelled;
}

// -- task --------------------------------------------------------------------

/// What an `http` task calls.
struct http_spec {
  std::string method = "GET";
  std::string url;
  std::map<std::string, std::string> headers;
  std::string body;
  friend bool operator==(const http_spec& a, const http_spec& b) {
    return a.method == b.method && a.url == b.url && a.headers == b.headers && a.body == b.body;
  }
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, http_spec& x) {
  return f(caf::meta::type_name("aisched.http_spec"), field("method"), x.method,
           field("url"), x.url, field("headers"), x.headers, field("body"), x.body,
           keep_unknown(x.unknown));
}

/// How a failed run is retried. `max_attempts` counts the first run (1 = no retry).
struct retry_policy {
  retry_kind kind = retry_kind::exponential;
  uint32_t max_attempts = 1;
  duration_ms interval = 1000;      // fixed: wait between attempts
  duration_ms initial = 1000;       // exponential: first backoff
  duration_ms max = 600'000;        // exponential: cap (10 min)
  double multiplier = 2.0;          // exponential: growth per attempt
  bool jitter = false;              // full jitter in [0, backoff]
  std::vector<int32_t> error_codes; // on_error_codes: exit codes that are retried
  duration_ms window = 0;           // no new attempt later than slot + window (0: unbounded)
  friend bool operator==(const retry_policy& a, const retry_policy& b) {
    return a.kind == b.kind && a.max_attempts == b.max_attempts && a.interval == b.interval &&
           a.initial == b.initial && a.max == b.max && a.multiplier == b.multiplier &&
           a.jitter == b.jitter && a.error_codes == b.error_codes && a.window == b.window;
  }
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, retry_policy& x) {
  return f(caf::meta::type_name("aisched.retry_policy"), field("kind"), x.kind,
           field("max_attempts"), x.max_attempts, field("interval"), x.interval,
           field("initial"), x.initial, field("max"), x.max, save_finite(x.multiplier),
           field("multiplier"), x.multiplier, load_finite(x.multiplier), field("jitter"), x.jitter,
           field("error_codes"), x.error_codes, field("window"), x.window, keep_unknown(x.unknown));
}

/// How long the finished runs of a task are kept (run-history retention,
/// actors/retention): a run that ended more than `keep_for` ago goes, and so
/// do the oldest beyond the newest `keep_runs` run records of the task (each
/// shard's run is one record). Runs not finished are never removed. 0 in
/// either: the cluster's default (aisched --retention-keep-for / -keep-runs).
struct retention_policy {
  duration_ms keep_for = 0;
  uint32_t keep_runs = 0;
  friend bool operator==(const retention_policy& a, const retention_policy& b) {
    return a.keep_for == b.keep_for && a.keep_runs == b.keep_runs;
  }
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, retention_policy& x) {
  return f(caf::meta::type_name("aisched.retention_policy"), field("keep_for"), x.keep_for,
           field("keep_runs"), x.keep_runs, keep_unknown(x.unknown));
}

/// A task definition. At most one of `schedule`, `at`, `event` is set; none means
/// manual only. Ids, versions and times are assigned by the cluster.
struct task {
  uint64_t id = 0;
  std::string tenant = "default";
  std::string name;
  task_kind kind = task_kind::shell;
  std::string command;  // shell, container
  http_spec http;       // http
  std::string image;    // container
  // trigger
  std::string schedule;  // cron (5/6 fields), @every <d>, @hourly ...
  unix_ms at = 0;        // one-shot instant (0: none)
  std::string event;     // named event subscription
  std::string timezone = "UTC";
  // placement
  std::map<std::string, std::string> labels;  // worker label selector
  route_strategy route = route_strategy::least_loaded;
  uint32_t shards = 1;
  // execution policy
  retry_policy retry;
  duration_ms timeout = 3'600'000;
  uint32_t memory_mb = 0;  // memory cap of each run in MiB (0: none)
  overlap_policy overlap = overlap_policy::allow;
  unix_ms start_at = 0;  // no fires before (0: unbounded)
  unix_ms end_at = 0;    // no fires after (0: unbounded)
  duration_ms jitter = 0;
  duration_ms catchup_window = 0;  // missed slots older than this are not caught up (0: any)
  misfire_policy misfire = misfire_policy::fire_once;
  uint32_t misfire_limit = 10;  // fire_all: at most this many catch-up runs
  std::vector<uint64_t> depends_on;
  /// Environment variable of each run -> name of a secret of the task's tenant
  /// (storage/secret_store); the value reaches the run only, never the task.
  std::map<std::string, std::string> secrets;
  // limits
  uint32_t max_runs = 0;         // the schedule ends after this many fires (0: unbounded)
  uint32_t max_concurrency = 0;  // runs of the task dispatched or running at once (0: any)
  std::string pool;              // the tenant's pool whose size bounds runs across tasks
  std::string exclude_calendar;  // the tenant's calendar of dates the schedule skips
  retention_policy retention;    // how long its finished runs are kept
  // lifecycle
  bool paused = false;
  unix_ms created_at = 0;
  unix_ms updated_at = 0;
  uint64_t version = 0;

  friend bool operator==(const task& a, const task& b);
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task& x) {
  return f(caf::meta::type_name("aisched.task"), field("id"), x.id, field("tenant"), x.tenant,
           field("name"), x.name, field("kind"), x.kind, field("command"), x.command,
           field("http"), x.http, field("image"), x.image, field("schedule"), x.schedule,
           field("at"), x.at, field("event"), x.event, field("timezone"), x.timezone,
           field("labels"), x.labels, field("route"), x.route, field("shards"), x.shards,
           field("retry"), x.retry, field("timeout"), x.timeout, field("overlap"), x.overlap,
           field("start_at"), x.start_at, field("end_at"), x.end_at, field("jitter"), x.jitter,
           field("catchup_window"), x.catchup_window, field("misfire"), x.misfire,
           field("misfire_limit"), x.misfire_limit, field("depends_on"), x.depends_on,
           field("paused"), x.paused, field("created_at"), x.created_at,
           field("updated_at"), x.updated_at, field("version"), x.version,
           field("memory_mb"), x.memory_mb, field("secrets"), x.secrets,
           field("max_runs"), x.max_runs, field("max_concurrency"), x.max_concurrency,
           field("pool"), x.pool, field("exclude_calendar"), x.exclude_calendar,
           field("retention"), x.retention, keep_unknown(x.unknown));
}

/// Runtime facts about a task kept by the state machine beside its definition:
/// the last slot fired (so a repeated or late fire of an older slot is visible),
/// how many slots its schedule fired (what `max_runs` counts: every member,
/// and so every next leader, counts the same fire records), and how many run
/// records it has (created by fires, removed by retention: what `keep_runs`
/// bounds).
struct task_runtime {
  uint64_t task_id = 0;
  unix_ms last_slot = 0;
  std::string last_instance_id;
  instance_state last_state = instance_state::pending;
  uint64_t scheduled_fires = 0;
  uint64_t runs = 0;
  friend bool operator==(const task_runtime& a, const task_runtime& b) {
    return a.task_id == b.task_id && a.last_slot == b.last_slot &&
           a.last_instance_id == b.last_instance_id && a.last_state == b.last_state &&
           a.scheduled_fires == b.scheduled_fires && a.runs == b.runs;
  }
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_runtime& x) {
  return f(caf::meta::type_name("aisched.task_runtime"), field("task_id"), x.task_id,
           field("last_slot"), x.last_slot, field("last_instance_id"), x.last_instance_id,
           field("last_state"), x.last_state, field("scheduled_fires"), x.scheduled_fires,
           field("runs"), x.runs, keep_unknown(x.unknown));
}

// -- instance ----------------------------------------------------------------

/// One run of one shard of one slot of a task. Its id is deterministic,
/// `{task}-{slot_ms}-{shard}`, so firing the same slot twice creates nothing new.
struct instance {
  std::string id;
  std::string tenant = "default";
  uint64_t task_id = 0;
  unix_ms slot = 0;
  uint32_t shard = 0;
  uint32_t shards = 1;
  uint32_t attempt = 1;
  instance_state state = instance_state::pending;
  std::string worker_id;
  unix_ms created_at = 0;
  unix_ms dispatched_at = 0;
  unix_ms started_at = 0;
  unix_ms finished_at = 0;
  unix_ms next_attempt_at = 0;  // retry_waiting: when the next attempt is due
  unix_ms deadline = 0;         // dispatched/running: no report by then -> timed_out
  int32_t exit_code = 0;
  std::string error;
  std::string output;  // capped tail of stdout+stderr
  std::string trace_id;
  std::string idempotency_key;
  std::string event_name;     // the event that fired this run, if any
  std::string event_payload;  // its JSON payload, substituted into the task at dispatch

  friend bool operator==(const instance& a, const instance& b);
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, instance& x) {
  return f(caf::meta::type_name("aisched.instance"), field("id"), x.id, field("tenant"), x.tenant,
           field("task_id"), x.task_id, field("slot"), x.slot, field("shard"), x.shard,
           field("shards"), x.shards, field("attempt"), x.attempt, field("state"), x.state,
           field("worker_id"), x.worker_id, field("created_at"), x.created_at,
           field("dispatched_at"), x.dispatched_at, field("started_at"), x.started_at,
           field("finished_at"), x.finished_at, field("next_attempt_at"), x.next_attempt_at,
           field("deadline"), x.deadline, field("exit_code"), x.exit_code, field("error"), x.error,
           bytes_field("output"), x.output, field("trace_id"), x.trace_id,
           field("idempotency_key"), x.idempotency_key, field("event_name"), x.event_name,
           field("event_payload"), x.event_payload, keep_unknown(x.unknown));
}

/// The deterministic id of the run of `shard` of `task_id`'s slot `slot`.
std::string make_instance_id(uint64_t task_id, unix_ms slot, uint32_t shard);

/// One attempt of a run as it ended (or, in a listing, as it stands while in
/// flight): kept by the state machine in the `attempts` column family beside
/// the instance, one record per ended attempt, so re-runs stay visible
/// (GET /api/v1/instances/{id}/attempts). `state` is how the attempt ended:
/// success, failed, timed_out or cancelled (a failed attempt that is retried
/// is `failed` here while the instance waits in retry_waiting).
struct attempt_record {
  uint32_t attempt = 1;
  std::string worker_id;
  instance_state state = instance_state::pending;
  unix_ms dispatched_at = 0;
  unix_ms started_at = 0;
  unix_ms finished_at = 0;
  int32_t exit_code = 0;
  std::string error;
  std::string output;  // the last attempt_output_cap bytes of the attempt's output
  friend bool operator==(const attempt_record& a, const attempt_record& b) {
    return a.attempt == b.attempt && a.worker_id == b.worker_id && a.state == b.state &&
           a.dispatched_at == b.dispatched_at && a.started_at == b.started_at &&
           a.finished_at == b.finished_at && a.exit_code == b.exit_code && a.error == b.error &&
           a.output == b.output;
  }
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, attempt_record& x) {
  return f(caf::meta::type_name("aisched.attempt_record"), field("attempt"), x.attempt,
           field("worker_id"), x.worker_id, field("state"), x.state,
           field("dispatched_at"), x.dispatched_at, field("started_at"), x.started_at,
           field("finished_at"), x.finished_at, field("exit_code"), x.exit_code,
           field("error"), x.error, bytes_field("output"), x.output, keep_unknown(x.unknown));
}

/// Bytes of output kept per attempt record, and records kept per instance
/// (the oldest are dropped beyond that).
constexpr size_t attempt_output_cap = 4096;
constexpr uint32_t attempts_kept = 50;

/// The attempts of one instance, oldest first; the last is the attempt in
/// flight when the instance is dispatched or running.
struct attempt_list {
  std::string instance_id;
  std::vector<attempt_record> items;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, attempt_list& x) {
  return f(caf::meta::type_name("aisched.attempt_list"), field("instance_id"), x.instance_id,
           field("items"), x.items);
}

// -- worker ------------------------------------------------------------------

/// Whether a worker with `labels` satisfies a task's label `selector`: every
/// key=value of the selector is among the labels.
inline bool labels_match(const std::map<std::string, std::string>& selector,
                         const std::map<std::string, std::string>& labels) {
  for (auto& [k, v] : selector) {
    auto i = labels.find(k);
    if (i == labels.end() || i->second != v) return false;
  }
  return true;
}

/// An attempt of a run a native worker still holds: executing now, or ended
/// with a final report in its outbox the scheduler has not acknowledged.
struct held_run {
  std::string instance_id;
  uint32_t attempt = 0;
  friend bool operator==(const held_run& a, const held_run& b) {
    return a.instance_id == b.instance_id && a.attempt == b.attempt;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, held_run& x) {
  return f(caf::meta::type_name("aisched.held_run"), field("instance_id"), x.instance_id,
           field("attempt"), x.attempt);
}

struct worker {
  std::string id;
  std::string tenant = "default";
  worker_protocol protocol = worker_protocol::native;
  std::string address;  // native: host:port of its node; http: callback URL
  std::map<std::string, std::string> labels;
  uint32_t max_load = 16;
  uint32_t load = 0;
  unix_ms last_heartbeat = 0;
  worker_status status = worker_status::online;
  uint32_t cpu_percent = 0;     // of the worker's machine, at its last heartbeat
  uint32_t memory_percent = 0;  // used memory of the worker's machine
  bool shared = false;          // takes runs of every tenant, not only its own
  /// External workers: the secret issued at registration, returned only in
  /// the registration's answer; heartbeats and reports must carry it.
  std::string credential;
  /// Native workers, in each registration: the runs it holds, so a new leader
  /// (or this one, after the worker restarted) can tell an attempt in flight
  /// from one lost with the worker. Not part of the worker's identity.
  std::vector<held_run> held;

  friend bool operator==(const worker& a, const worker& b) {
    return a.id == b.id && a.tenant == b.tenant && a.shared == b.shared &&
           a.credential == b.credential && a.protocol == b.protocol &&
           a.address == b.address && a.labels == b.labels && a.max_load == b.max_load &&
           a.load == b.load && a.last_heartbeat == b.last_heartbeat && a.status == b.status &&
           a.cpu_percent == b.cpu_percent && a.memory_percent == b.memory_percent;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker& x) {
  return f(caf::meta::type_name("aisched.worker"), field("id"), x.id, field("tenant"), x.tenant,
           field("protocol"), x.protocol, field("address"), x.address, field("labels"), x.labels,
           field("max_load"), x.max_load, field("load"), x.load,
           field("last_heartbeat"), x.last_heartbeat, field("status"), x.status,
           field("cpu_percent"), x.cpu_percent, field("memory_percent"), x.memory_percent,
           field("shared"), x.shared, field("credential"), x.credential, field("held"), x.held);
}

/// A worker's periodic sign of life: its load (runs it is executing, external
/// work included), its machine's CPU and memory use, and whether it is
/// draining itself (shutting down: finishing its runs, taking no new ones).
struct worker_heartbeat {
  std::string id;
  uint32_t load = 0;
  uint32_t cpu_percent = 0;
  uint32_t memory_percent = 0;
  bool draining = false;
  std::string credential;  // external workers: issued at registration
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_heartbeat& x) {
  return f(caf::meta::type_name("aisched.worker_heartbeat"), field("id"), x.id,
           field("load"), x.load, field("cpu_percent"), x.cpu_percent,
           field("memory_percent"), x.memory_percent, field("draining"), x.draining,
           field("credential"), x.credential);
}

/// One worker's load at one sample instant of the leader's load history
/// (GET /api/v1/workers/{id}/load-history).
struct load_sample {
  std::string worker_id;
  unix_ms at = 0;
  uint32_t load = 0;
  uint32_t max_load = 0;
  uint32_t cpu_percent = 0;
  uint32_t memory_percent = 0;
  friend bool operator==(const load_sample& a, const load_sample& b) {
    return a.worker_id == b.worker_id && a.at == b.at && a.load == b.load &&
           a.max_load == b.max_load && a.cpu_percent == b.cpu_percent &&
           a.memory_percent == b.memory_percent;
  }
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, load_sample& x) {
  return f(caf::meta::type_name("aisched.load_sample"), field("worker_id"), x.worker_id,
           field("at"), x.at, field("load"), x.load, field("max_load"), x.max_load,
           field("cpu_percent"), x.cpu_percent, field("memory_percent"), x.memory_percent,
           keep_unknown(x.unknown));
}

// -- queries -----------------------------------------------------------------

/// A page of tasks, ordered by id. `next_cursor` is empty on the last page.
/// Filters narrow the page; a page may come back short (even empty) with a
/// cursor when many tasks in a row did not match, so clients follow the cursor.
struct task_query {
  std::string tenant;   // "" = all tenants
  uint64_t after_id = 0;  // cursor: list ids greater than this
  uint32_t limit = 50;
  std::string name_contains;                   // "" = any name
  std::map<std::string, std::string> labels;   // every pair among the task's labels
  enum class paused_filter : uint8_t { any, paused, active } paused = paused_filter::any;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_query& x) {
  return f(caf::meta::type_name("aisched.task_query"), field("tenant"), x.tenant,
           field("after_id"), x.after_id, field("limit"), x.limit,
           field("name_contains"), x.name_contains, field("labels"), x.labels,
           field("paused"), x.paused);
}

struct task_page {
  std::vector<task> items;
  std::string next_cursor;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_page& x) {
  return f(caf::meta::type_name("aisched.task_page"), field("items"), x.items,
           field("next_cursor"), x.next_cursor);
}

/// Instances of one task (newest slot first), or in one state, or all (by id).
struct instance_query {
  std::string tenant;
  uint64_t task_id = 0;       // 0 = any task
  bool by_state = false;
  instance_state state = instance_state::pending;
  std::string cursor;         // opaque, from a previous page
  uint32_t limit = 50;
  unix_ms since = 0;          // slots at or after this instant (0: unbounded)
  unix_ms until = 0;          // slots before this instant (0: unbounded)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, instance_query& x) {
  return f(caf::meta::type_name("aisched.instance_query"), field("tenant"), x.tenant,
           field("task_id"), x.task_id, field("by_state"), x.by_state, field("state"), x.state,
           field("cursor"), x.cursor, field("limit"), x.limit, field("since"), x.since,
           field("until"), x.until);
}

struct instance_page {
  std::vector<instance> items;
  std::string next_cursor;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, instance_page& x) {
  return f(caf::meta::type_name("aisched.instance_page"), field("items"), x.items,
           field("next_cursor"), x.next_cursor);
}

}  // namespace aisched::proto
