// The process's Prometheus metrics: one registry per process holding every
// family aisched exports (issue #7 part 1, DESIGN §6), with each labelled
// series resolved once at startup so instrumenting a hot path is one atomic
// update through a handle, never a label lookup. Actors, storage and the
// gateway write through these handles; the gateway's /metrics route reads
// serialize(). Deliberately free of prometheus-cpp headers: only
// obs/metrics.cpp sees them, so the actors that include this stay cheap to
// compile and do not depend on prometheus-cpp at all.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
}  // namespace prometheus

namespace aisched::obs {

/// A handle on one counter series. Thread-safe, trivially copyable; the series
/// lives as long as the process.
class counter {
 public:
  counter() = default;
  explicit counter(prometheus::Counter* c) : c_(c) {}
  void inc(double v = 1) const;  ///< `v` must be >= 0
  double value() const;

 private:
  prometheus::Counter* c_ = nullptr;
};

/// A handle on one gauge series. Thread-safe, trivially copyable.
class gauge {
 public:
  gauge() = default;
  explicit gauge(prometheus::Gauge* g) : g_(g) {}
  void set(double v) const;
  void inc(double v = 1) const;
  void dec(double v = 1) const;
  double value() const;

 private:
  prometheus::Gauge* g_ = nullptr;
};

/// A handle on one histogram series. Thread-safe, trivially copyable.
class histogram {
 public:
  histogram() = default;
  explicit histogram(prometheus::Histogram* h) : h_(h) {}
  void observe(double v) const;

 private:
  prometheus::Histogram* h_ = nullptr;
};

/// Number of proto::instance_state values; arrays below are indexed by the
/// state's underlying value (metrics.cpp checks this against proto/types.hpp).
constexpr size_t instance_state_count = 8;

/// Every series aisched exports, pre-resolved. Counters on one node count what
/// happened on that node; series fed by the state machine (instances, task
/// mutations) are maintained by every replica, so aggregate them across a
/// cluster with max(), not sum().
struct metrics {
  // -- scheduler (leader) ----------------------------------------------------
  /// scheduler_dispatch_total{result}: runs in a committed dispatch batch that
  /// went to a worker (ok), that the state machine refused because they had
  /// changed meanwhile (refused), or whose batch did not commit (error).
  counter dispatch_ok, dispatch_refused, dispatch_error;
  /// scheduler_slots_total{outcome}.
  counter slots_fired, slots_skipped, slots_missed, slots_buffered, slots_deduplicated,
      slots_deferred;
  histogram trigger_lateness_seconds;  ///< scheduler_trigger_lateness_seconds
  gauge backpressure_state;            ///< scheduler_backpressure_state: 0 green, 1 yellow, 2 red
  /// scheduler_workers{status}: the leader's registered workers by status
  /// (online, offline, draining); 0 on followers.
  gauge workers_online, workers_offline, workers_draining;
  gauge dispatch_tokens;               ///< scheduler_dispatch_tokens
  gauge runs_unplaceable;              ///< scheduler_runs_unplaceable
  /// scheduler_instances{state}, indexed by proto::instance_state.
  std::array<gauge, instance_state_count> instances;
  /// tasks_mutations_total{action}.
  counter task_created, task_updated, task_deleted, task_paused, task_resumed;
  counter runs_pruned;  ///< scheduler_runs_pruned_total: finished runs retention removed
  /// scheduler_attempts_lost_total{cause}: attempts the leader ended as
  /// worker_lost because their worker restarted without them, fell silent
  /// for --worker-dead-after, or was removed.
  counter attempts_lost_restarted, attempts_lost_silent, attempts_lost_removed;

  // -- raft --------------------------------------------------------------------
  counter elections_won, elections_lost;  ///< leader_election_total{result}
  gauge raft_term, raft_commit_index, raft_applied_index;
  gauge raft_is_leader;  ///< 1 while this member is the raft leader
  histogram raft_append_latency_seconds;  ///< append + fsync of a batch of entries

  // -- storage -----------------------------------------------------------------
  /// storage_write_errors_total{kind}: failed RocksDB writes (and recovery
  /// probes) by kind: no_space (ENOSPC), io_error (other I/O errors), other.
  counter storage_errors_no_space, storage_errors_io, storage_errors_other;
  gauge storage_healthy;  ///< 1 while the last RocksDB write succeeded, else 0

  // -- worker ------------------------------------------------------------------
  /// worker_executions_total{status}, indexed by proto::instance_state (the
  /// final states have their own series; any other shares status="other").
  std::array<counter, instance_state_count> executions;
  gauge worker_inflight;
  /// worker_outbox_errors_total: the worker's outbox failed to open, write or
  /// delete; from the first one on, the worker takes no new runs.
  counter worker_outbox_errors;
  /// worker_fenced_total: execute requests this node's worker refused because
  /// a leader of a newer term had reached it (a deposed leader's late request).
  counter worker_fenced_total;

  // -- alerts (leader) ---------------------------------------------------------
  /// alerts_sent_total{result}: webhook POSTs of run_failed alerts: ok (2xx),
  /// retried (failed, another attempt follows), failed (gave up).
  counter alerts_ok, alerts_retried, alerts_failed;

  // -- scheduled backups (leader; actors/backup) -------------------------------
  counter backups_total;          ///< backups_total: backup files written and verified
  counter backup_failures_total;  ///< backup_failures_total: scheduled backups that failed
  /// backup_last_success_timestamp_seconds: Unix time of the last backup this
  /// node wrote (0: none since it started).
  gauge backup_last_success;
  // -- ai ----------------------------------------------------------------------
  /// ai_tokens_total{type}: tokens the LLM provider reported as used.
  counter ai_prompt_tokens, ai_completion_tokens;
};

/// The process's metrics, created on first use (thread-safe). Never destroyed,
/// so threads still running at exit can keep using their handles.
metrics& get();

/// Everything registered, in the Prometheus text exposition format 0.0.4.
std::string serialize();

/// ai_requests_total{feature,result}: one LLM request of `feature` ("chat",
/// "analysis", ...) that ended with `result`: "ok" or "fallback" (answered by
/// the primary or the fallback model, and used), "invalid" (answered, but the
/// feature's check rejected the answer), "error", "rate_limited". Thread-safe;
/// looks the series up on each call (LLM requests are seconds apart, not a hot
/// path).
counter ai_requests(const std::string& feature, const std::string& result);

/// The gateway's series of one route pattern ("/api/v1/tasks/{id}"), for
/// gateway_requests_total{route,code} and gateway_request_duration_seconds{route}.
/// Create one per pattern at startup; record() is thread-safe and looks a
/// label set up only the first time it sees a status code (series appear on
/// a route's first request).
class http_route {
 public:
  explicit http_route(const std::string& pattern);
  ~http_route();
  http_route(http_route&&) noexcept;
  http_route& operator=(http_route&&) noexcept;

  void record(unsigned status, double seconds) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace aisched::obs
