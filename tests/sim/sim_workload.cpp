// The seed's workload; see sim_workload.hpp.
#include "tests/sim/sim_workload.hpp"

#include <string>
#include <utility>

#include "common/splitmix.hpp"
#include "proto/time.hpp"

namespace aisched::sim {

uint64_t seed_stream::draw(uint64_t below) {
  state_ = splitmix64(state_);
  return below == 0 ? 0 : state_ % below;
}

namespace {

/// A task as the gateway would take it: a shell run (never run: the workers'
/// executor is worker::sim_executor), retried per the workload's policy.
/// Every missed slot fires when a new leader catches up (misfire fire_all),
/// so that every slot must have its run.
planned_task make_task(std::string name) {
  planned_task p;
  auto& t = p.def;
  t.name = std::move(name);
  t.kind = proto::task_kind::shell;
  t.command = "simulated";
  t.retry.kind = proto::retry_kind::fixed;
  t.retry.max_attempts = workload_max_attempts;
  t.retry.interval = workload_retry_interval;
  t.timeout = 60'000;
  t.misfire = proto::misfire_policy::fire_all;
  p.expect.name = t.name;
  p.expect.max_attempts = t.retry.max_attempts;
  return p;
}

planned_task every_task(std::string name, duration_ms every, unix_ms end_at) {
  auto p = make_task(std::move(name));
  p.def.schedule = "@every " + format_duration(every);
  p.def.end_at = end_at;
  p.expect.every = every;
  p.expect.end_at = end_at;
  return p;
}

/// A task of the draws added since: its catch-up bound is raised from the
/// default 10 so that every slot a 3 s task missed in an outage still fires
/// (10 of them are only 30 s).
planned_task fast_task(std::string name, duration_ms every, unix_ms end_at) {
  auto p = every_task(std::move(name), every, end_at);
  p.def.misfire_limit = 100;
  return p;
}

/// A cron task of the draws added since, its slots read in zone `tz`, with
/// the catch-up bound of fast_task.
planned_task cron_task(std::string name, std::string expr, std::string tz, unix_ms end_at) {
  auto p = make_task(std::move(name));
  p.def.schedule = p.expect.cron = std::move(expr);
  p.def.timezone = p.expect.timezone = std::move(tz);
  p.def.end_at = p.expect.end_at = end_at;
  p.def.misfire_limit = 100;
  return p;
}

/// The overlap tasks' last slot, after t0 (plan_workload).
constexpr duration_ms overlap_until = 150'000;

/// One of `xs`, drawn from `s`.
template <class T, size_t N>
T one_of(seed_stream& s, const T (&xs)[N]) {
  return xs[s.draw(N)];
}

/// `count` payloads, {"item":0} and on.
std::vector<std::string> payloads(int64_t count) {
  std::vector<std::string> out;
  for (int64_t k = 0; k < count; ++k) out.push_back("{\"item\":" + std::to_string(k) + "}");
  return out;
}

}  // namespace

planned_task one_shot_task(std::string name, unix_ms at) {
  auto p = make_task(std::move(name));
  p.def.at = p.expect.at = at;
  return p;
}

workload_plan plan_workload(seed_stream& first, seed_stream& more, unix_ms t0, unix_ms end_at) {
  workload_plan w;
  // -- the first draws: three to five @every tasks, one to three one-shots,
  // a bulk enqueue of three to eight runs five to 25 s in (before the faults).
  static constexpr duration_ms intervals[] = {5'000, 10'000, 15'000, 20'000, 30'000};
  auto periodic = first.between(3, 5);
  for (int64_t k = 0; k < periodic; ++k)
    w.tasks.push_back(
        every_task("every-" + std::to_string(k + 1), one_of(first, intervals), end_at));
  // The first keeps only its newest three finished runs (no draw: the seeds
  // keep their histories), so that run-history retention (actors/retention,
  // a sweep every 10 s on the leader) removes runs while everything else goes on.
  w.tasks.front().def.retention.keep_runs = w.tasks.front().expect.keep_runs = 3;
  auto once = first.between(1, 3);
  for (int64_t k = 0; k < once; ++k) {
    w.tasks.push_back(
        one_shot_task("once-" + std::to_string(k + 1), t0 + first.between(25, 220) * 1'000));
  }
  w.bulk.task = w.tasks.size();
  w.tasks.push_back(make_task("bulk"));
  w.bulk.at = t0 + first.between(5, 25) * 1'000;
  w.bulk.payloads = payloads(first.between(3, 8));

  // -- the draws added since, from `more` ------------------------------------
  // A pool of one or two runs, shared by one task more than it holds, so that
  // the tasks' slots that coincide wait for it. A run takes 0.1-4 s (2.05 s
  // on average, 2.3 s with its retries: scheduler_sim's sim_options), so the
  // pool is busy at most 0.57 (size 1: two tasks of 8 s or more) or 0.61
  // of the time (size 2: one task of 3-4 s, whose runs sometimes outlast
  // its interval, and two of 10 s or more): a backlog the faults build up
  // (a run lost with its worker holds its place until the loss is committed,
  // up to dead_after) drains within the settle period.
  w.pool.name = "sim-pool";
  w.pool.size = static_cast<uint32_t>(more.between(1, 2));
  static constexpr duration_ms slow_for_one[] = {8'000, 10'000, 12'000};
  static constexpr duration_ms fast[] = {3'000, 4'000};
  static constexpr duration_ms slow_for_two[] = {10'000, 12'000, 15'000};
  for (uint32_t k = 0; k <= w.pool.size; ++k) {
    auto every = w.pool.size == 1 ? one_of(more, slow_for_one)
                 : k == 0         ? one_of(more, fast)
                                  : one_of(more, slow_for_two);
    auto p = fast_task("pooled-" + std::to_string(k + 1), every, end_at);
    p.def.pool = p.expect.pool = w.pool.name;
    w.tasks.push_back(std::move(p));
  }
  // A task of max_concurrency 1 (overlap `allow`: every slot runs, one at a
  // time) at 3-5 s: busy at most 0.77 of the time, its runs often waiting for
  // the one before.
  static constexpr duration_ms serial[] = {3'000, 4'000, 5'000};
  auto s = fast_task("serial", one_of(more, serial), end_at);
  s.def.max_concurrency = s.expect.max_concurrency = 1;
  w.tasks.push_back(std::move(s));
  // One @every task paused 35-150 s in and resumed 15-60 s later (so before
  // end_at), across whatever faults come then.
  w.paused = static_cast<size_t>(more.draw(static_cast<uint64_t>(periodic)));
  w.pause_at = t0 + more.between(35'000, 150'000);
  w.resume_at = w.pause_at + more.between(15'000, 60'000);
  // One enqueued run cancelled 0-3 s after the enqueue: pending, dispatched,
  // running or (refused) finished by then, as it happens.
  w.cancel_pick = static_cast<size_t>(more.draw(8));
  w.cancel_after = more.between(0, 3'000);
  // A cron task of six fields in a zone: its slots are the trigger's own
  // reading of the expression in that zone (check_slots asks
  // trigger::schedule), e.g. "*/10 */2" fires in the odd UTC minutes in Eucla
  // and Kathmandu (+08:45, +05:45). 6-16 runs.
  static constexpr const char* crons[] = {"*/15 * * * * *", "0,20,45 * * * * *",
                                          "*/10 */2 * * * *", "5/20 1-59/2 * * * *"};
  static constexpr const char* zones[] = {"UTC", "Asia/Kathmandu", "Australia/Eucla",
                                          "America/St_Johns"};
  auto expr = one_of(more, crons);
  auto cron = w.tasks.size();
  w.tasks.push_back(cron_task("cron", expr, one_of(more, zones), end_at));
  // An @every 15 s task whose slots fire at their jittered instants, 5-14 s
  // after them: its runs start there, never a millisecond before. A new
  // leader elected inside a slot's jitter must wait for it (a4b2b7c): the
  // jitter is most of the period, so most leader changes come inside one.
  // 16 runs.
  auto j = fast_task("jittered", 15'000, end_at);
  j.def.jitter = j.expect.jitter = more.between(5'000, 14'000);
  w.tasks.push_back(std::move(j));
  // A DAG: a task without a schedule that depends on the cron task, so it
  // fires on each success of the cron task's latest run (its overlap is
  // `allow`: a success fires it even while its run before goes on).
  auto chained = make_task("chained");
  chained.upstreams.push_back(cron);
  w.tasks.push_back(std::move(chained));
  // Two @every 5 s tasks whose runs take 6-12 s, so each outlasts its period:
  // `skip` drops the slots due while one runs; `buffer_one` keeps one to fire
  // when the run ends and drops the next ones while it waits. Until 150 s in
  // (through two of the three faults' segments: about 14 and 17 runs, not
  // twice that); their last runs end long before the settle period does.
  for (auto [name, overlap] : {std::pair{"skip", proto::overlap_policy::skip},
                               std::pair{"buffered", proto::overlap_policy::buffer_one}}) {
    auto p = fast_task(name, 5'000, t0 + overlap_until);
    p.def.overlap = p.expect.overlap = overlap;
    p.min_duration = 6'000;
    p.max_duration = 12'000;
    w.tasks.push_back(std::move(p));
  }
  // A backlog on the pool: 10-20 runs of a queue task in it, enqueued at once
  // 3.5-5 s after the bulk enqueue (and its cancel), so before the faults.
  // Each takes 50-300 ms, so a slot of the pool frees every few steps while
  // the router notes why the rest wait (explain_waiting, every second) and
  // that note commits two 10 ms hops later: a run placed meanwhile must keep
  // its slots (ec39c14: it gave them back, and one run more than the pool
  // holds started; tests/sim/README.md, "Past bugs put back").
  w.backlog.task = w.tasks.size();
  auto queue = make_task("pooled-queue");
  queue.def.pool = queue.expect.pool = w.pool.name;
  queue.min_duration = 50;
  queue.max_duration = 300;
  w.tasks.push_back(std::move(queue));
  w.backlog.at = w.bulk.at + more.between(3'500, 5'000);
  w.backlog.payloads = payloads(more.between(10, 20));
  return w;
}

}  // namespace aisched::sim
