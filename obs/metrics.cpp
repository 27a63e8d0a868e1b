// The registry and the families behind obs/metrics.hpp; see there.
#include "obs/metrics.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <map>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "proto/types.hpp"

namespace aisched::obs {

static_assert(proto::enum_names<proto::instance_state>::value.size() == instance_state_count,
              "obs::instance_state_count must match proto::instance_state");

void counter::inc(double v) const { c_->Increment(v); }
double counter::value() const { return c_->Value(); }

void gauge::set(double v) const { g_->Set(v); }
void gauge::inc(double v) const { g_->Increment(v); }
void gauge::dec(double v) const { g_->Decrement(v); }
double gauge::value() const { return g_->Value(); }

void histogram::observe(double v) const { h_->Observe(v); }

namespace {

using prometheus::Family;

/// Buckets in seconds. Trigger lateness: a healthy leader fires within a few
/// ms; seconds mean overload, minutes an outage caught up by misfire policy.
const std::vector<double> lateness_buckets{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                           1,     2.5,   5,    10,    30,   60,  300};
/// Raft append: one fsync, typically 0.1-10 ms on SSDs.
const std::vector<double> append_buckets{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                         0.025,  0.05,    0.1,    0.25,  0.5,    1};
/// Gateway requests: reads are sub-ms, writes wait for a raft commit.
const std::vector<double> request_buckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                          0.1,    0.25,  0.5,    1,     2.5,  5,     10};

/// The registry, its families and the pre-resolved handles.
struct state {
  prometheus::Registry registry;
  metrics m;
  Family<prometheus::Counter>* requests = nullptr;
  Family<prometheus::Counter>* ai_requests = nullptr;
  prometheus::Gauge* resident = nullptr;  // process_resident_memory_bytes, set at each scrape
  Family<prometheus::Histogram>* durations = nullptr;

  state() {
    auto& dispatch =
        counters("scheduler_dispatch_total",
                 "Runs in dispatch proposals, by outcome: ok (committed and sent to a "
                 "worker), refused (the run changed meanwhile), error (not committed)");
    m.dispatch_ok = counter(&dispatch.Add({{"result", "ok"}}));
    m.dispatch_refused = counter(&dispatch.Add({{"result", "refused"}}));
    m.dispatch_error = counter(&dispatch.Add({{"result", "error"}}));

    auto& slots = counters("scheduler_slots_total",
                           "Schedule slots decided by the leader's trigger, by outcome");
    m.slots_fired = counter(&slots.Add({{"outcome", "fired"}}));
    m.slots_skipped = counter(&slots.Add({{"outcome", "skipped"}}));
    m.slots_missed = counter(&slots.Add({{"outcome", "missed"}}));
    m.slots_buffered = counter(&slots.Add({{"outcome", "buffered"}}));
    m.slots_deduplicated = counter(&slots.Add({{"outcome", "deduplicated"}}));
    m.slots_deferred = counter(&slots.Add({{"outcome", "deferred"}}));

    m.trigger_lateness_seconds =
        histogram(&histograms("scheduler_trigger_lateness_seconds",
                              "Time from a slot's scheduled instant to the commit of its fire")
                       .Add({}, lateness_buckets));
    m.backpressure_state = gauge(
        &gauges("scheduler_backpressure_state", "Backpressure level: 0 green, 1 yellow, 2 red")
             .Add({}));
    m.dispatch_tokens = gauge(&gauges("scheduler_dispatch_tokens",
                                      "Tokens left in the dispatch rate limiter's bucket (updated "
                                      "on dispatch and each second)")
                                   .Add({}));
    m.runs_unplaceable = gauge(&gauges("scheduler_runs_unplaceable",
                                       "Pending runs no registered worker can take now (no worker "
                                       "of their tenant matches, or all matching ones are "
                                       "draining or offline); each run's error says why")
                                    .Add({}));

    auto& workers = gauges("scheduler_workers",
                           "Workers registered with this member's router, by status (the "
                           "leader's view; 0 on followers)");
    m.workers_online = gauge(&workers.Add({{"status", "online"}}));
    m.workers_offline = gauge(&workers.Add({{"status", "offline"}}));
    m.workers_draining = gauge(&workers.Add({{"status", "draining"}}));

    auto& instances = gauges("scheduler_instances",
                             "Instances in the replicated state, by state (exact across restarts)");
    for (size_t i = 0; i < instance_state_count; ++i)
      m.instances[i] = gauge(&instances.Add(
          {{"state", std::string(proto::enum_names<proto::instance_state>::value[i])}}));

    auto& mutations = counters("tasks_mutations_total", "Task changes applied, by action");
    m.task_created = counter(&mutations.Add({{"action", "create"}}));
    m.task_updated = counter(&mutations.Add({{"action", "update"}}));
    m.task_deleted = counter(&mutations.Add({{"action", "delete"}}));
    m.task_paused = counter(&mutations.Add({{"action", "pause"}}));
    m.task_resumed = counter(&mutations.Add({{"action", "resume"}}));
    m.runs_pruned = counter(&counters("scheduler_runs_pruned_total",
                                      "Finished runs removed by run-history retention")
                                 .Add({}));
    auto& lost = counters("scheduler_attempts_lost_total",
                          "Attempts the leader ended as worker_lost, by cause: restarted (the "
                          "worker came back without them), silent (dead after "
                          "--worker-dead-after), removed (DELETE of the worker)");
    m.attempts_lost_restarted = counter(&lost.Add({{"cause", "restarted"}}));
    m.attempts_lost_silent = counter(&lost.Add({{"cause", "silent"}}));
    m.attempts_lost_removed = counter(&lost.Add({{"cause", "removed"}}));

    auto& elections = counters("leader_election_total",
                               "Elections this member stood in, by result (won or lost)");
    m.elections_won = counter(&elections.Add({{"result", "won"}}));
    m.elections_lost = counter(&elections.Add({{"result", "lost"}}));
    m.raft_term = gauge(&gauges("raft_term", "Current raft term of this member").Add({}));
    m.raft_is_leader =
        gauge(&gauges("raft_is_leader", "1 while this member is the raft leader, else 0").Add({}));
    m.raft_commit_index =
        gauge(&gauges("raft_commit_index", "Highest log index known committed").Add({}));
    m.raft_applied_index = gauge(
        &gauges("raft_applied_index", "Highest log index applied to the state machine").Add({}));
    m.raft_append_latency_seconds = histogram(
        &histograms("raft_append_latency_seconds",
                    "Time to append a batch of entries to the raft log until it is durable")
             .Add({}, append_buckets));

    auto& write_errors = counters("storage_write_errors_total",
                                  "RocksDB writes and recovery probes that failed, by kind: "
                                  "no_space (ENOSPC), io_error (other I/O errors), other");
    m.storage_errors_no_space = counter(&write_errors.Add({{"kind", "no_space"}}));
    m.storage_errors_io = counter(&write_errors.Add({{"kind", "io_error"}}));
    m.storage_errors_other = counter(&write_errors.Add({{"kind", "other"}}));
    m.storage_healthy = gauge(&gauges("storage_healthy",
                                      "1 while this node's last RocksDB write succeeded, else 0")
                                   .Add({}));
    m.storage_healthy.set(1);

    auto& executions =
        counters("worker_executions_total", "Attempts this node's worker finished, by status");
    auto& other = executions.Add({{"status", "other"}});
    for (size_t i = 0; i < instance_state_count; ++i) {
      auto s = static_cast<proto::instance_state>(i);
      m.executions[i] = counter(
          proto::is_terminal(s) ? &executions.Add({{"status", std::string(name_of(s))}}) : &other);
    }
    m.worker_inflight =
        gauge(&gauges("worker_inflight", "Attempts running on this node's worker").Add({}));
    m.worker_outbox_errors = counter(
        &counters("worker_outbox_errors_total",
                  "Failed opens, writes and deletes of this node's worker outbox (the worker "
                  "takes no new runs after one)")
             .Add({}));
    m.worker_fenced_total = counter(
        &counters("worker_fenced_total",
                  "Execute requests this node's worker refused as stale: a leader of a newer "
                  "term had reached it")
             .Add({}));

    auto& alerts = counters("alerts_sent_total",
                            "Webhook POSTs of run_failed alerts, by result: ok, retried (another "
                            "attempt follows), failed (attempts exhausted)");
    m.alerts_ok = counter(&alerts.Add({{"result", "ok"}}));
    m.alerts_retried = counter(&alerts.Add({{"result", "retried"}}));
    m.alerts_failed = counter(&alerts.Add({{"result", "failed"}}));
    m.backups_total = counter(
        &counters("backups_total",
                  "Scheduled backup files this node wrote, read back and renamed into place")
             .Add({}));
    m.backup_failures_total = counter(
        &counters("backup_failures_total",
                  "Scheduled backups that failed on this node (export, write, sync, read-back, "
                  "rename or rotation)")
             .Add({}));
    m.backup_last_success = gauge(
        &gauges("backup_last_success_timestamp_seconds",
                "Unix time of the last scheduled backup this node wrote (0: none since start)")
             .Add({}));
    auto& tokens = counters("ai_tokens_total", "Tokens the LLM provider counted, by type");
    m.ai_prompt_tokens = counter(&tokens.Add({{"type", "prompt"}}));
    m.ai_completion_tokens = counter(&tokens.Add({{"type", "completion"}}));
    ai_requests = &counters("ai_requests_total", "LLM requests, by feature and result");
    // Every documented series exists from the start (at 0): a family without
    // children is not exported at all, so a node that never asked a model would
    // show no ai_requests_total, and rate() or absent() alerts would misread it.
    for (const char* feature : {"chat", "analysis", "advice", "trends", "task_draft", "duration"})
      for (const char* result : {"ok", "fallback", "invalid", "error", "rate_limited"})
        ai_requests->Add({{"feature", feature}, {"result", result}});

    requests = &counters("gateway_requests_total",
                         "HTTP requests answered, by route pattern and status code");
    durations = &histograms("gateway_request_duration_seconds",
                            "Time to answer an HTTP request, by route pattern");

    resident = &gauges("process_resident_memory_bytes",
                       "Resident memory of this process in bytes, read at each scrape")
                    .Add({});

    gauges("aisched_build_info", "Build information; the value is always 1")
        .Add({{"version", AISCHED_VERSION}})
        .Set(1);
  }

  Family<prometheus::Counter>& counters(const char* name, const char* help) {
    return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
  }
  Family<prometheus::Gauge>& gauges(const char* name, const char* help) {
    return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
  }
  Family<prometheus::Histogram>& histograms(const char* name, const char* help) {
    return prometheus::BuildHistogram().Name(name).Help(help).Register(registry);
  }
};

state& process_state() {
  // Leaked on purpose: detached actors and run threads may still touch their
  // handles while static destructors run at exit.
  static state* s = new state;
  return *s;
}

}  // namespace

metrics& get() { return process_state().m; }

namespace {

/// This process's resident set in bytes (/proc/self/statm), 0 if unreadable.
double resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

}  // namespace

std::string serialize() {
  auto& st = process_state();
  st.resident->Set(resident_bytes());
  return prometheus::TextSerializer().Serialize(st.registry.Collect());
}

counter ai_requests(const std::string& feature, const std::string& result) {
  return counter(&process_state().ai_requests->Add({{"feature", feature}, {"result", result}}));
}

// -- gateway routes ----------------------------------------------------------

// Series are created on a route's first request, not up front: a histogram
// per route that was never called would add ~17 zero lines per route to every
// scrape. Family::Add returns the existing series for a label set, so threads
// racing on a first use end up with the same one.
struct http_route::impl {
  std::string pattern;
  std::atomic<prometheus::Histogram*> duration{nullptr};
  // Counter per status code; codes >= 600 share slot 0 ("other").
  std::array<std::atomic<prometheus::Counter*>, 600> by_code{};
};

http_route::http_route(const std::string& pattern) : impl_(new impl) { impl_->pattern = pattern; }

http_route::~http_route() = default;
http_route::http_route(http_route&&) noexcept = default;
http_route& http_route::operator=(http_route&&) noexcept = default;

void http_route::record(unsigned status, double seconds) const {
  auto slot = status < impl_->by_code.size() ? status : 0;
  auto* c = impl_->by_code[slot].load(std::memory_order_acquire);
  if (!c) {
    auto code = slot == 0 ? std::string("other") : std::to_string(status);
    c = &process_state().requests->Add({{"route", impl_->pattern}, {"code", code}});
    impl_->by_code[slot].store(c, std::memory_order_release);
  }
  auto* h = impl_->duration.load(std::memory_order_acquire);
  if (!h) {
    h = &process_state().durations->Add({{"route", impl_->pattern}}, request_buckets);
    impl_->duration.store(h, std::memory_order_release);
  }
  c->Increment();
  h->Observe(seconds);
}

}  // namespace aisched::obs
