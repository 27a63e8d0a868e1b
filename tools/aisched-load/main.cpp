// aisched-load: load scenarios against a running node or cluster, on loopback
// only, every loop bounded in count and time. Scenarios:
//   burst       N one-shot noop tasks due at the same instant: fire lateness
//               (created_at - slot; negative when fired ahead, --fire-ahead-ms) and
//               start lateness (started_at - slot)
//               p50/p90/p99/max, time until all fired, all started and all done
//   steady      M `@every 1s` noop tasks for D seconds: expected vs observed runs,
//               duplicates, misses, fire and start lateness percentiles, runs/s
//   throughput  for --duration seconds (and at most --n runs), keeps --backlog
//               one-shot noop tasks due and not yet done: runs/s fired,
//               dispatched and committed, from the node's /metrics, and whether
//               --backlog and --due-ms capped that rate (see stats.hpp)
//   idle        N daily noop tasks, each at its minute of the day: the node's
//               resident memory per task, then the fires of those due in the
//               next whole minutes: expected vs observed, duplicates, lateness
//   api         concurrent REST reads: requests/s and latency percentiles
// Tasks it creates are deleted at the end (burst and throughput: unless
// --keep-tasks; idle never: deleting a million would scan them all for each).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "common/clock.hpp"
#include "proto/time.hpp"
#include "tools/aisched-load/stats.hpp"
#include "tools/common/http_client.hpp"

namespace json = boost::json;
using aisched::format_rfc3339;
using aisched::parse_rfc3339;
using aisched::steady_now;
using aisched::system_now_ms;
using aisched::unix_ms;
using aisched::tools::http_client;
using aisched::load::percentiles;
using aisched::load::run_times;
using aisched::load::summarize;

namespace {

struct options {
  std::string server = "http://127.0.0.1:8080";
  size_t n = 1000;
  double duration_s = 10;
  unsigned concurrency = 8;
  double lead_s = 5;
  bool json_out = false;
  bool per_minute = false;  // steady: each task fires once a minute, at second (i % 60)
  bool keep_tasks = false;  // burst, throughput: leave the tasks (for a node thrown away)
  size_t backlog = 200;     // throughput: due runs kept waiting
  double due_ms = 500;      // throughput: each task is due this long after its create is sent
  size_t bulk = 0;          // throughput: runs per bulk enqueue (POST /tasks/{id}/runs); 0: creates
};

/// One bulk enqueue of `n` empty payloads on task `id`; the runs it made (0 on failure).
size_t enqueue_bulk(http_client& c, uint64_t id, size_t n) {
  std::string body = R"({"payloads":[)";
  for (size_t k = 0; k < n; ++k) body += k ? ",{}" : "{}";
  body += "]}";
  for (int tries = 0; tries < 100; ++tries) {
    auto r = c.call("POST", "/api/v1/tasks/" + std::to_string(id) + "/runs", body);
    if (r.status == 202) return n;
    if (r.status != 409) {  // 409: a batch of this task in the same millisecond; again
      std::fprintf(stderr, "\nenqueue failed: %u %s\n", r.status, r.body.c_str());
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return 0;
}

/// Runs fn(i, client) for i in [0, n) on `threads` threads with one client each.
template <class Fn>
void parallel(const options& o, size_t n, Fn fn) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < std::max(1u, o.concurrency); ++t)
    ts.emplace_back([&] {
      http_client c(o.server);
      for (size_t i; (i = next++) < n;) fn(i, c);
    });
  for (auto& t : ts) t.join();
}

void progress(const char* what, size_t done, size_t total) {
  if (total == 0) return;
  int width = 40, filled = static_cast<int>(width * done / total);
  std::fprintf(stderr, "\r%-10s [%s%s] %zu/%zu", what, std::string(filled, '#').c_str(),
               std::string(width - filled, '.').c_str(), done, total);
  if (done == total) std::fprintf(stderr, "\n");
}

std::vector<uint64_t> create_tasks(const options& o, const std::vector<std::string>& docs) {
  std::vector<uint64_t> ids(docs.size(), 0);
  std::atomic<size_t> done{0};
  parallel(o, docs.size(), [&](size_t i, http_client& c) {
    auto r = c.call("POST", "/api/v1/tasks", docs[i]);
    if (r.status == 201)
      ids[i] = json::parse(r.body).at("id").to_number<uint64_t>();
    else
      std::fprintf(stderr, "\ncreate failed: %u %s\n", r.status, r.body.c_str());
    auto d = ++done;
    if (d % 200 == 0 || d == docs.size()) progress("create", d, docs.size());
  });
  ids.erase(std::remove(ids.begin(), ids.end(), 0), ids.end());
  return ids;
}

void delete_tasks(const options& o, const std::vector<uint64_t>& ids) {
  parallel(o, ids.size(), [&](size_t i, http_client& c) {
    c.call("DELETE", "/api/v1/tasks/" + std::to_string(ids[i]));
  });
}

struct run_view {
  uint64_t task_id;
  run_times times;
  std::string state, id;
};

std::vector<run_times> times_of(const std::vector<run_view>& runs) {
  std::vector<run_times> out;
  out.reserve(runs.size());
  for (auto& r : runs) out.push_back(r.times);
  return out;
}

/// Every instance of `tasks` (paging through all instances; bounded pages).
std::vector<run_view> fetch_runs(const options& o, const std::set<uint64_t>& tasks,
                                 const std::string& state_filter = "") {
  http_client c(o.server);
  std::vector<run_view> out;
  std::string cursor;
  for (int page = 0; page < 100'000; ++page) {
    auto target = "/api/v1/instances?limit=1000&cursor=" + cursor +
                  (state_filter.empty() ? "" : "&state=" + state_filter);
    auto r = c.call("GET", target);
    if (r.status != 200) break;
    auto v = json::parse(r.body);
    for (auto& x : v.at("items").as_array()) {
      auto tid = x.at("task_id").to_number<uint64_t>();
      if (!tasks.count(tid)) continue;
      auto t = [&](const char* k) -> unix_ms {
        auto& f = x.at(k);
        return f.is_string() ? parse_rfc3339(f.as_string()).value_or(0) : 0;
      };
      out.push_back({tid,
                     {t("slot"), t("created_at"), t("started_at"), t("finished_at")},
                     std::string(x.at("state").as_string()),
                     std::string(x.at("id").as_string())});
    }
    cursor = std::string(v.at("next_cursor").as_string());
    if (cursor.empty()) break;
  }
  return out;
}

json::object to_json(const percentiles& p) {
  return {{"min_ms", p.min}, {"p50_ms", p.p50}, {"p90_ms", p.p90}, {"p99_ms", p.p99}, {"max_ms", p.max}, {"n", p.n}};
}

std::string fixed1(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

void report(const options& o, const json::object& r) {
  if (o.json_out) {
    std::cout << json::serialize(r) << "\n";
    return;
  }
  for (auto& kv : r) {
    std::cout << kv.key() << ": ";
    if (kv.value().is_double()) {
      std::cout << fixed1(kv.value().as_double()) << "\n";
    } else if (kv.value().is_string()) {
      std::cout << kv.value().as_string().c_str() << "\n";
    } else if (kv.value().is_object()) {  // percentiles: p50_ms 12.0  p90_ms ...
      for (auto& f : kv.value().as_object())
        std::cout << f.key() << " "
                  << (f.value().is_double() ? fixed1(f.value().as_double())
                                            : json::serialize(f.value()))
                  << "  ";
      std::cout << "\n";
    } else {
      std::cout << json::serialize(kv.value()) << "\n";
    }
  }
}

/// The counters throughput reads from a node's /metrics: what its leader
/// fired and dispatched, and the runs committed as successful. Run-history
/// retention removes finished runs as fast as a bulk task makes them (1 000 kept
/// per task by default), so the removed ones count too: the load's runs all
/// succeed, and a run is removed only once finished.
struct run_counters {
  double fired = 0, dispatched = 0, succeeded = 0;
  double pending = 0;  // runs the node holds fired and not placed on a worker yet
  bool ok = false;
};

/// The value of the sample `series` (name plus labels, as written) in `text`.
std::optional<double> sample(const std::string& text, const std::string& series) {
  for (size_t at = text.find(series); at != std::string::npos; at = text.find(series, at + 1)) {
    if (at != 0 && text[at - 1] != '\n') continue;
    auto end = at + series.size();
    if (end >= text.size() || text[end] != ' ') continue;
    return std::strtod(text.c_str() + end + 1, nullptr);
  }
  return std::nullopt;
}

run_counters scrape(http_client& c) {
  run_counters out;
  auto r = c.call("GET", "/metrics");
  if (r.status != 200) return out;
  auto f = sample(r.body, R"(scheduler_slots_total{outcome="fired"})");
  auto d = sample(r.body, R"(scheduler_dispatch_total{result="ok"})");
  auto s = sample(r.body, R"(scheduler_instances{state="success"})");
  auto pruned = sample(r.body, "scheduler_runs_pruned_total");
  out.ok = f && d && s && pruned;
  out.fired = f.value_or(0);
  out.dispatched = d.value_or(0);
  out.succeeded = s.value_or(0) + pruned.value_or(0);
  out.pending = sample(r.body, R"(scheduler_instances{state="pending"})").value_or(0);
  return out;
}

int burst(const options& o) {
  auto due = (system_now_ms() / 1000 + static_cast<unix_ms>(o.lead_s) + 1) * 1000;
  std::vector<std::string> docs;
  for (size_t i = 0; i < o.n; ++i)
    docs.push_back(R"({"name":"load-burst-)" + std::to_string(i) + R"(","kind":"noop","at":")" +
                   format_rfc3339(due) + R"("})");
  auto ids = create_tasks(o, docs);
  if (system_now_ms() >= due)
    std::fprintf(stderr, "warning: creating took longer than --lead; tasks fired late\n");
  std::set<uint64_t> set(ids.begin(), ids.end());
  // Wait (bounded) until every run succeeded. The node's success gauge is
  // cheap to poll; listing the runs is not (it would load the node being
  // measured), so they are listed only once the gauge says they may be done.
  http_client probe(o.server);
  auto before = scrape(probe);
  std::vector<run_view> runs;
  auto deadline = std::max(system_now_ms(), due) + 120'000;
  while (system_now_ms() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(before.ok ? 50 : 500));
    if (system_now_ms() < due) continue;
    if (before.ok) {
      auto now = scrape(probe);
      progress("done", static_cast<size_t>(std::max(0.0, now.succeeded - before.succeeded)),
               ids.size());
      if (now.ok && now.succeeded - before.succeeded < static_cast<double>(ids.size())) continue;
    }
    runs = fetch_runs(o, set, "success");
    progress("done", runs.size(), ids.size());
    if (runs.size() >= ids.size()) break;
  }
  runs = fetch_runs(o, set);
  auto times = times_of(runs);
  unix_ms last_fired = 0, last_started = 0, last_done = 0;
  for (auto& r : times) {
    last_fired = std::max(last_fired, r.created);
    last_started = std::max(last_started, r.started);
    last_done = std::max(last_done, r.finished);
  }
  json::object out{{"scenario", "burst"},
                   {"tasks", ids.size()},
                   {"runs", runs.size()},
                   {"fire_lateness", to_json(summarize(aisched::load::fire_lateness(times)))},
                   {"start_lateness", to_json(summarize(aisched::load::start_lateness(times)))},
                   {"all_fired_after_ms", last_fired ? last_fired - due : -1},
                   {"all_started_after_ms", last_started ? last_started - due : -1},
                   {"all_done_after_ms", last_done ? last_done - due : -1}};
  if (!o.keep_tasks) delete_tasks(o, ids);
  report(o, out);
  return runs.size() == ids.size() ? 0 : 1;
}

/// The runs of a window [from, to) of slots: each (task, slot) seen, how many
/// of them more than once, and the times of every run in it.
struct window_runs {
  size_t observed = 0, duplicates = 0, succeeded = 0;
  std::vector<run_times> times;
};

window_runs in_window(const std::vector<run_view>& runs, unix_ms from, unix_ms to) {
  window_runs w;
  std::map<std::pair<uint64_t, unix_ms>, int> seen;
  for (auto& r : runs) {
    if (r.times.slot < from || r.times.slot >= to) continue;
    seen[{r.task_id, r.times.slot}] += 1;
    w.times.push_back(r.times);
    if (r.state == "success") ++w.succeeded;
  }
  w.observed = seen.size();
  for (auto& [k, n] : seen) w.duplicates += n - 1;
  return w;
}

int steady(const options& o) {
  std::vector<std::string> docs;
  // Per-minute mode spreads N tasks over the 60 seconds of a minute, so 100 000
  // tasks make ~1 700 fires a second rather than 100 000 at once.
  auto schedule_of = [&](size_t i) {
    return o.per_minute ? std::to_string(i % 60) + " * * * * *" : std::string("@every 1s");
  };
  for (size_t i = 0; i < o.n; ++i)
    docs.push_back(R"({"name":"load-steady-)" + std::to_string(i) +
                   R"(","kind":"noop","schedule":")" + schedule_of(i) + R"(","overlap":"allow"})");
  auto ids = create_tasks(o, docs);
  std::set<uint64_t> set(ids.begin(), ids.end());
  auto start = (system_now_ms() / 1000 + 1) * 1000;  // first whole second every task is armed for
  auto stop = start + static_cast<unix_ms>(o.duration_s * 1000);
  while (system_now_ms() < stop + 1000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    auto done = std::clamp<unix_ms>(system_now_ms() - start, 0, stop - start + 1000);
    progress("running", static_cast<size_t>(done), static_cast<size_t>(stop - start + 1000));
  }
  delete_tasks(o, ids);                                  // stops further fires
  std::this_thread::sleep_for(std::chrono::seconds(2));  // let the last runs finish
  auto w = in_window(fetch_runs(o, set), start, stop);
  size_t expected = 0;
  if (!o.per_minute) {
    expected = ids.size() * static_cast<size_t>((stop - start) / 1000);
  } else {
    // Task i (creation order) fires when the second of the minute is i % 60.
    std::vector<size_t> per_second(60, 0);
    for (unix_ms t = start; t < stop; t += 1000) per_second[(t / 1000) % 60] += 1;
    for (size_t i = 0; i < ids.size(); ++i) expected += per_second[i % 60];
  }
  json::object out{{"scenario", "steady"},
                   {"tasks", ids.size()},
                   {"window_s", (stop - start) / 1000},
                   {"expected_runs", expected},
                   {"observed_runs", w.observed},
                   {"duplicates", w.duplicates},
                   {"missed", expected > w.observed ? expected - w.observed : 0},
                   {"succeeded", w.succeeded},
                   {"runs_per_s", static_cast<double>(w.succeeded) * 1000.0 / (stop - start)},
                   {"schedule", o.per_minute ? "per minute" : "@every 1s"},
                   {"fire_lateness", to_json(summarize(aisched::load::fire_lateness(w.times)))},
                   {"start_lateness",
                    to_json(summarize(aisched::load::start_lateness(w.times)))}};
  report(o, out);
  return w.duplicates == 0 && w.observed == expected ? 0 : 1;
}

/// The node's resident memory from its /metrics (0 when unreadable).
double node_rss(http_client& c) {
  auto r = c.call("GET", "/metrics");
  if (r.status != 200) return 0;
  return sample(r.body, "process_resident_memory_bytes").value_or(0);
}

/// N idle tasks, each daily at its minute of the day (idle_minute_of_day):
/// the node's memory per task once they are created, and the fires of those
/// that come due in the window that follows, once each and on time. The tasks
/// stay (deleting a million takes a scan of all for each): use a node thrown away.
int idle(const options& o) {
  http_client probe(o.server);
  auto rss_before = node_rss(probe);
  std::vector<std::string> docs;
  docs.reserve(o.n);
  for (size_t i = 0; i < o.n; ++i) {
    auto m = aisched::load::idle_minute_of_day(i);
    docs.push_back(R"({"name":"load-idle-)" + std::to_string(i) +
                   R"(","kind":"noop","schedule":"0 )" + std::to_string(m % 60) + " " +
                   std::to_string(m / 60) + R"( * * *"})");
  }
  auto t0 = system_now_ms();
  auto ids = create_tasks(o, docs);
  auto create_s = static_cast<double>(system_now_ms() - t0) / 1000.0;
  docs = {};
  std::this_thread::sleep_for(std::chrono::seconds(15));  // let the node settle
  auto rss_after = node_rss(probe);
  std::set<uint64_t> set(ids.begin(), ids.end());
  const unix_ms minute = 60'000;
  auto start = (system_now_ms() / minute + 1) * minute;
  auto minutes = std::max<unix_ms>(1, static_cast<unix_ms>(std::ceil(o.duration_s / 60.0)));
  auto stop = start + minutes * minute;
  while (system_now_ms() < stop + 5'000) {  // the last minute's runs finish
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    auto done = std::clamp<unix_ms>(system_now_ms() - start, 0, stop - start);
    progress("waiting", static_cast<size_t>(done), static_cast<size_t>(stop - start));
  }
  std::fprintf(stderr, "\n");
  auto w = in_window(fetch_runs(o, set), start, stop);
  auto expected = ids.size() == o.n ? aisched::load::idle_due(o.n, start, stop) : 0;
  auto per_task = ids.empty() ? 0.0 : (rss_after - rss_before) / static_cast<double>(ids.size());
  json::object out{{"scenario", "idle"},
                   {"tasks", ids.size()},
                   {"create_s", create_s},
                   {"rss_before_bytes", rss_before},
                   {"rss_after_bytes", rss_after},
                   {"rss_bytes_per_task", per_task},
                   {"window_s", (stop - start) / 1000},
                   {"expected_runs", expected},
                   {"observed_runs", w.observed},
                   {"duplicates", w.duplicates},
                   {"missed", expected > w.observed ? expected - w.observed : 0},
                   {"fire_lateness", to_json(summarize(aisched::load::fire_lateness(w.times)))},
                   {"start_lateness",
                    to_json(summarize(aisched::load::start_lateness(w.times)))}};
  report(o, out);
  return ids.size() == o.n && w.duplicates == 0 && w.observed == expected ? 0 : 1;
}

int throughput(const options& o) {
  http_client probe(o.server);
  auto start = scrape(probe);
  if (!start.ok) {
    std::fprintf(stderr, "throughput: cannot read the scheduler counters from %s/metrics\n",
                 o.server.c_str());
    return 1;
  }
  std::mutex mtx;
  std::vector<uint64_t> ids;
  std::atomic<size_t> created{0};
  std::atomic<size_t> done{0};  // succeeded since start (from the metrics)
  std::atomic<bool> stop{false};
  std::vector<double> enqueue_ms;  // --bulk: each request's round trip
  std::vector<std::pair<double, double>> enqueue_spans;  // and when, in s since t0
  auto t0 = steady_now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(steady_now() - t0).count();
  };
  // Creators keep `backlog` runs created but not done, each due --due-ms after its create;
  // with --bulk, each creator enqueues batches of runs of its own manual noop task instead.
  std::vector<std::thread> creators;
  for (unsigned t = 0; t < std::max(1u, o.concurrency); ++t)
    creators.emplace_back([&, t] {
      http_client c(o.server);
      if (o.bulk > 0) {
        auto r = c.call("POST", "/api/v1/tasks",
                        R"({"name":"load-bulk-)" + std::to_string(t) + R"(","kind":"noop"})");
        if (r.status != 201) {
          std::fprintf(stderr, "\ncreate failed: %u %s\n", r.status, r.body.c_str());
          return;
        }
        auto id = json::parse(r.body).at("id").to_number<uint64_t>();
        {
          std::lock_guard<std::mutex> g(mtx);
          ids.push_back(id);
        }
        while (!stop) {
          auto c0 = created.load();
          if (c0 - std::min(c0, done.load()) + o.bulk > o.backlog || c0 >= o.n) {
            if (c0 >= o.n) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            continue;
          }
          created += o.bulk;
          auto sent = elapsed();
          auto made = enqueue_bulk(c, id, o.bulk);
          auto answered = elapsed();
          {
            std::lock_guard<std::mutex> g(mtx);
            enqueue_ms.push_back((answered - sent) * 1000);
            enqueue_spans.emplace_back(sent, answered);
          }
          if (made == 0) {
            created -= o.bulk;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
        }
        return;
      }
      for (size_t i = t; !stop;) {
        if (created.load() - std::min(created.load(), done.load()) >= o.backlog) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          continue;
        }
        if (created++ >= o.n) {
          created--;
          break;
        }
        auto doc = R"({"name":"load-throughput-)" + std::to_string(i) +
                   R"(","kind":"noop","at":")" +
                   format_rfc3339(system_now_ms() + static_cast<unix_ms>(o.due_ms)) + R"("})";
        auto r = c.call("POST", "/api/v1/tasks", doc);
        if (r.status != 201) {
          created--;
          std::fprintf(stderr, "\ncreate failed: %u %s\n", r.status, r.body.c_str());
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          continue;
        }
        std::lock_guard<std::mutex> g(mtx);
        ids.push_back(json::parse(r.body).at("id").to_number<uint64_t>());
        i += o.concurrency;
      }
    });
  // The window ends after --duration or once --n runs are done, whichever is first.
  // Runs in flight (created, not yet seen done) are sampled every 10 ms between
  // the 250 ms scrapes: their mean, by Little's law, tells what capped the rate.
  run_counters at_end = start;
  auto total_ms = static_cast<size_t>(o.duration_s * 1000);
  double in_flight_sum = 0, queued_sum = 0;
  size_t in_flight_samples = 0, queued_samples = 0;
  while (elapsed() < o.duration_s) {
    for (int i = 0; i < 25 && elapsed() < o.duration_s; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      auto c = created.load(), d = done.load();
      in_flight_sum += static_cast<double>(c - std::min(c, d));
      ++in_flight_samples;
    }
    auto now = scrape(probe);
    if (!now.ok) continue;
    at_end = now;
    queued_sum += now.pending;
    ++queued_samples;
    done = static_cast<size_t>(std::max(0.0, now.succeeded - start.succeeded));
    progress("running", std::min(total_ms, static_cast<size_t>(elapsed() * 1000)), total_ms);
    if (done.load() >= o.n) break;
  }
  auto window = elapsed();
  stop = true;
  for (auto& t : creators) t.join();
  std::fprintf(stderr, "\n");
  // Let what was created finish (bounded), so the tasks can go.
  auto drain_deadline = system_now_ms() + 60'000;
  auto drained = at_end;
  while (system_now_ms() < drain_deadline) {
    drained = scrape(probe);
    if (drained.ok && drained.succeeded - start.succeeded >= static_cast<double>(created.load()))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  if (!o.keep_tasks) delete_tasks(o, ids);
  auto rate = [&](double a, double b) { return (b - a) / window; };
  auto committed_per_s = rate(start.succeeded, at_end.succeeded);
  auto mean_in_flight = in_flight_samples ? in_flight_sum / in_flight_samples : 0.0;
  // Bulk runs are due at once: only the backlog and the pipeline bound them.
  auto due_ms = o.bulk > 0 ? 0.0 : o.due_ms;
  auto mean_queued = queued_samples ? queued_sum / queued_samples : 0.0;
  auto cap = aisched::load::throughput_cap(o.backlog, due_ms, mean_in_flight, mean_queued,
                                           committed_per_s);
  // With --bulk, each producer waits for its request's answer (the runs are
  // durable then) before sending the next: busy all the time, they may set the
  // rate (or the node's answers slow down as it fills: more producers tell which).
  double producers_busy = 0;  // their waits within the window
  for (auto [sent, answered] : enqueue_spans)
    producers_busy += std::max(0.0, std::min(answered, window) - sent);
  producers_busy /= window * std::max(1u, o.concurrency);
  json::object out{
      {"scenario", "throughput"},
      {"window_s", window},
      {"backlog", o.backlog},
      {"tasks_created", created.load()},
      {"fired", at_end.fired - start.fired},
      {"dispatched", at_end.dispatched - start.dispatched},
      {"committed", at_end.succeeded - start.succeeded},
      {"fired_per_s", rate(start.fired, at_end.fired)},
      {"dispatched_per_s", rate(start.dispatched, at_end.dispatched)},
      {"committed_per_s", committed_per_s},
      {"due_ms", due_ms},
      {"bulk", o.bulk},
      {"mean_in_flight", mean_in_flight},
      {"mean_queued_at_node", mean_queued},
      {"pipeline_ms", cap.pipeline_ms},
      {"self_cap_per_s", cap.cap_per_s},
      {"node_bound", cap.node_bound},
      {"self_capped", cap.capped},
      {"enqueue_ms", to_json(summarize(enqueue_ms))},
      {"producers_busy", producers_busy},
      {"all_done", drained.succeeded - start.succeeded >= static_cast<double>(created.load())}};
  report(o, out);
  auto& notes = o.json_out ? std::cerr : std::cout;  // beside the JSON, so stdout stays one object
  if (cap.capped) notes << aisched::load::cap_warning(o.backlog, due_ms, cap, committed_per_s) << "\n";
  if (o.bulk > 0 && producers_busy >= 0.9)
    notes << "the producers were always waiting: each of the " << std::max(1u, o.concurrency)
          << " waited for its enqueue's answer " << static_cast<int>(producers_busy * 100)
          << "% of the window (median " << summarize(enqueue_ms).p50
          << " ms a request); if more of them (--concurrency) raise the rate, they set it, "
             "not the node\n";
  if (cap.node_bound)
    notes << "the node set the rate: " << static_cast<uint64_t>(mean_queued) << " of the "
          << static_cast<uint64_t>(mean_in_flight)
          << " runs in flight waited at the node for a worker slot on average\n";
  return out.at("all_done").as_bool() ? 0 : 1;
}

int api(const options& o) {
  {
    http_client c(o.server);
    c.call("POST", "/api/v1/tasks", R"({"name":"load-api","kind":"noop"})");
  }
  std::mutex mtx;
  std::vector<double> lat;
  std::atomic<size_t> errors{0};
  auto t0 = steady_now();
  parallel(o, o.n, [&](size_t, http_client& c) {
    auto s = steady_now();
    auto r = c.call("GET", "/api/v1/tasks?limit=1");
    auto us =
        std::chrono::duration<double, std::milli>(steady_now() - s).count();
    if (r.status != 200) ++errors;
    std::lock_guard<std::mutex> g(mtx);
    lat.push_back(us);
  });
  auto secs = std::chrono::duration<double>(steady_now() - t0).count();
  json::object out{{"scenario", "api"},
                   {"requests", o.n},
                   {"errors", errors.load()},
                   {"requests_per_s", o.n / secs},
                   {"latency", to_json(summarize(lat))}};
  report(o, out);
  return errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  std::string scenario;
  CLI::App app{"aisched-load: load scenarios against an aisched node (loopback only)"};
  app.add_option("scenario", scenario, "burst | steady | throughput | idle | api")
      ->required()
      ->check(CLI::IsMember({"burst", "steady", "throughput", "idle", "api"}));
  app.add_option("--server", o.server, "node URL")->capture_default_str();
  app.add_option("--n", o.n,
                 "tasks (burst, steady, idle), most runs (throughput) or requests (api)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{100'000'000}));
  app.add_option("--duration", o.duration_s,
                 "seconds (steady, throughput; idle: rounded up to whole minutes)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--concurrency", o.concurrency, "parallel connections")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  app.add_option("--lead", o.lead_s, "seconds between creating and the due instant (burst)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 600.0));
  app.add_option("--due-ms", o.due_ms,
                 "throughput: each one-shot task is due this many ms after its create is sent "
                 "(a create committed after its instant would never fire)")
      ->capture_default_str()
      ->check(CLI::Range(10.0, 60'000.0));
  app.add_option("--backlog", o.backlog,
                 "throughput: most runs in flight (created, not yet done); with --due-ms it caps "
                 "the rate at about backlog / (due + pipeline), and the report says when it did")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{100'000}));
  app.add_option("--bulk", o.bulk,
                 "throughput: enqueue runs in batches of this many (POST /api/v1/tasks/{id}/runs, "
                 "one manual noop task per --concurrency thread) instead of one task per run")
      ->capture_default_str()
      ->check(CLI::Range(size_t{0}, size_t{1000}));
  app.add_flag("--per-minute", o.per_minute,
               "steady: cron `S * * * * *` with S = i % 60 instead of @every 1s");
  app.add_flag("--keep-tasks", o.keep_tasks,
               "burst, throughput: do not delete the tasks at the end (for a node thrown away "
               "after the run: a delete scans every task for dependents, so deleting many is slow)");
  std::string format = "text";
  app.add_option("-o,--output", format, "text | json")->check(CLI::IsMember({"text", "json"}));
  CLI11_PARSE(app, argc, argv);
  o.json_out = format == "json";
  if (!aisched::tools::is_loopback(o.server)) {
    std::cerr << "aisched-load: refusing a non-loopback server (" << o.server << ")\n";
    return 2;
  }
  if (scenario == "burst") return burst(o);
  if (scenario == "steady") return steady(o);
  if (scenario == "throughput") return throughput(o);
  if (scenario == "idle") return idle(o);
  return api(o);
}
